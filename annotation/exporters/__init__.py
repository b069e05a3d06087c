"""Exporters: a benchmark version written back in its public release's layout (SPEC.md).

`export_version(slug, label, out)` (in `base`) calls the registered benchmark's writer
(`annotation/benchmarks/<slug>/exporter.py`). Imported items are written back as they were read (`source.record`,
at `source.file`, media at `source.media`; see `annotation.importers`), so importing an export
gives the same items; curated items are written from their fields under the release's names.
Every benchmark also has the `hf` layout (`hf`): a Hugging Face dataset folder, Parquet files and a
dataset card (`hf_dataset`), that `datasets.load_dataset` opens.
"""

from annotation.exporters import hf  # noqa: F401  (registers the `hf` layout)
from annotation.exporters.base import ExportFailed, ExportResult, export_version, layouts_of

__all__ = ["ExportFailed", "ExportResult", "export_version", "layouts_of"]
