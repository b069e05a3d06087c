"""Imported proposals: raw model outputs made elsewhere (a large model run offline, a batch API), or
written by hand, brought in as a proposal set for people to curate.

Each row is `{"inputs": {...}, "raw_output": "..."}` with an optional `source_key` (the caller's
reference) and `params` (the generation parameters the outputs were made with, kept as given).
`import_proposals` makes one set of backend `imported` (`proposals.IMPORTED_BACKEND`) with the model
id given (the model that really wrote the outputs, or e.g. "written by hand") and one proposal per
parsed record: the kind's own strict parser reads each raw output exactly as it reads generated
output (ok, malformed with the reason, or empty; a kind that lists records gives one proposal per
record). No job made them and none can run on the set (`proposals.start_generation` refuses it).

NUL characters, which the database cannot keep, are removed from every text of a row and counted in its
proposals' `params` (`generation.model_text`). Bad rows (not JSON objects, unknown keys, inputs the kind
requires missing, a raw output that is not text) are refused with their row numbers
(`ImportRefused.problems`), and nothing is written.
Curators and admins only. `rows_from_jsonl` reads JSON Lines (one row per non-blank line; rows are
counted from 1, blank lines not counted).
"""

from __future__ import annotations

import json

from django.db import transaction

from config import json_text
from config.roles import ADMIN, CURATOR, has_role
from generation import model_text
from generation.models import Proposal, ProposalSet
from generation.proposals import IMPORTED_BACKEND, ProposalError, parsed_row, task_kind

ROW_KEYS = {"inputs", "raw_output", "source_key", "params"}
MAX_ROWS = 10_000
MAX_PROBLEMS = 50  # row problems reported at most (the count of the others is given)


class ImportRefused(ProposalError):
    """Rows that cannot be imported: `problems` is a list of (row number, what is wrong)."""

    def __init__(self, problems: list[tuple[int, str]]):
        self.problems = problems
        shown = [f"row {number}: {message}" for number, message in problems[:MAX_PROBLEMS]]
        more = len(problems) - len(shown)
        super().__init__("Nothing was imported. " + "; ".join(shown) + (f"; and {more} more." if more else "."))


def rows_from_jsonl(text: str) -> list:
    """The rows of a JSON Lines text, one per non-blank line; ImportRefused naming the rows that are not JSON."""
    rows, problems = [], []
    for number, line in enumerate((line for line in (text or "").splitlines() if line.strip()), start=1):
        try:
            rows.append(json_text.loads(line, keep_nul=True))  # cleaned and counted when stored
        except json.JSONDecodeError as exc:
            problems.append((number, f"not valid JSON ({exc.msg} at column {exc.colno})"))
            rows.append(None)
    if problems:
        raise ImportRefused(problems)
    if not rows:
        raise ProposalError("The file holds no rows: one JSON object per line.")
    return rows


def _row_problem(kind, row) -> str:
    """What is wrong with one row, or ""."""
    if not isinstance(row, dict):
        return "not a JSON object"
    unknown = sorted(str(key) for key in row if key not in ROW_KEYS)
    if unknown:
        return f"unknown key(s) {', '.join(unknown)}; a row has inputs, raw_output, source_key and params"
    if "inputs" not in row:
        return "no inputs"
    if "raw_output" not in row:
        return "no raw_output"
    if not isinstance(row["raw_output"], str):
        return "raw_output must be text (the model's output as it came)"
    if not isinstance(row.get("source_key", ""), str) or len(row.get("source_key", "")) > 200:
        return "source_key must be text of at most 200 characters"
    if not isinstance(row.get("params", {}), dict):
        return "params must be a JSON object"
    try:
        kind.check_inputs(row["inputs"])
    except ProposalError as exc:
        return str(exc)
    return ""


def import_proposals(task: str, rows, *, user, model_id: str, revision: str = "", name: str = "") -> ProposalSet:
    """A proposal set of backend `imported` holding the parsed records of `rows` (see the module docstring).
    ProposalError (ImportRefused for bad rows) says what is refused; nothing is written then."""
    if user is None or not user.pk or not has_role(user, CURATOR, ADMIN):
        raise ProposalError("Only curators and admins import proposals.")
    kind = task_kind(task)
    model_id = str(model_id or "").strip()
    if not model_id:
        raise ProposalError("Say who or what wrote the outputs (the model id, or e.g. \"written by hand\").")
    rows = list(rows)
    if not rows:
        raise ProposalError("There are no rows to import.")
    if len(rows) > MAX_ROWS:
        raise ProposalError(f"At most {MAX_ROWS} rows at a time; split the file.")
    problems = [(number, problem) for number, row in enumerate(rows, start=1)
                if (problem := _row_problem(kind, row))]
    if problems:
        raise ImportRefused(problems)
    revision = str(revision or "").strip()
    with transaction.atomic():
        proposal_set = ProposalSet.objects.create(
            name=(name or f"{kind.label}, imported from {model_id}")[:200], task_kind=kind.name,
            backend=IMPORTED_BACKEND, model_id=model_id, revision=revision, created_by=user)
        made = []
        for row in rows:
            row, removed = model_text.json_without_nul(row)  # NUL in any text, counted in the row's params
            for record_index, parsed in enumerate(kind.parse(row["raw_output"], row["inputs"])):
                made.append(Proposal(
                    proposal_set=proposal_set, task_kind=kind.name, source_key=row.get("source_key", ""),
                    inputs=row["inputs"], backend=IMPORTED_BACKEND, model_id=model_id, revision=revision,
                    **parsed_row(parsed, row["raw_output"], row.get("params", {}), removed,
                                 record_index=record_index)))
        Proposal.objects.bulk_create(made)
    return proposal_set
