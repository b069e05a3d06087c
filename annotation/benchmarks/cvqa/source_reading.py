"""Reading C-VQA source questions (SPEC §2, "Source"): an image, its original question and its answers,
from VQAv2-style JSON or a CSV, into `source` item specs. No database access.

VQAv2 JSON (`read_vqa`): the official `questions` file ({"questions": [{"image_id", "question",
"question_id"}]}) and `annotations` file ({"annotations": [{"question_id", "image_id", "answers":
[{"answer", …}], "multiple_choice_answer", "answer_type"}]}); images named like COCO's
`COCO_val2014_000000XXXXXX.jpg` (any name whose trailing number is the image id) under the image folder.

CSV (`read_csv`): columns `image` (a file name or path under the image folder, or a COCO image id),
`question`, `answer` (the majority answer) and/or `answers` (several answers split by `|` or `;`, or a
JSON list), optional `question_id` and `answer_type` (`ALIASES` lists the other accepted headers).

Type: answer_type `number` → numerical, `yes/no` → boolean; without an answer type it is inferred from the
majority answer (a whole number → numerical, yes/no → boolean). A question of any other type, or whose
majority answer does not fit its type, is skipped and reported, not imported. The majority answer is
`multiple_choice_answer` (VQA) or `answer` (CSV), else the most frequent of the answers (the first one on
a tie). A numerical answer is stored as digits.

External id: `source:<question_id>`, or `source:<image>:<hash of the question>` without a question id.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from annotation.importers.base import ItemSpec, MediaRef, Problems, relative, source_record, text
from annotation.importers.files import FileIndex, read_json, read_table
from config import json_text
from generation.media_probe import IMAGE_EXTENSIONS

FORMATS = ("vqa", "csv")
ROLE = "image"
ANSWER_TYPES = {"number": "numerical", "yes/no": "boolean"}
ALIASES = {
    "image": ("img", "img_path", "image_path", "image_file", "file_name", "filename", "image_id"),
    "question": ("query", "original_question"),
    "answer": ("multiple_choice_answer", "majority_answer"),
    "answers": ("answer_list", "all_answers"),
    "question_id": ("qid", "id"),
    "answer_type": ("type",),
}
_TRAILING_NUMBER = re.compile(r"(\d+)$")


@dataclass
class SourceBatch:
    """What one source file gave: item specs, the questions skipped (where, why) and the files read."""

    specs: list[ItemSpec] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)


class ImageIndex:
    """The images under a folder, found by relative path, file name or COCO image id (trailing number)."""

    def __init__(self, folder: Path):
        self.files = FileIndex(folder)
        self.by_id: dict[str, list[Path]] = {}
        for path in self.files.files:
            if path.suffix.lower() not in IMAGE_EXTENSIONS:
                continue
            match = _TRAILING_NUMBER.search(path.stem)
            if match:
                self.by_id.setdefault(str(int(match.group(1))), []).append(path)

    def find(self, name: str) -> list[Path]:
        name = name.replace("\\", "/").removeprefix("./")
        if name.isdigit():
            return self.by_id.get(str(int(name)), [])
        exact = self.files.by_relative_path(name)
        found = [exact] if exact is not None else (
            self.files.by_trailing_path(name) or self.files.by_name(Path(name).name))
        return [path for path in found if path.suffix.lower() in IMAGE_EXTENSIONS]


def majority(answers: list[str]) -> str:
    """The most frequent answer (the first one seen on a tie); '' for none."""
    counts = Counter(answers)
    return max(answers, key=lambda answer: (counts[answer], -answers.index(answer))) if answers else ""


def typed(answer: str, answer_type: str) -> tuple[str, str] | str:
    """(type, answer as stored) of a question, or why it is skipped."""
    answer = answer.strip().lower()
    kind = ANSWER_TYPES.get(answer_type.strip().lower()) if answer_type.strip() else None
    if answer_type.strip() and kind is None:
        return f"answer type {answer_type!r} is neither numerical ('number') nor boolean ('yes/no')"
    if kind is None:
        kind = "numerical" if answer.isdigit() else "boolean" if answer in ("yes", "no") else None
        if kind is None:
            return f"answer {answer!r} is neither a whole number nor yes/no"
    if kind == "numerical" and not answer.isdigit():
        return f"numerical question whose answer {answer!r} is not a whole number"
    if kind == "boolean" and answer not in ("yes", "no"):
        return f"yes/no question whose answer {answer!r} is not yes or no"
    return kind, str(int(answer)) if kind == "numerical" else answer


def _spec(where: str, file: str, record, images: ImageIndex, *, image: str, question: str,
          answers: list[str], answer: str, answer_type: str, question_id: str, batch: SourceBatch,
          problems: Problems) -> None:
    """Add the spec of one question to `batch`, or its reason to be skipped."""
    if not question:
        problems.add(where, "the question is empty")
        return
    answers = [a for a in (text(a) for a in answers) if a]
    answer = answer or majority(answers)
    if not answer:
        batch.skipped.append(f"{where}: no answer")
        return
    found = typed(answer, answer_type)
    if isinstance(found, str):
        batch.skipped.append(f"{where}: {found}")
        return
    kind, answer = found
    paths = images.find(image) if image else []
    if not paths:
        batch.skipped.append(f"{where}: image {image!r} not found under the image folder")
        return
    if len(paths) > 1:
        listed = ", ".join(relative(path, images.files.folder) for path in paths[:4])
        problems.add(where, f"image {image!r} matches several files ({listed})")
        return
    media = {ROLE: MediaRef(kind="image", path=paths[0], expected=image)}
    key = question_id or f"{Path(image).stem}:{hashlib.sha1(question.encode()).hexdigest()[:12]}"
    payload = {"kind": "source", "question": question, "answers": answers or [answer], "answer": answer,
               "type": kind, "source": source_record(file, record, root=images.files.folder, media=media)}
    if question_id:
        payload["question_id"] = question_id
    if image.isdigit():
        payload["image_id"] = str(int(image))
    batch.specs.append(ItemSpec(external_id=f"source:{key}", payload=payload, where=where, media=media))


def _objects(path: Path, root: Path, key: str, problems: Problems) -> list[dict] | None:
    data = read_json(path, root, problems)
    if data is None:
        return None
    name = relative(path, root)
    if not isinstance(data, dict) or not isinstance(data.get(key), list):
        problems.add(name, f"must be a JSON object with a list {key!r} (the VQAv2 {key} file)")
        return None
    bad = [index for index, entry in enumerate(data[key]) if not isinstance(entry, dict)]
    if bad:
        problems.add(f"{name}[{bad[0]}]", f"{key} entries must be JSON objects")
        return None
    return data[key]


def read_vqa(questions: Path, annotations: Path, images: ImageIndex, problems: Problems) -> SourceBatch:
    """Source specs from a VQAv2 questions file and its annotations file."""
    batch = SourceBatch(files=[questions.name, annotations.name])
    asked = _objects(questions, questions.parent, "questions", problems)
    answered = _objects(annotations, annotations.parent, "annotations", problems)
    if asked is None or answered is None:
        return batch
    by_id = {}
    for index, entry in enumerate(answered):
        qid = text(entry.get("question_id"))
        if not qid or not isinstance(entry.get("answers", []), list):
            problems.add(f"{annotations.name}[{index}]", "needs a question_id and a list of answers")
            continue
        by_id[qid] = entry
    for index, entry in enumerate(asked):
        where = f"{questions.name}[{index}]"
        qid, image = text(entry.get("question_id")), text(entry.get("image_id"))
        if not qid or not image:
            problems.add(where, "needs a question_id and an image_id")
            continue
        note = by_id.get(qid)
        if note is None:
            batch.skipped.append(f"{where}: question {qid} has no annotation")
            continue
        answers = [item.get("answer") if isinstance(item, dict) else item for item in note.get("answers") or []]
        _spec(where, questions.name, entry, images, image=image, question=text(entry.get("question")),
              answers=answers, answer=text(note.get("multiple_choice_answer")),
              answer_type=text(note.get("answer_type")), question_id=qid, batch=batch, problems=problems)
    return batch


def split_answers(value) -> list[str]:
    """The answers a CSV cell lists: a JSON list, else texts split by '|' or ';'."""
    raw = text(value)
    if raw.startswith("["):
        try:
            found = json_text.loads(raw)
        except json.JSONDecodeError:
            found = None
        if isinstance(found, list):
            return [text(answer) for answer in found]
    return [part.strip() for part in re.split(r"[|;]", raw) if part.strip()]


def read_csv(path: Path, images: ImageIndex, problems: Problems) -> SourceBatch:
    """Source specs from a CSV of image, question and answer(s)."""
    batch = SourceBatch(files=[path.name])
    table = read_table(path, path.parent, problems, aliases=ALIASES, required=("image", "question"))
    if table is None:
        return batch
    if "answer" not in table.names and "answers" not in table.names:
        problems.add(f"{table.file} line 1", "missing column 'answer' or 'answers'")
        return batch
    for row in table.rows:
        fields = row.fields
        _spec(row.where, table.file, row.record, images, image=text(fields.get("image")),
              question=text(fields.get("question")), answers=split_answers(fields.get("answers")),
              answer=text(fields.get("answer")), answer_type=text(fields.get("answer_type")),
              question_id=text(fields.get("question_id")), batch=batch, problems=problems)
    return batch
