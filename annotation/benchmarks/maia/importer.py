"""MAIA release: `data.json` / `data_20%.json`, or the `gen` and `mc` row layouts; videos found by number
(SPEC §5).

JSON layout: `data.json` (the whole set) or `data_20%.json` (the public part), anywhere under the
imported folder; with both there, data.json is imported and a note says so. A list of video records
`{video, link, question_categories_A: [...], question_categories_B: [...]}`, each question entry
`{category, question, answer[8], true_statement[8], false_statement[8]}` (statements optional, but
both or neither). External id `<video>:<category>` (`video1:SpazialeParziale_A`).

Row layout (the hosted copies): `gen` rows (`id, video_id, file_name, question_category, question,
answer1` … `answer8`) and optional `mc` rows (`id, video_id, file_name, question_category, pool_pos,
answer1, answer2, target`), as CSV, JSON Lines or a JSON list, in files named `gen.*` / `mc.*` or in
`gen/` / `mc/` folders, one file per split (`gen/train.csv` pairs with `mc/train.csv`). External id
`<split>:<id>` (`gen:17` for a single `gen.csv`, `train:17` for `gen/train.csv`). The mc rows of a
question (same split, video_id and question_category) are its statement pairs in `pool_pos` order;
`target` names the true statement of answer1/answer2, counted from 0 when the file has a target 0
and from 1 otherwise. Parquet files (the hub's own format) are refused with a hint to save them
as CSV or JSON Lines: reading them would need pyarrow.

Videos: `"video": "video1"` → number 1 → a video file anywhere under the imported folder whose name
ends with that number (`dataset/videos/1.mp4`, older `Videos/Video1.mp4`); in the row layout
`file_name` is tried first. A missing video is reported; with `--skip-missing-media` its questions
are left out.

Items: kind `question` with `video`, `category` (as released, with its _A/_B suffix), `question`,
`answers` (8), `true_statements` / `false_statements` (8 each, when the release has them) and the
video's `link` when it has one; the video under role `video`.

Types: `video`, `category` and `question` texts, `link` a text, `answer` and the statements lists
of 8 texts; in the row layout `id` and `video_id` texts or whole numbers, the category, question,
answers and statements texts, `pool_pos` and `target` whole numbers. Anything else is refused with
the file, the record (or row) and the field.

`source` (JSON layout): `index` = [video record index, list name, position], `record` = the question
entry, `parent` = the video record without its question lists. Row layout: the gen row as `record`
and its mc rows under `mc` (each `{file, line | index, record, columns}`).
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

from annotation.importers.base import (
    ItemSpec,
    MediaRef,
    Problems,
    at_record,
    first_duplicate,
    number,
    relative,
    source_record,
    text,
)
from annotation.importers.fields import FILLED_TEXT, ID, TEXT, check_fields
from annotation.importers.files import TABLE_SUFFIXES, FileIndex, find_one, read_json_list, read_table
from generation.media_probe import VIDEO_EXTENSIONS

DATA_FILES = ("data.json", "data_20%.json")
LIST_PREFIX = "question_categories"
N_ANSWERS = 8
ANSWERS = tuple(f"answer{n}" for n in range(1, N_ANSWERS + 1))
GEN_ALIASES = {"id": (), "video_id": ("video",), "file_name": ("filename", "video_file"),
               "question_category": ("category",), "question": (), **dict.fromkeys(ANSWERS, ())}
GEN_REQUIRED = ("id", "video_id", "question_category", "question", *ANSWERS)
MC_ALIASES = {"id": (), "video_id": ("video",), "file_name": ("filename", "video_file"),
              "question_category": ("category",), "pool_pos": (), "answer1": (), "answer2": (), "target": ()}
MC_REQUIRED = ("video_id", "question_category", "pool_pos", "answer1", "answer2", "target")
_TRAILING_NUMBER = re.compile(r"(\d+)$")
VIDEO_FIELDS = {"video": FILLED_TEXT, "link": TEXT}
ENTRY_FIELDS = {"category": FILLED_TEXT, "question": FILLED_TEXT}
GEN_FIELDS = {"id": ID, "video_id": ID, "file_name": TEXT, "question_category": FILLED_TEXT, "question": FILLED_TEXT,
              **dict.fromkeys(ANSWERS, FILLED_TEXT)}
MC_FIELDS = {"video_id": ID, "file_name": TEXT, "question_category": FILLED_TEXT, "answer1": FILLED_TEXT,
             "answer2": FILLED_TEXT}


def read(root: Path, problems: Problems) -> list[ItemSpec]:
    videos = _VideoFinder(root)
    found = {name: find_one(root, name, problems) for name in DATA_FILES}
    data_path = found["data.json"] or found["data_20%.json"]
    gen_files, mc_files = _table_files(root, "gen"), _table_files(root, "mc")
    if data_path is not None:
        if found["data.json"] and found["data_20%.json"]:
            problems.note("both data.json and data_20%.json found: data.json (the whole set) was read")
        if gen_files:
            problems.note(f"{data_path.name} found: the gen/mc row files were not read")
        return _read_json_layout(data_path, root, videos, problems)
    if gen_files:
        return _read_row_layout(gen_files, mc_files, root, videos, problems)
    parquet = [path for path in FileIndex(root).files if path.suffix.lower() == ".parquet"]
    if parquet:
        problems.add(relative(parquet[0], root), "Parquet files are not read: save the gen and mc rows as CSV or "
                                                 "JSON Lines (e.g. datasets' to_csv / to_json)")
    elif not problems:
        problems.add(str(root), "no data.json, data_20%.json or gen rows found (a MAIA release has "
                                "dataset/data.json and dataset/videos/<n>.mp4)")
    return []


class _VideoFinder:
    """Video files under the release folder by the number their name ends with."""

    def __init__(self, root: Path):
        self.root = root
        self.index = FileIndex(root)
        self.by_number: dict[int, list[Path]] = defaultdict(list)
        for path in self.index.files:
            match = _TRAILING_NUMBER.search(path.stem)
            if path.suffix.lower() in VIDEO_EXTENSIONS and match:
                self.by_number[int(match.group(1))].append(path)

    def ref(self, video: str, file_name: str = "") -> MediaRef | str:
        """The video `video` names (a MediaRef without path when absent), or a problem text."""
        if file_name:
            named = [path for path in self.index.by_name(Path(file_name).name)
                     if path.suffix.lower() in VIDEO_EXTENSIONS]
            if len(named) == 1:
                return MediaRef(kind="video", path=named[0], expected=file_name)
        match = _TRAILING_NUMBER.search(Path(video).stem) or _TRAILING_NUMBER.search(Path(file_name).stem)
        if match is None:
            return f"video {video!r} has no number to find its file by"
        found = self.by_number.get(int(match.group(1)), [])
        if len(found) > 1:
            listed = ", ".join(relative(path, self.root) for path in found[:4])
            return f"video {video!r}: several files carry number {int(match.group(1))} ({listed})"
        return MediaRef(kind="video", path=found[0] if found else None,
                        expected=file_name or f"videos/{int(match.group(1))}.mp4")


# --- JSON layout --------------------------------------------------------------------------------

def _read_json_layout(path: Path, root: Path, videos: _VideoFinder, problems: Problems) -> list[ItemSpec]:
    records = read_json_list(path, root, problems)
    file = relative(path, root)
    specs = []
    for index, record in enumerate(records or []):
        where = at_record(file, index)
        if not isinstance(record, dict):
            problems.add(where, f"malformed record: a JSON object is needed, not a {type(record).__name__}")
            continue
        video = text(record.get("video"))
        lists = [(name, value) for name, value in record.items() if name.startswith(LIST_PREFIX)]
        if not video:
            problems.add(where, "missing field 'video'")
        if not lists:
            problems.add(where, f"no {LIST_PREFIX}_A / {LIST_PREFIX}_B question lists")
        if not video or not lists or not check_fields(record, VIDEO_FIELDS, where, problems):
            continue
        ref = videos.ref(video)
        if isinstance(ref, str):
            problems.add(where, ref)
            continue
        parent = {name: value for name, value in record.items() if not name.startswith(LIST_PREFIX)}
        for name, entries in lists:
            if not isinstance(entries, list):
                problems.add(f"{where}.{name}", "must be a list of question entries")
                continue
            for position, entry in enumerate(entries):
                spec = _json_question(entry, f"{where}.{name}[{position}]", video, ref, parent, root, file,
                                      [index, name, position], problems)
                if spec is not None:
                    specs.append(spec)
    return specs


def _texts(value, length: int | None = None) -> list[str] | None:
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        return None
    return value if length is None or len(value) == length else None


def _json_question(entry, where, video, ref, parent, root, file, position, problems) -> ItemSpec | None:
    if not isinstance(entry, dict):
        problems.add(where, f"malformed entry: a JSON object is needed, not a {type(entry).__name__}")
        return None
    errors = [f"missing field '{name}'" for name in ("category", "question", "answer") if not entry.get(name)]
    typed = check_fields(entry, ENTRY_FIELDS, where, problems)
    answers = _texts(entry.get("answer"), N_ANSWERS) if "answer" in entry else None
    if entry.get("answer") and answers is None:
        errors.append(f"field 'answer' must list {N_ANSWERS} answers")
    statements = {}
    present = [name for name in ("true_statement", "false_statement") if entry.get(name) is not None]
    if len(present) == 1:
        errors.append(f"field '{present[0]}' comes without its counterpart")
    for name in present:
        statements[name + "s"] = _texts(entry[name], N_ANSWERS)
        if statements[name + "s"] is None:
            errors.append(f"field '{name}' must list {N_ANSWERS} statements, one per answer")
    for message in errors:
        problems.add(where, message)
    if errors or not typed:
        return None
    category = text(entry["category"])
    media = {"video": ref}
    payload = {"kind": "question", "video": video, "category": category, "question": text(entry["question"]),
               "answers": list(answers), **statements}
    if parent.get("link"):
        payload["link"] = parent["link"]
    source = source_record(file, entry, root=root, media=media, index=position)
    source["parent"] = parent
    payload["source"] = source
    return ItemSpec(external_id=f"{video}:{category}", payload=payload, where=where, media=media)


# --- Row layout ---------------------------------------------------------------------------------

def _table_files(root: Path, name: str) -> list[Path]:
    return [path for path in FileIndex(root).files if path.suffix.lower() in TABLE_SUFFIXES
            and (path.stem.lower() == name or path.parent.name.lower() == name)]


def _split(path: Path, name: str) -> str:
    """'train' for gen/train.csv, '' for a single gen.csv."""
    return path.stem if path.parent.name.lower() == name else ""


def _read_row_layout(gen_files, mc_files, root, videos, problems) -> list[ItemSpec]:
    specs, by_key = [], defaultdict(list)
    for path in gen_files:
        table = read_table(path, root, problems, aliases=GEN_ALIASES, required=GEN_REQUIRED)
        split = _split(path, "gen")
        for row in (table.rows if table else ()):
            spec = _gen_question(row, table, split, root, videos, problems)
            if spec is not None:
                specs.append(spec)
                by_key[(split, spec.payload["video"], spec.payload["category"])].append(spec)
    pairs = defaultdict(list)
    for path in mc_files:
        table = read_table(path, root, problems, aliases=MC_ALIASES, required=MC_REQUIRED)
        if table is not None:
            _read_mc(table, _split(path, "mc"), pairs, problems)
    for key, rows in pairs.items():
        questions = by_key.get(key, [])
        if len(questions) != 1:
            problem = "no gen question" if not questions else f"{len(questions)} gen questions"
            problems.add(rows[0][1].where, f"mc rows of video {key[1]!r}, category {key[2]!r} match {problem}")
            continue
        _attach_statements(questions[0], rows, problems)
    return specs


def _gen_question(row, table, split, root, videos, problems) -> ItemSpec | None:
    if not check_fields(row.fields, GEN_FIELDS, row.where, problems):
        return None
    values = {name: text(row.fields[name]) for name in GEN_REQUIRED}
    errors = [f"empty '{table.name(name)}'" for name, value in values.items() if not value]
    ref = videos.ref(values["video_id"], text(row.fields.get("file_name"))) if values["video_id"] else None
    if isinstance(ref, str):
        errors.append(ref)
    for message in errors:
        problems.add(row.where, message)
    if errors:
        return None
    media = {"video": ref}
    payload = {"kind": "question", "id": values["id"], "video": values["video_id"],
               "category": values["question_category"], "question": values["question"],
               "answers": [values[name] for name in ANSWERS],
               "source": source_record(table.file, row.record, root=root, media=media, columns=table.columns,
                                       **row.position)}
    return ItemSpec(external_id=f"{split or 'gen'}:{values['id']}", payload=payload, where=row.where, media=media)


def _read_mc(table, split: str, pairs: dict, problems: Problems) -> None:
    targets = {number(row.fields["target"]) for row in table.rows}
    base = 0 if 0 in targets else 1
    for row in table.rows:
        if not check_fields(row.fields, MC_FIELDS, row.where, problems):
            continue
        position, target = number(row.fields["pool_pos"]), number(row.fields["target"])
        errors = []
        if not isinstance(position, int):
            errors.append(f"pool_pos must be a whole number (got {row.fields['pool_pos']!r})")
        if target not in (base, base + 1):
            errors.append(f"target must be {base} or {base + 1}, naming answer1 or answer2 "
                          f"(got {row.fields['target']!r})")
        statements = [text(row.fields[name]) for name in ("answer1", "answer2")]
        if not all(statements):
            errors.append("empty statement in answer1 or answer2")
        for message in errors:
            problems.add(row.where, message)
        if errors:
            continue
        true_index = int(target) - base
        true, false = statements[true_index], statements[1 - true_index]
        key = (split, text(row.fields["video_id"]), text(row.fields["question_category"]))
        entry = {"file": table.file, **row.position, "record": row.record}
        if table.columns is not None:
            entry["columns"] = table.columns
        pairs[key].append((position, row, true, false, entry))


def _attach_statements(spec: ItemSpec, rows: list, problems: Problems) -> None:
    rows = sorted(rows, key=lambda entry: entry[0])
    positions: dict[int, str] = {}
    for position, row, *_rest in rows:
        repeated = first_duplicate(positions, position, row.where)
        if repeated:
            problems.add(row.where, f"pool_pos {position} repeats {repeated}")
            return
    if len(rows) != len(spec.payload["answers"]):
        problems.add(spec.where, f"{len(rows)} statement pairs in the mc rows; one per answer "
                                 f"({len(spec.payload['answers'])}) is needed")
        return
    spec.payload["true_statements"] = [true for _pos, _row, true, _false, _entry in rows]
    spec.payload["false_statements"] = [false for _pos, _row, _true, false, _entry in rows]
    spec.payload["source"]["mc"] = [entry for *_rest, entry in rows]
