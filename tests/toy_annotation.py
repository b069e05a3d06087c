"""ToyVQA as data: a sixth benchmark written outside `annotation/benchmarks/`, as a package there would be.

The release: `questions.jsonl` (anywhere under the imported folder), one JSON object a line with `id`,
`image` (the picture's path relative to the file's folder), `question` and `answer` ("yes" or "no",
any case), and the pictures it names. Items: kind `question`, external id = `id`, with `image`,
`question`, `answer` (lower case) and `source`; the picture under role `image`.

The export writes each `questions.jsonl` back where it was found (imported rows as they were read,
curated ones built from their fields, in a top-level `questions.jsonl`) and each picture where the
import found it (at its `image` path for curated items).

Importing this module registers the benchmark (`register`), as `discover` does for a package of
`annotation/benchmarks/`; `unregister(SLUG)` forgets it again.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from annotation.benchmarks.registry import BenchmarkDefinition, Payload, register
from annotation.benchmarks.types import NonEmptyString, one_of
from annotation.exporters.base import ReleaseWriter, copy_linked, fields_of, record_of, source_of
from annotation.importers.base import ItemSpec, MediaRef, Problems, first_duplicate, source_record, text
from annotation.importers.files import FileIndex, find_one, read_table

SLUG = "toyvqa"
DATA_FILE = "questions.jsonl"
REQUIRED = ("id", "image", "question", "answer")
ANSWERS = ("yes", "no")


class ToyVqaQuestion(Payload):
    """A yes/no question about one picture, with its answer."""

    kind: Literal["question"]
    image: NonEmptyString
    question: NonEmptyString
    answer: one_of(*ANSWERS)


# --- Importer -------------------------------------------------------------------------------------

def read(root: Path, problems: Problems) -> list[ItemSpec]:
    path = find_one(root, DATA_FILE, problems)
    if path is None:
        if not problems:
            problems.add(str(root), f"no {DATA_FILE} found (a ToyVQA release has {DATA_FILE} and its pictures)")
        return []
    table = read_table(path, root, problems, aliases=dict.fromkeys(REQUIRED, ()), required=REQUIRED)
    if table is None:
        return []
    pictures = FileIndex(path.parent)
    specs = []
    seen: dict[str, str] = {}
    for row in table.rows:
        values = {name: text(row.fields[name]) for name in REQUIRED}
        errors = [f"empty '{name}'" for name, value in values.items() if not value]
        repeated = first_duplicate(seen, values["id"], row.where) if values["id"] else None
        if repeated:
            errors.append(f"duplicate id {values['id']!r} (first at {repeated})")
        for message in errors:
            problems.add(row.where, message)
        if errors:
            continue
        media = {"image": MediaRef(kind="image", path=pictures.by_relative_path(values["image"]),
                                   expected=values["image"])}
        payload = {"kind": "question", "image": values["image"], "question": values["question"],
                   "answer": values["answer"].lower(),
                   "source": source_record(table.file, row.record, root=root, media=media, **row.position)}
        specs.append(ItemSpec(external_id=values["id"], payload=payload, where=row.where, media=media))
    return specs


# --- Exporter -------------------------------------------------------------------------------------

def write(items, writer: ReleaseWriter) -> None:
    files: dict[str, list] = {}
    for item in items:
        file = source_of(item).get("file") or DATA_FILE
        files.setdefault(file, []).append(
            record_of(item, lambda payload, item=item: {"id": item.external_id, **fields_of(payload)}))
        copy_linked(item, writer, "image", lambda ext, item=item: item.payload["image"])
    for file, records in files.items():
        writer.write_table(file, [], records)


@register
class ToyVqa(BenchmarkDefinition):
    slug = SLUG
    name = "ToyVQA"
    description = "Yes/no questions about pictures: a sixth benchmark defined outside the benchmark packages."
    payloads = (ToyVqaQuestion,)

    def read(self, root, problems):
        return read(root, problems)

    def write(self, items, writer):
        write(items, writer)
