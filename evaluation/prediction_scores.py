"""The gold, outcome and correctness of each prediction of a run, as the run's results score it: the columns
the predictions export (`evaluation.exports`) adds to its rows, looked up one run at a time.

- `gold`: the request's gold as the benchmark's request builder gives it (`runner.plan`), the value
  `manage.py export_requests` writes as `gold`, as JSON text.
- `outcome`: how the scorer scored the request (`evaluation.results` outcomes: correct, wrong, unparsed,
  empty, answered, missing), under the default parser with the run's stored judgments, as the results
  pages show it. The scorer reads right or wrong from one response per request: its first sample that
  did not fail (lowest `sample_index` without an error). Later samples count only where a metric uses
  every sample (BlackSwanSuite's explanations compared over all of them), never as right or wrong. So the
  prediction the scorer read carries its request's outcome, a request whose every sample failed carries
  `missing` on its first sample, and every other prediction (later samples, failed samples) has a null
  outcome: one outcome per answered request, as the results pages count them.
- `correct`: `results.right_or_wrong(outcome)`, the rule of the kits' `correct` column: true or false where
  the outcome is a plain right or wrong (an unparsed or empty answer is wrong), null otherwise (ratings,
  open answers no judge verdict calls right or wrong, missing answers, predictions without an outcome).

A run that cannot be scored (`RunResults.error`: its version's requests cannot be rebuilt, or its scorer
refuses the predictions) gets null gold, outcome and correct; so do predictions of requests the run's plan
does not hold. Errors other than the scorer's own propagate. `ScoredRows.note()` says how many rows have
no gold, and why, run by run.

Memory: `ScoredRows` keeps the lookup of the current run only (its requests' gold and outcomes, the sample
that carries each outcome); rows must come ordered by run, so each run is looked up once.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from django.db.models import Min, Q

from evaluation import results, runner
from evaluation.models import EvaluationRun

NOTED_RUNS = 5  # runs named in `ScoredRows.note`; more are counted


@dataclass
class RunScores:
    """One run's lookup: request id → its gold as JSON text, its outcome, and the sample that carries it."""

    run_id: int
    gold: dict[str, str] = field(default_factory=dict)
    outcomes: dict[str, str] = field(default_factory=dict)
    carriers: dict[str, int] = field(default_factory=dict)
    error: str = ""  # why the run has no gold, when it has none

    def values(self, request_id: str, sample_index: int) -> tuple[str | None, str | None, bool | None]:
        """(gold, outcome, correct) of one prediction: the outcome only on the sample that carries it."""
        gold = self.gold.get(request_id)
        if gold is None or self.carriers.get(request_id) != sample_index:
            return gold, None, None
        status = self.outcomes.get(request_id)
        return gold, status, results.right_or_wrong(status)


def run_scores(run: EvaluationRun) -> RunScores:
    """The lookup of a run; without gold (and `error` set) when the run cannot be scored."""
    scored = results.run_results(run)
    if not scored.ok:
        return RunScores(run.pk, error=scored.error)
    try:
        planned = runner.plan(run)
    except results.PLAN_ERRORS as exc:  # scored from the cache, but no longer plannable
        return RunScores(run.pk, error=f"The run's requests cannot be rebuilt: {exc}")
    gold = {entry.request.request_id: json.dumps(entry.request.gold, ensure_ascii=False) for entry in planned}
    outcomes = {request_id: found.status for request_id, found in scored.outcomes.items()}
    firsts = (run.predictions.values("request_id")
              .annotate(first_read=Min("sample_index", filter=Q(error="")), first=Min("sample_index"))
              .values_list("request_id", "first_read", "first"))
    carriers = {request_id: first if first_read is None else first_read for request_id, first_read, first in firsts}
    return RunScores(run.pk, gold, outcomes, carriers)


class ScoredRows:
    """Prediction rows (tuples, ordered by run) with gold, outcome and correct put in at `insert_at`; the
    other positions name where a row holds its run id, request id and sample index."""

    def __init__(self, rows: Iterable[tuple], *, run_at: int, request_at: int, sample_at: int, insert_at: int):
        self.rows = rows
        self.run_at, self.request_at, self.sample_at, self.insert_at = run_at, request_at, sample_at, insert_at
        self.without_gold: dict[int, list] = {}  # run id → [rows without gold, why]

    def __iter__(self) -> Iterator[tuple]:
        scores = None
        at = self.insert_at
        for row in self.rows:
            run_id = row[self.run_at]
            if scores is None or scores.run_id != run_id:
                run = EvaluationRun.objects.select_related("version__benchmark").filter(pk=run_id).first()
                scores = run_scores(run) if run is not None else RunScores(run_id, error="the run was deleted")
            values = scores.values(row[self.request_at], row[self.sample_at])
            if values[0] is None:
                self._count(scores)
            yield row[:at] + values + row[at:]

    def _count(self, scores: RunScores) -> None:
        entry = self.without_gold.setdefault(
            scores.run_id, [0, scores.error or "they answer requests the run's plan does not hold"])
        entry[0] += 1

    @property
    def rows_without_gold(self) -> int:
        return sum(count for count, _ in self.without_gold.values())

    def note(self) -> str:
        """How many rows have no gold and why, run by run ("" when every row has its gold)."""
        total = self.rows_without_gold
        if not total:
            return ""
        runs = sorted(self.without_gold.items())
        named = "; ".join(f"run {run_id}: {count} ({why})" for run_id, (count, why) in runs[:NOTED_RUNS])
        more = f"; and {len(runs) - NOTED_RUNS} more runs" if len(runs) > NOTED_RUNS else ""
        return (f"{total} prediction{'s' if total != 1 else ''} without gold, outcome or correct "
                f"(null): {named}{more}.")
