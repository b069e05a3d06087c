"""NL-EYE export: `test_set.csv` and `images/<sample_id>/{premise,hypothesis1,hypothesis2}.png`.

Rows go back to the CSV they came from with its header as written, images to where the import
found them. Curated items are written under the release's column names, with their images in
`images/<sample_id>/` beside the CSV.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import PurePosixPath

from annotation.benchmarks.nleye.importer import DATA_FILE, OPTIONAL, REQUIRED, ROLES
from annotation.exporters.base import ReleaseWriter, copy_linked, record_of, source_of


def _record(payload: dict) -> dict:
    record = {name: payload.get(name, "") for name in REQUIRED}
    record.update({name: payload[name] for name in OPTIONAL if name in payload})
    return {name: str(value) for name, value in record.items()}


def write(items, writer: ReleaseWriter) -> None:
    rows: dict[str, list[dict]] = defaultdict(list)
    columns: dict[str, list[str]] = defaultdict(list)
    for item in items:
        source = source_of(item)
        file = source.get("file") or DATA_FILE
        record = record_of(item, _record)
        rows[file].append(record)
        for column in source.get("columns") or record:
            if column not in columns[file]:
                columns[file].append(column)
        images = PurePosixPath(file).parent / "images" / str(item.payload.get("sample_id") or item.external_id)
        for role in ROLES:
            copy_linked(item, writer, role, lambda ext, role=role, images=images: str(images / f"{role}{ext}"))
    for file, records in rows.items():
        writer.write_table(file, columns[file], records)
