"""Importing benchmarks' public releases (SPEC.md, "Public release facts"): the shared machinery.

`import_release(slug, folder, label)` (in `release`) reads a release folder with the registered
benchmark's reader (`annotation/benchmarks/<slug>/importer.py`), checks it whole, and creates a frozen
`BenchmarkVersion` in one transaction, or raises `ImportFailed` listing every problem.
`annotation.exporters` writes a version back in the same layout.

Payloads. Each item's payload has its `kind` (see the benchmark's `payload` schema), the fields the evaluation
reads (the release's own field names where the platform uses them, e.g. BlackSwan's whole record;
`new_query` for C-VQA's `new query`), and `source`, the item's record as it stands in the release:

    "source": {
        "file": "C-VQA-Real/C-VQA-Real_questions.csv",  # the release file, relative to the imported folder
        "line": 7,                  # CSV / JSON Lines: the line the row starts on; JSON lists: "index"
        "record": {...},            # the row or record exactly as read
        "columns": [...],           # CSV only: the header as written, in order
        "media": {"image": "C-VQA-Real/images/x.jpg"},  # where each medium was found, same base
    }

Exports write `source.record` back as it was, at `source.file`, and copy each medium to
`source.media`; items without `source` (curated ones) are written from their fields under the
release's names. The benchmarks' importers document their extra entries (MAIA's video record and
statement rows, CVRR-ES captions) and their external ids.
"""

from annotation.importers.base import ImportFailed
from annotation.importers.release import ImportResult, import_release

__all__ = ["ImportFailed", "ImportResult", "import_release"]
