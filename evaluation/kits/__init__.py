"""Predictions in and out of the evaluation kits people already run: lmms-eval's per-sample JSON Lines
(`lmms_eval`) and VLMEvalKit's TSV tables (`vlmevalkit`), one module per kit over a small registry of
formats (`registry`).

- Out: a frozen version's requests (`manage.py export_requests --format NAME`) and a stored run's
  predictions with their gold and a `correct` column (`manage.py export_results --what predictions
  --format NAME --run ID`, and the export form of the results pages), from the rows of `rows`.
- In: a kit's output scored like the platform's own predictions file (`manage.py score --predictions FILE
  --predictions-format NAME`): `read` gives its rows and `joining.join` joins them to the requests, by
  request id or by position in the export order; `rows` and `joining.Joiner` do the same one row at a time,
  for files imported as a run (`evaluation.imported_runs`).
"""

from evaluation.kits import lmms_eval, vlmevalkit  # noqa: F401  (each registers its format)
from evaluation.kits.joining import Joined, Joiner, join
from evaluation.kits.registry import KitError, KitFormat, KitRead, KitRow, detect, get, labels, names
from evaluation.kits.rows import PredictionRow, RequestRow, run_rows, version_rows

__all__ = ["Joined", "Joiner", "KitError", "KitFormat", "KitRead", "KitRow", "PredictionRow", "RequestRow", "detect",
           "get", "join", "labels", "names", "run_rows", "version_rows"]
