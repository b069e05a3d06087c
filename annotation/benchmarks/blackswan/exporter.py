"""BlackSwanSuite export: `VAR_Data.json`, `mcq.json`, `yn.json` and `videos/<id>.mp4` (the importer's layout).

Video records go to the file they came from (by default `VAR_Data.json`), MCQ and Y/N rows to
`mcq.json` and `yn.json` beside it (written even when empty); each linked video is copied once.
Curated items are written as their payload without the platform's `kind` and `source`.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import PurePosixPath

from annotation.benchmarks.blackswan.importer import DATA_FILE, ROW_FILES
from annotation.exporters.base import ReleaseWriter, copy_linked, fields_of, record_of, source_of


def write(items, writer: ReleaseWriter) -> None:
    by_kind_file: dict[str, dict[str, list]] = {"video": defaultdict(list), "mcq": defaultdict(list),
                                                 "yn": defaultdict(list)}
    base = _data_folder(items)
    for item in items:
        kind = item.payload.get("kind")
        default = str(base / (DATA_FILE if kind == "video" else ROW_FILES[kind]))
        file = source_of(item).get("file") or default
        by_kind_file[kind][file].append(record_of(item, fields_of))
        copy_linked(item, writer, "video", lambda ext, item=item: str(base / "videos" / f"{item.payload['id']}{ext}"))
    by_kind_file["video"].setdefault(str(base / DATA_FILE), [])
    for kind, name in ROW_FILES.items():
        by_kind_file[kind].setdefault(str(base / name), [])
    for files in by_kind_file.values():
        for file, records in files.items():
            writer.write_json(file, records)


def _data_folder(items) -> PurePosixPath:
    """Where the release's VAR_Data.json lies (its top level unless the import found it deeper)."""
    for item in items:
        source = source_of(item)
        if item.payload.get("kind") == "video" and source.get("file"):
            return PurePosixPath(source["file"]).parent
    return PurePosixPath(".")
