"""NL-EYE export: `test_set.csv` and `images/<sample_id>/{premise,hypothesis1,hypothesis2}.png`.

Rows go back to the CSV they came from with its header as written, images to where the import
found them. Curated items (built in the platform, their images library images with any file name)
are written under the release's column names: `sample_id` (the item's external id where the payload
names none), the three scenes, `label`, the optional columns their payloads have and
`human_explanations` as a JSON list of texts; their images go to `images/<sample_id>/<role>` with the
extension of the image's format (`.png` for a PNG, whatever its library name), byte for byte, so
`import_benchmark` reads the export back into the same payloads and images.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import PurePosixPath

from annotation.benchmarks.nleye.importer import DATA_FILE, HUMAN_EXPLANATIONS, OPTIONAL, REQUIRED, ROLES
from annotation.exporters.base import ReleaseWriter, asset_for, media_path, record_of, source_of, suffix

FORMAT_SUFFIXES = {"png": ".png", "jpeg": ".jpg", "webp": ".webp", "gif": ".gif", "bmp": ".bmp", "tiff": ".tif"}


def _record(payload: dict, external_id: str) -> dict:
    record = {name: payload.get(name, "") for name in REQUIRED}
    record["sample_id"] = payload.get("sample_id") or external_id
    record.update({name: payload[name] for name in OPTIONAL if name in payload})
    record = {name: str(value) for name, value in record.items()}
    if payload.get(HUMAN_EXPLANATIONS):
        record[HUMAN_EXPLANATIONS] = json.dumps(list(payload[HUMAN_EXPLANATIONS]), ensure_ascii=False)
    return record


def image_suffix(asset) -> str:
    """The extension of the image's probed format (`.png` for a PNG), else of its name, else `.png`."""
    return FORMAT_SUFFIXES.get(str(getattr(asset, "format", "") or "").lower()) or suffix(asset, ".png")


def write(items, writer: ReleaseWriter) -> None:
    rows: dict[str, list[dict]] = defaultdict(list)
    columns: dict[str, list[str]] = defaultdict(list)
    for item in items:
        source = source_of(item)
        file = source.get("file") or DATA_FILE
        record = record_of(item, lambda payload, item=item: _record(payload, item.external_id))
        rows[file].append(record)
        for column in source.get("columns") or record:
            if column not in columns[file]:
                columns[file].append(column)
        images = PurePosixPath(file).parent / "images" / str(item.payload.get("sample_id") or item.external_id)
        for role in ROLES:
            asset = asset_for(item, role)
            if asset is not None:
                writer.copy_media(asset, media_path(item, role, str(images / f"{role}{image_suffix(asset)}")))
    for file, records in rows.items():
        writer.write_table(file, columns[file], records)
