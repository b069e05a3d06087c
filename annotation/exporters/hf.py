"""The `hf` layout, which every benchmark has beside its release's: a version as a Hugging Face dataset folder
that `datasets.load_dataset(folder)` opens and the Hub's viewer shows
(`export_benchmark <benchmark> --version <label> --layout hf <out>`, or the version page's download).

- One config per record kind (BlackSwanSuite's video records, MCQ and yes/no rows are three tables of
  different columns), each with one split, `test`. The first of the benchmark's kinds that the version
  holds is the default config: `load_dataset(folder)` opens it, `load_dataset(folder, "<kind>")` any.
- One row per item, in release order: `item_id` (the platform's id of the item), `external_id` (its stable
  id, the release's own where it was imported), `kind`, then the payload's fields in its schema's order
  (every field the schema declares, null where an item has none), then the fields beyond the schema
  that the items carry. Each field's type comes from its values (`hf_dataset.JsonType`: lists, structs
  with their nested types, numbers, texts); a field whose values share no type (a release id that is a
  number in one record and a text in another) is JSON text, and the card says so. The import's
  provenance (`source`: the release file, row and record as read) is left out: the release layouts
  write the release's own files.
- Media: each medium is copied once under `media/`, at the release's relative path where the item was
  imported, else at `media/<role>/<external id><suffix>`. One column per media role, named after the
  role, or `<role>_image` / `<role>_file` where the payload has a field of that name (NL-EYE's
  `premise_image`, MAIA's `video_file`). Images are `Image` features holding the image's bytes and its
  path relative to the card, so `load_dataset` decodes them wherever the folder is (a bare relative path
  would be read from the working directory); videos are that relative path as a string (the installed
  `datasets` decodes video only with torchcodec, which the platform does not need).
- README.md: the dataset card, with the version (label, state, checksum, items), each config's record
  kind, its description from the payload model and its columns with what the schema says of them.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from itertools import islice
from typing import get_args, get_origin

from django.utils import timezone

from annotation.benchmarks.types import expected_of_field
from annotation.exporters import hf_dataset
from annotation.exporters.base import (
    ExportFailed,
    ReleaseWriter,
    media_path,
    register_shared_layout,
    safe_name,
    source_of,
    suffix,
)

LAYOUT = "hf"
SPLIT = "test"
MEDIA_FOLDER = "media"
PLATFORM_COLUMNS = ("item_id", "external_id", "kind")
BATCH_ITEMS = 64  # items per record batch (images' bytes included)
ROW_BYTES = 1024  # a row's size without its images, as far as the shard count cares
NOTES = {"item_id": "the platform's id of the item", "external_id": "the item's stable id (the release's own)",
         "kind": "the record kind (this config)"}


@dataclass(frozen=True)
class MediaColumn:
    role: str
    name: str
    image: bool  # an `Image` feature; else the video's (or mixed media's) relative path


def kind_of(item) -> str:
    payload = item.payload if isinstance(item.payload, dict) else {}
    return str(payload.get("kind") or "items")


def fields_of(item) -> dict:
    """The payload's fields as exported: without `kind` (a column of its own) and the import's provenance."""
    payload = item.payload if isinstance(item.payload, dict) else {}
    provenance = bool(source_of(item))
    return {key: value for key, value in payload.items() if key != "kind" and not (key == "source" and provenance)}


def media_file(item, link) -> str:
    """Where a medium goes in the folder: under `media/`, at the release's path or the role's default."""
    asset = link.asset
    name = f"{safe_name(item.external_id)}{suffix(asset, '.png' if link.image_id else '.mp4')}"
    default = f"{safe_name(link.role)}/{name}"
    return f"{MEDIA_FOLDER}/{media_path(item, link.role, default)}"


def media_columns(items, taken: set[str]) -> list[MediaColumn]:
    roles: dict[str, bool] = {}
    for item in items:
        for link in item.media.all():
            roles[link.role] = roles.get(link.role, True) and link.image_id is not None
    columns = []
    for role, image in sorted(roles.items()):
        name = role if role not in taken else f"{role}_{'image' if image else 'file'}"
        if name in taken:
            raise ExportFailed(f"media of role {role!r} would be written to column {name!r}, which a field has")
        taken.add(name)
        columns.append(MediaColumn(role, name, image))
    return columns


def schema_note(field) -> str:
    """What the payload schema says a field is ("a list of 3 texts", "one of 1, 2"), for the card."""
    phrase = expected_of_field(field) or ""
    inner = [arg for arg in get_args(field.annotation) if arg is not type(None)] or [field.annotation]
    if phrase and not phrase.startswith("a list") and any(get_origin(arg) is list for arg in inner):
        return f"a list, each {phrase}"  # the phrase found was the items' (`list[NonEmptyString]`)
    return phrase


def _column_names(model, rows: list[dict]) -> list[str]:
    declared = [name for name in (model.model_fields if model is not None else {}) if name != "kind"]
    extra = []
    for fields in rows:
        extra += [name for name in fields if name not in declared and name not in extra]
    names = declared + extra
    clash = sorted(set(names) & set(PLATFORM_COLUMNS))
    if clash:
        raise ExportFailed(f"payload field(s) {', '.join(clash)} would clash with the platform's own columns")
    return names


class KindTable:
    """The rows of one record kind: their columns, each field's type, the media columns."""

    def __init__(self, benchmark, kind: str, items: list):
        import pyarrow as pa  # heavy: loaded only when a dataset is written

        self.kind, self.items = kind, items
        self.model = benchmark.kinds.get(kind)
        self.rows = [fields_of(item) for item in items]
        self.names = _column_names(self.model, self.rows)
        self.types = {}
        for name in self.names:
            learnt = hf_dataset.JsonType()
            learnt.add([fields.get(name) for fields in self.rows])
            self.types[name] = learnt.final()
        self.json_text = [name for name, data_type in self.types.items() if data_type is None]
        self.media = media_columns(items, set(self.names) | set(PLATFORM_COLUMNS))
        columns = [("item_id", pa.int64()), ("external_id", pa.string()), ("kind", pa.string())]
        columns += [(name, self.types[name] or pa.string()) for name in self.names]
        columns += [(column.name, pa.string()) for column in self.media]
        self.schema = hf_dataset.dataset_schema(columns, images=[c.name for c in self.media if c.image],
                                                json_text=self.json_text)

    def size_hint(self) -> int:
        images = {c.role for c in self.media if c.image}
        return ROW_BYTES * len(self.items) + sum(link.asset.size_bytes or 0 for item in self.items
                                                 for link in item.media.all() if link.role in images)

    def batches(self, writer: ReleaseWriter) -> Iterator:
        import pyarrow as pa  # heavy: loaded only when a dataset is written

        pairs = iter(zip(self.items, self.rows, strict=True))
        while chunk := list(islice(pairs, BATCH_ITEMS)):
            values = {"item_id": [item.pk for item, _ in chunk], "external_id": [item.external_id for item, _ in chunk],
                      "kind": [self.kind] * len(chunk)}
            for name in self.names:
                column = [fields.get(name) for _, fields in chunk]
                values[name] = column if self.types[name] is not None else [
                    None if value is None else hf_dataset.json_text(value) for value in column]
            for column in self.media:
                values[column.name] = [self._medium(item, column, writer) for item, _ in chunk]
            yield pa.RecordBatch.from_arrays([pa.array(values[name], type=self.schema.field(name).type)
                                              for name in self.schema.names], schema=self.schema)

    @staticmethod
    def _medium(item, column: MediaColumn, writer: ReleaseWriter):
        link = next((link for link in item.media.all() if link.role == column.role), None)
        if link is None:
            return None
        relative = media_file(item, link)
        writer.copy_media(link.asset, relative)
        return {"bytes": writer.path(relative).read_bytes(), "path": relative} if column.image else relative

    def notes(self) -> dict[str, str]:
        fields = self.model.model_fields if self.model is not None else {}
        notes = dict(NOTES)
        for name in self.names:
            said = [schema_note(fields[name])] if name in fields else ["not in the schema"]
            said.append(hf_dataset.JSON_TEXT_NOTE if name in self.json_text else "")
            notes[name] = "; ".join(part for part in said if part)
        for column in self.media:
            notes[column.name] = (f"the `{column.role}` image (its file is under `{MEDIA_FOLDER}/` too)" if column.image
                                  else f"path of the `{column.role}` medium, relative to this folder")
        return notes

    def description(self) -> str:
        text = (self.model.__doc__ or "").strip() if self.model is not None else ""
        return " ".join(text.split()) or "Items of this kind."


def write(version, benchmark, items: list, writer: ReleaseWriter) -> None:
    """Write the version's items (in release order) as a Hugging Face dataset folder with the writer."""
    order = list(benchmark.kinds)
    present = {kind_of(item) for item in items}
    kinds = [kind for kind in order if kind in present] + sorted(present - set(order))
    folder = hf_dataset.DatasetFolder(writer.folder)
    tables = []
    for kind in kinds:
        table = KindTable(benchmark, kind, [item for item in items if kind_of(item) == kind])
        folder.write_config(kind, table.schema, table.batches(writer), rows=len(table.items), split=SPLIT,
                            size_hint=table.size_hint(), default=not tables, json_text=table.json_text)
        tables.append(table)
    folder.write_card(pretty_name=f"{benchmark.name} {version.label}", body=card_body(version, benchmark, folder,
                                                                                      tables))
    writer.files.extend(folder.files)


def card_body(version, benchmark, folder: hf_dataset.DatasetFolder, tables: list[KindTable]) -> str:
    state = (f"frozen on {version.frozen_at:%Y-%m-%d} (checksum `{version.checksum}`)"
             if version.frozen and version.frozen_at else "a draft, not frozen")
    items = sum(config.rows for config in folder.configs)
    lines = [f"# {benchmark.name} · {version.label}", "", benchmark.description, "",
             f"Version `{version.label}` of {benchmark.name} (`{benchmark.slug}`), {state}: {items} items, "
             f"source: {version.get_source_display().lower()}. Exported from the benchmark platform "
             f"(`{hf_dataset.PROJECT}` {hf_dataset.platform_version()}) on {timezone.now():%Y-%m-%d %H:%M UTC}.", "",
             "## Configs", "",
             f"One config per record kind, each with the split `{SPLIT}`, one row per item in the release's order.", "",
             "| config | items | what |", "|---|---|---|"]
    several = len(folder.configs) > 1
    for config, table in zip(folder.configs, tables, strict=True):
        default = " (default)" if config.default and several else ""
        lines.append(f"| `{config.name}`{default} | {config.rows} | {table.description()} |")
    lines += ["", "## Loading", ""]
    if folder.configs:
        lines += [hf_dataset.loading_snippet(folder.configs), ""]
    media = [column for table in tables for column in table.media]
    notes = ["Struct fields that an item lacks read as null. The platform's record of where each imported item "
             "came from is not included (the release layouts write the release's own files)."]
    if any(column.image for column in media):
        notes.append(f"Images are decoded to PIL images: their bytes are in the Parquet files, and the same files "
                     f"are under `{MEDIA_FOLDER}/`.")
    if any(not column.image for column in media):
        notes.append(f"Videos are under `{MEDIA_FOLDER}/`; their columns hold the path relative to this folder.")
    lines.append(" ".join(notes))
    for config, table in zip(folder.configs, tables, strict=True):
        lines += ["", f"## Columns of `{config.name}`", "", hf_dataset.columns_table(config.schema, table.notes())]
        if config.json_text:
            lines += ["", "Kept as JSON text (read with `json.loads`): "
                      + ", ".join(f"`{name}`" for name in config.json_text) + "."]
    return "\n".join(lines)


register_shared_layout(LAYOUT, write)
