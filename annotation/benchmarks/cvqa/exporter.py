"""C-VQA export: the Real and Synthetic question CSVs with their images (the importer's layout).

Rows go back to the CSV they came from with its header as written; images to where the import
found them. Curated items go to `C-VQA/C-VQA-<Real|Synthetic>/C-VQA-<Real|Synthetic>_questions.csv`
under the release's column names, their image beside the CSV as `img_path`. Source questions (kind
`source`) are no release items: a version holding any is refused.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import PurePosixPath

from annotation.benchmarks.cvqa.importer import FILES
from annotation.exporters.base import ExportFailed, ReleaseWriter, copy_linked, record_of, source_of

RELEASE_COLUMNS = ["img_path", "query", "answer", "new query", "new answer", "type"]
DEFAULT_FOLDERS = {"real": "C-VQA/C-VQA-Real", "synthetic": "C-VQA/C-VQA-Synthetic"}


def _record(payload: dict) -> dict:
    return {"img_path": payload.get("img_path", ""), "query": payload["query"], "answer": payload["answer"],
            "new query": payload["new_query"], "new answer": payload["new_answer"], "type": payload["type"]}


def write(items, writer: ReleaseWriter) -> None:
    rows: dict[str, list[dict]] = defaultdict(list)
    columns: dict[str, list[str]] = defaultdict(list)
    held = [item.external_id for item in items if item.payload.get("kind") not in DEFAULT_FOLDERS]
    if held:
        raise ExportFailed(f"{len(held)} item(s) are source questions under curation, not release questions "
                           f"(first: {held[0]}): a sources version is never exported as a release")
    for item in items:
        subset = item.payload["kind"]
        source = source_of(item)
        file = source.get("file") or f"{DEFAULT_FOLDERS[subset]}/{FILES[subset]}"
        rows[file].append(record_of(item, _record))
        for column in source.get("columns") or RELEASE_COLUMNS:
            if column not in columns[file]:
                columns[file].append(column)
        folder = PurePosixPath(file).parent
        copy_linked(item, writer, "image", lambda ext, item=item, folder=folder: str(
            folder / (item.payload.get("img_path") or f"{item.external_id.replace(':', '_')}{ext}")))
    for file, records in rows.items():
        writer.write_table(file, columns[file], records)
