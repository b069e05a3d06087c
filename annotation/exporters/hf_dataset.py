"""A Hugging Face dataset folder: Parquet files under `data/` and a dataset card, `README.md`, so that
`datasets.load_dataset(folder)` opens it and the Hub's viewer shows it.

The card's YAML header lists the configs (`configs`: name, data files by split, the default one) and,
per config, `dataset_info` with its typed features and split sizes; its body, written by the caller,
says in words what the rows are. Used by the `hf` layout of benchmark versions
(`annotation.exporters.hf`) and the `hf` format of results exports (`evaluation.exports`).

JSON values get real Arrow types: `JsonType` infers one type per column from its values, batch after
batch (pyarrow's JSON reader infers each batch's type and the types are unified: whole numbers and
decimals give decimals, objects give structs holding every key seen, lists the unified type of their
items, a null fits anything; texts stay texts, even those that look like dates). A column whose values
cannot share one type (a number in one row, an object in another), or whose objects have no key, or so
many keys that they are a mapping rather than a record, stays JSON text, and the card says so. In a
struct, a key that a row lacks reads as null.

A config's rows go to shards named as the Hub names them, `data/<config>/<split>-00000-of-0000N.parquet`,
each of at most `SHARD_BYTES` of Arrow data as far as the caller's size hint tells.
pyarrow, datasets and huggingface_hub are imported where they are used: they are heavy, and most
processes that load this module never write a dataset.
"""

from __future__ import annotations

import io
import json
import math
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pyarrow as pa

CARD = "README.md"
DATA_FOLDER = "data"
SHARD_BYTES = 500 * 2**20  # the Hub's advice: Parquet files of a few hundred MB at most
MAX_STRUCT_FIELDS = 256  # an object with more keys is a mapping (ids → values), kept as JSON text
JSON_TEXT_NOTE = "JSON text: its values do not share one type (or are mappings, or empty objects)"
JSON_TYPED_NOTE = "from JSON: objects as structs, lists as lists; a key a row lacks reads as null"
PROJECT = "vlbench-platform"


def platform_version() -> str:
    """The installed platform package's version (what the card says exported the data)."""
    try:
        return metadata.version(PROJECT)
    except metadata.PackageNotFoundError:
        return "unknown"


# --- Types ------------------------------------------------------------------------------------------

def _unify(known: pa.DataType, seen: pa.DataType) -> pa.DataType:
    import pyarrow as pa  # heavy: see the module's docstring

    schemas = [pa.schema([pa.field("value", known)]), pa.schema([pa.field("value", seen)])]
    return pa.unify_schemas(schemas, promote_options="permissive").field("value").type


def storable(data_type: pa.DataType) -> bool:
    """Whether Parquet and the card can hold the type: no struct without fields, or with too many, or with
    an unnamed field, at any depth."""
    import pyarrow as pa  # heavy: see the module's docstring

    if pa.types.is_struct(data_type):
        fields = [data_type.field(i) for i in range(data_type.num_fields)]
        return 0 < len(fields) <= MAX_STRUCT_FIELDS and all(f.name and storable(f.type) for f in fields)
    if pa.types.is_list(data_type) or pa.types.is_large_list(data_type):
        return storable(data_type.value_type)
    return True


def _as_text(data_type: pa.DataType) -> pa.DataType:
    """The type with every date or time made a string: pyarrow's JSON reader reads ISO 8601 texts as timestamps,
    but a JSON text is a text."""
    import pyarrow as pa  # heavy: see the module's docstring

    if pa.types.is_temporal(data_type):
        return pa.string()
    if pa.types.is_struct(data_type):
        return pa.struct([data_type.field(i).with_type(_as_text(data_type.field(i).type))
                          for i in range(data_type.num_fields)])
    if pa.types.is_list(data_type):
        return pa.list_(data_type.value_field.with_type(_as_text(data_type.value_type)))
    return data_type


def _read_json(texts: list[str | None], data_type: pa.DataType | None) -> pa.Array:
    import pyarrow as pa  # heavy: see the module's docstring
    import pyarrow.json as pa_json

    if not texts:
        return pa.array([], type=data_type or pa.null())
    # one JSON object a line; a raw line break in JSON text can only be whitespace between tokens
    data = "\n".join('{"v": ' + ("null" if text is None else text.replace("\n", " ").replace("\r", " ")) + "}"
                     for text in texts).encode()
    options = pa_json.ReadOptions(block_size=max(len(data) + 1, 1 << 20))  # one block: no line straddles two
    parse = pa_json.ParseOptions(explicit_schema=pa.schema([("v", data_type)])) if data_type is not None else None
    return pa_json.read_json(io.BytesIO(data), read_options=options, parse_options=parse).column("v").combine_chunks()


def infer_json_type(texts: list[str | None]) -> pa.DataType:
    """The type pyarrow's JSON reader gives JSON texts (None for null), dates and times made texts again; raises
    pyarrow's error when the values share no type. Much faster than `json.loads` and `pyarrow.array` over
    Python objects."""
    return _as_text(_read_json(texts, None).type)


def read_json_texts(texts: list[str | None], data_type: pa.DataType) -> pa.Array:
    """JSON texts (None for null) as one Arrow array of `data_type` (a type `JsonType` learnt for them)."""
    return _read_json(texts, data_type)


class JsonType:
    """The one Arrow type the JSON values of a column share, learnt batch by batch (`add_texts` for JSON texts,
    `add` for Python values); `final()` is None when they share none, and the column is then written as JSON
    text."""

    def __init__(self):
        import pyarrow as pa  # heavy: see the module's docstring

        self.type: pa.DataType | None = pa.null()

    def add_texts(self, texts: list[str | None]) -> None:
        import pyarrow as pa  # heavy: see the module's docstring

        if self.type is None:
            return
        try:
            self.type = _unify(self.type, infer_json_type(texts))
        except (pa.ArrowException, OverflowError, TypeError, ValueError):
            self.type = None  # e.g. a number in one row and an object in another

    def add(self, values: list) -> None:
        self.add_texts([None if value is None else json_text(value) for value in values])

    def final(self) -> pa.DataType | None:
        return self.type if self.type is not None and storable(self.type) else None


def json_text(value) -> str:
    """A value of a column kept as JSON text."""
    return json.dumps(value, ensure_ascii=False)


def dataset_schema(columns: list[tuple[str, pa.DataType]], *, images: Iterable[str] = (),
                   json_text: Iterable[str] = ()) -> pa.Schema:
    """The Arrow schema of a config, its `datasets` features in the schema's metadata (so the Parquet files
    tell `datasets` the features too): the columns named in `images` are `Image` features (structs of the
    image's bytes and its path), those in `json_text` strings marked `content: json`."""
    import datasets  # heavy: see the module's docstring
    import pyarrow as pa

    images, json_text = set(images), set(json_text)
    features = datasets.Features({
        name: datasets.Image() if name in images
        else datasets.Value("string") if name in json_text
        else datasets.Features.from_arrow_schema(pa.schema([pa.field(name, data_type)]))[name]
        for name, data_type in columns})
    schema = features.arrow_schema
    for index, name in enumerate(schema.names):
        if name in json_text:
            schema = schema.set(index, schema.field(index).with_metadata({"content": "json"}))
    return schema


def type_text(schema: pa.Schema, name: str, limit: int = 160) -> str:
    """A column's type in words for the card: `image`, or the Arrow type (shortened when long)."""
    import datasets  # heavy: see the module's docstring

    feature = datasets.Features.from_arrow_schema(schema)[name]
    if isinstance(feature, datasets.Image):
        return "image"
    text = str(schema.field(name).type).replace("list<item: ", "list<")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def columns_table(schema: pa.Schema, notes: dict[str, str] | None = None) -> str:
    """The card's Markdown table of a config's columns: name, type and a note."""
    notes = notes or {}
    lines = ["| column | type | note |", "|---|---|---|"]
    for name in schema.names:
        note = notes.get(name, "").replace("|", "\\|")
        lines.append(f"| `{name}` | `{type_text(schema, name)}` | {note} |")
    return "\n".join(lines)


# --- The folder -------------------------------------------------------------------------------------

@dataclass
class WrittenConfig:
    name: str
    split: str
    schema: pa.Schema
    rows: int
    files: list[str]
    arrow_bytes: int
    file_bytes: int
    default: bool = False
    json_text: list[str] = field(default_factory=list)

    @property
    def pattern(self) -> str:
        return f"{DATA_FOLDER}/{self.name}/{self.split}-*.parquet"


class DatasetFolder:
    """The Parquet files and the card of one dataset, all inside `root` (an existing folder)."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self.configs: list[WrittenConfig] = []

    @property
    def files(self) -> list[str]:
        return [name for config in self.configs for name in config.files] + (
            [CARD] if (self.root / CARD).exists() else [])

    def write_config(self, name: str, schema: pa.Schema, batches: Iterable[pa.RecordBatch], *, rows: int,
                     split: str = "train", size_hint: int = 0, default: bool = False,
                     json_text: Iterable[str] = ()) -> WrittenConfig:
        """Write `rows` rows (record batches of `schema`'s types) as config `name`, split `split`, in as many
        shards as `size_hint` (the rows' size in bytes, as far as known) asks for."""
        import pyarrow as pa  # heavy: see the module's docstring
        import pyarrow.parquet as pq

        if any(config.name == name for config in self.configs):
            raise ValueError(f"config {name!r} is written already")
        shards = max(1, min(rows, math.ceil(size_hint / SHARD_BYTES))) if rows else 1
        per_shard = max(1, math.ceil(rows / shards))
        shards = max(1, math.ceil(rows / per_shard))  # e.g. 9 rows asked in 4 shards go in 3 of 3
        files = [f"{DATA_FOLDER}/{name}/{split}-{index:05d}-of-{shards:05d}.parquet" for index in range(shards)]
        (self.root / DATA_FOLDER / name).mkdir(parents=True, exist_ok=True)
        written = arrow_bytes = in_shard = 0
        shard, writer = -1, None
        try:
            for batch in batches:
                batch = pa.RecordBatch.from_arrays(batch.columns, schema=schema)
                arrow_bytes += batch.nbytes
                start = 0
                while start < batch.num_rows:
                    if writer is None or (in_shard >= per_shard and shard + 1 < shards):
                        if writer is not None:
                            writer.close()
                        shard, in_shard = shard + 1, 0
                        writer = pq.ParquetWriter(self.root / files[shard], schema, compression="zstd")
                    last = shard + 1 == shards  # the last shard takes whatever is left
                    take = batch.num_rows - start if last else min(batch.num_rows - start, per_shard - in_shard)
                    writer.write_batch(batch.slice(start, take))
                    start, in_shard, written = start + take, in_shard + take, written + take
            if writer is None:  # no row: one empty file, so the split exists with its features
                shard, writer = 0, pq.ParquetWriter(self.root / files[0], schema, compression="zstd")
        finally:
            if writer is not None:
                writer.close()
        if written != rows or shard + 1 != shards:
            raise ValueError(f"config {name!r}: {written} rows were written, {rows} announced")
        config = WrittenConfig(name, split, schema, rows, files, arrow_bytes,
                               sum(os.path.getsize(self.root / file) for file in files), default, list(json_text))
        self.configs.append(config)
        return config

    def write_card(self, *, pretty_name: str, body: str) -> None:
        """README.md: the YAML header (`pretty_name`, `configs`, `dataset_info`) and the body in Markdown."""
        import datasets  # heavy: see the module's docstring
        from datasets.info import DatasetInfosDict
        from datasets.utils.metadata import MetadataConfigs
        from huggingface_hub import DatasetCard, DatasetCardData

        card_data = DatasetCardData(pretty_name=pretty_name)
        DatasetInfosDict({
            config.name: datasets.DatasetInfo(
                features=datasets.Features.from_arrow_schema(config.schema), config_name=config.name,
                splits=datasets.SplitDict({config.split: datasets.SplitInfo(
                    name=config.split, num_bytes=config.arrow_bytes, num_examples=config.rows)}),
                download_size=config.file_bytes, dataset_size=config.arrow_bytes)
            for config in self.configs}).to_dataset_card_data(card_data)
        MetadataConfigs({
            config.name: {"data_files": [{"split": config.split, "path": config.pattern}],
                          **({"default": True} if config.default else {})}
            for config in self.configs}).to_dataset_card_data(card_data)
        DatasetCard(f"---\n{card_data.to_yaml()}\n---\n\n{body.strip()}\n").save(self.root / CARD)


def loading_snippet(configs: list[WrittenConfig]) -> str:
    """How to open the configs with `datasets`, for the card: the default one without its name, the others by name."""
    default = next((config for config in configs if config.default), configs[0])
    lines = ["```python", "from datasets import load_dataset", "",
             f'rows = load_dataset("path/to/this/folder", split="{default.split}")'
             + (f"  # config `{default.name}`, the default" if len(configs) > 1 else "")]
    lines += [f'{config.name} = load_dataset("path/to/this/folder", "{config.name}", split="{config.split}")'
              for config in configs if config is not default]
    return "\n".join([*lines, "```"])
