"""Writing a benchmark version back in its release layout: the output folder, files, media, item order.

`export_version(slug, label, out)` builds the export in a new folder beside `out` and renames it to
`out` once everything is written, so `out` holds either the whole export or nothing; an `out` that
exists and is not empty is refused. The registered benchmark's `write` (`annotation/benchmarks/<slug>/exporter.py`)
receives the version's items in release order and a `ReleaseWriter`, which writes JSON, CSV and
JSON Lines files and copies each medium once from the library to its place in the release.
`layout` asks for one of the benchmark's other release layouts (its `layouts`), which the writer
reads as `writer.layout`; without it ("") the writer picks the layout itself. Layouts every benchmark
has beside its release's (`hf`, a Hugging Face dataset folder: `annotation.exporters.hf`) register
their writer with `register_shared_layout`; `layouts_of(benchmark)` lists them all.

Helpers for the writers: `record_of` (the item's release record: `source.record` when the item was
imported, else built from its fields), `media_path` (where the medium was found on import, else a
default), `asset_for` (the linked Video or Image of a role).
"""

from __future__ import annotations

import csv
import json
import re
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from annotation.benchmarks import registry
from annotation.models import BenchmarkItem, BenchmarkVersion

_SHARED_LAYOUTS: dict[str, Callable] = {}  # name → write(version, benchmark, items, writer)


def register_shared_layout(name: str, write: Callable) -> None:
    """A layout every benchmark has: `write(version, benchmark, items, writer)` writes the items (in release
    order) with the `ReleaseWriter`."""
    _SHARED_LAYOUTS[name] = write


def layouts_of(benchmark: registry.BenchmarkDefinition) -> tuple[str, ...]:
    """The layouts `export_version` writes for a benchmark besides its default one: its other release layouts,
    then the shared ones."""
    return (*benchmark.layouts, *sorted(_SHARED_LAYOUTS))


class ExportFailed(Exception):
    """The version cannot be exported; nothing was left at the output path."""


@dataclass
class ExportResult:
    version: BenchmarkVersion
    folder: Path
    items: int
    files: list[str]
    media: int


class ReleaseWriter:
    """Files of one export, all inside `folder`."""

    def __init__(self, folder: Path, layout: str = ""):
        self.folder = folder
        self.layout = layout
        self.files: list[str] = []
        self.copied: dict[str, str] = {}  # relative path → checksum of the asset copied there

    def path(self, relative: str) -> Path:
        parts = PurePosixPath(relative).parts
        if not parts or PurePosixPath(relative).is_absolute() or ".." in parts:
            raise ExportFailed(f"refusing to write outside the export folder: {relative!r}")
        target = self.folder.joinpath(*parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        return target

    def write_json(self, relative: str, data) -> None:
        with self.path(relative).open("w", encoding="utf-8") as handle:
            json.dump(data, handle, ensure_ascii=False, indent=2)
            handle.write("\n")
        self.files.append(relative)

    def write_table(self, relative: str, columns: list[str], records: list[dict]) -> None:
        """Rows as CSV (in `columns` order), JSON Lines or a JSON list, after the file's extension."""
        suffix = PurePosixPath(relative).suffix.lower()
        if suffix == ".json":
            self.write_json(relative, records)
            return
        with self.path(relative).open("w", encoding="utf-8", newline="") as handle:
            if suffix == ".jsonl":
                for record in records:
                    handle.write(json.dumps(record, ensure_ascii=False) + "\n")
            else:
                writer = csv.DictWriter(handle, fieldnames=columns, lineterminator="\n", extrasaction="raise")
                writer.writeheader()
                writer.writerows({column: record.get(column, "") for column in columns} for record in records)
        self.files.append(relative)

    def copy_media(self, asset, relative: str) -> None:
        """Copy an asset's file to `relative` once; two different assets for one path is an error."""
        if relative in self.copied:
            if self.copied[relative] != asset.checksum:
                raise ExportFailed(f"two different media would be written to {relative}")
            return
        with asset.file.open("rb") as source, self.path(relative).open("wb") as target:
            shutil.copyfileobj(source, target)
        self.copied[relative] = asset.checksum


def benchmark_writer(slug: str) -> registry.BenchmarkDefinition:
    """The registered benchmark that writes its release layout."""
    try:
        return registry.get(slug)
    except registry.UnknownBenchmark as exc:
        raise ExportFailed(str(exc)) from None


def export_version(slug: str, label: str, out: Path, *, layout: str = "") -> ExportResult:
    """Write version `label` of benchmark `slug` into the new folder `out` in the release's layout
    (`layout`, one of `layouts_of(benchmark)`, when asked for)."""
    benchmark = benchmark_writer(slug)
    if layout and layout not in layouts_of(benchmark):
        raise ExportFailed(f"{slug} has no layout {layout!r}; its layouts: {', '.join(layouts_of(benchmark))}")
    version = BenchmarkVersion.objects.filter(benchmark__slug=slug, label=label).first()
    if version is None:
        raise ExportFailed(f"{slug} has no version {label!r}")
    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ExportFailed(f"{out} already exists and is not an empty folder; choose a new output folder")
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=out.parent))
    try:
        items = sorted(version.items.prefetch_related("media__video", "media__image"), key=release_order)
        release = ReleaseWriter(staging, layout)
        if layout in _SHARED_LAYOUTS:
            _SHARED_LAYOUTS[layout](version, benchmark, items, release)
        else:
            benchmark.write(items, release)
        if out.exists():
            out.rmdir()
        staging.rename(out)
    except OSError as exc:
        shutil.rmtree(staging, ignore_errors=True)
        raise ExportFailed(f"the export could not be written ({exc})") from exc
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return ExportResult(version=version, folder=out, items=len(items), files=release.files, media=len(release.copied))


# --- Helpers for the writers ----------------------------------------------------------------------

def source_of(item: BenchmarkItem) -> dict:
    source = item.payload.get("source")
    return source if isinstance(source, dict) and "record" in source else {}


def release_order(item: BenchmarkItem):
    """Imported items in file and row order, then the others by id."""
    source = source_of(item)
    if source:
        return (0, source.get("file", ""), position_key(source), item.external_id)
    return (1, "", (), item.external_id)


def position_key(source: dict):
    """A sortable position within its file: the line, or the index (MAIA's is a list)."""
    position = source.get("line", source.get("index", 0))
    return tuple(position) if isinstance(position, list) else (position,)


def record_of(item: BenchmarkItem, build: Callable[[dict], dict]):
    """The release's record of the item: as imported, or built from its fields."""
    source = source_of(item)
    return source["record"] if source else build(item.payload)


def fields_of(payload: dict, *skip: str) -> dict:
    """The payload without the platform's own keys (and any others named)."""
    return {key: value for key, value in payload.items() if key not in ("kind", "source", *skip)}


def asset_for(item: BenchmarkItem, role: str):
    for link in item.media.all():
        if link.role == role:
            return link.asset
    return None


def media_path(item: BenchmarkItem, role: str, default: str) -> str:
    return source_of(item).get("media", {}).get(role) or default


def safe_name(name: str, fallback: str = "item") -> str:
    """`name` as a portable file name: runs of anything but letters, digits, `.`, `_` and `-` become `_`, without
    leading or trailing dots and underscores; `fallback` when nothing is left."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or fallback


def suffix(asset, fallback: str) -> str:
    return PurePosixPath(asset.original_name or asset.file.name).suffix.lower() or fallback


def copy_linked(item: BenchmarkItem, writer: ReleaseWriter, role: str, default: Callable[[str], str]) -> None:
    """Copy the item's medium of `role` to where the release keeps it (`default(suffix)` for curated items)."""
    asset = asset_for(item, role)
    if asset is not None:
        writer.copy_media(asset, media_path(item, role, default(suffix(asset, ".mp4" if role == "video" else ".png"))))
