"""Reading Hugging Face dataset folders back in tests: `datasets.load_dataset` with its cache in the test's
temporary folder, and the checks every exported dataset card must pass (its YAML features parse, its
configs name existing Parquet files whose schema is the card's features, its split sizes are right)."""

from __future__ import annotations

from pathlib import Path

import datasets
import pyarrow.parquet as pq
from datasets.info import DatasetInfosDict
from datasets.utils.metadata import MetadataConfigs
from huggingface_hub import DatasetCard


def load(folder: Path, name: str | None = None, *, cache: Path, split: str | None = None):
    """`datasets.load_dataset(str(folder))` (a config's `name` where the folder has several), cached under `cache`."""
    return datasets.load_dataset(str(folder), name, split=split, cache_dir=str(cache))


def plain(features: datasets.Features) -> datasets.Features:
    """The features as bare Arrow types give them (no `datasets` metadata), to compare with a Parquet file's."""
    return datasets.Features.from_arrow_schema(features.arrow_schema.remove_metadata())


def checked_card(folder: Path) -> dict:
    """The card's configs, each {features, split, files, rows, default}, after checking that its YAML features
    parse, that each config's data files exist, hold the card's features (as Arrow types and in their own
    metadata) and as many rows as the card says."""
    card = DatasetCard.load(Path(folder) / "README.md")
    infos = DatasetInfosDict.from_dataset_card_data(card.data)
    configs = MetadataConfigs.from_dataset_card_data(card.data)
    assert set(infos) == set(configs) and configs
    if len(configs) > 1:
        assert configs.get_default_config_name() in configs
    found = {}
    for name, config in configs.items():
        features = infos[name].features
        assert isinstance(features, datasets.Features)
        assert datasets.Features.from_dict(features.to_dict()) == features
        (data_files,) = config["data_files"]
        files = sorted(Path(folder).glob(data_files["path"]))
        assert files, f"config {name}: no file matches {data_files['path']}"
        for file in files:
            schema = pq.read_schema(file)
            assert datasets.Features.from_arrow_schema(schema.remove_metadata()) == plain(features), file
            assert datasets.Features.from_arrow_schema(schema) == features, file
        rows = sum(pq.read_metadata(file).num_rows for file in files)
        assert infos[name].splits[data_files["split"]].num_examples == rows
        found[name] = {"features": features, "split": data_files["split"], "files": files, "rows": rows,
                       "default": bool(config.get("default")), "text": card.text}
    return found


def json_text_columns(file: Path) -> set[str]:
    """The columns a Parquet file keeps as JSON text (field metadata `content: json`)."""
    schema = pq.read_schema(file)
    return {field.name for field in schema if (field.metadata or {}).get(b"content") == b"json"}


def without_nulls(value):
    """A JSON value with null-valued keys dropped at every depth: in a struct a key a row lacks reads as null,
    so `{"a": 1}` and `{"a": 1, "b": None}` are the same row."""
    if isinstance(value, dict):
        return {key: without_nulls(inner) for key, inner in value.items() if inner is not None}
    if isinstance(value, list):
        return [without_nulls(inner) for inner in value]
    return value
