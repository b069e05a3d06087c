"""Exporters: a benchmark version written back in its public release's layout (SPEC.md).

`export_version(slug, label, out)` (in `base`) calls the registered benchmark's writer
(`annotation/benchmarks/<slug>/exporter.py`). Imported items are written back as they were read (`source.record`,
at `source.file`, media at `source.media`; see `annotation.importers`), so importing an export
gives the same items; curated items are written from their fields under the release's names.
"""

from annotation.exporters.base import ExportFailed, ExportResult, export_version

__all__ = ["ExportFailed", "ExportResult", "export_version"]
