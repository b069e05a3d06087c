"""Failure analysis: people tag a run's wrong predictions with the benchmark's failure factors
(`Benchmark.failure_factors`, e.g. NL-EYE §6) and read each model's distribution of factors.

- Which predictions are tagged: the first response of every request of the benchmark's
  `failure_variants` (all variants when it names none) whose outcome is `wrong` (answered, read, and
  not the gold; `evaluation.results`). Unread and missing answers have no reasoning to analyse.
- A prediction has one current tag, its latest `FailureTag` row (insert-only: tagging again, or
  clearing with an empty factor, adds a row, so every earlier tag stays as history). One tag per
  prediction, not per person: the analysis gives each wrong prediction one factor, as Figure 7 does.
- `distribution(run)`: per factor the count of current tags and its share of the tagged predictions,
  with `wrong` (how many can be tagged) and `tagged`.

Curators, researchers and admins tag (`TAGGERS`); everything here checks that on the server.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction

from config.roles import ADMIN, CURATOR, RESEARCHER, has_role
from evaluation import benchmarks, named_parsers
from evaluation.models import EvaluationRun, FailureTag, Prediction
from evaluation.results.metrics import planned_requests, run_results
from evaluation.results.outcomes import WRONG

TAGGERS = (CURATOR, RESEARCHER, ADMIN)
NOTE_LIMIT = 2000


class FailureTagError(ValidationError):
    """A tag that cannot be recorded as asked."""


@dataclass
class WrongPrediction:
    request: object  # the EvalRequest
    prediction: Prediction
    tag: FailureTag | None  # the current tag (None: never tagged; a row with an empty factor: cleared)

    @property
    def factor(self) -> str:
        return self.tag.factor if self.tag is not None else ""


def require_tagger(user) -> None:
    if not has_role(user, *TAGGERS):
        raise PermissionDenied("Only curators, researchers and admins tag failures.")


def benchmark_of(run: EvaluationRun):
    return benchmarks.find(run.version.benchmark.slug)


def factors_of(benchmark) -> dict:
    """key → FailureFactor of the benchmark, in its order ({} when it declares none or is unknown)."""
    return {factor.key: factor for factor in getattr(benchmark, "failure_factors", ()) or ()}


def taggable(run: EvaluationRun) -> bool:
    return bool(factors_of(benchmark_of(run)))


def current_tags(predictions) -> dict[int, FailureTag]:
    """prediction pk → its latest tag."""
    found: dict[int, FailureTag] = {}
    rows = (FailureTag.objects.filter(prediction__in=list(predictions)).select_related("tagged_by")
            .order_by("prediction_id", "-tagged_at", "-pk"))
    for row in rows:
        found.setdefault(row.prediction_id, row)
    return found


def history(prediction: Prediction) -> list[FailureTag]:
    return list(prediction.failure_tags.select_related("tagged_by").order_by("-tagged_at", "-pk"))


def wrong_predictions(run: EvaluationRun, parser: str = named_parsers.DEFAULT) -> list[WrongPrediction]:
    """The run's predictions that can be tagged (see the module docstring), in plan order, with their
    current tags; [] for a benchmark without failure factors or a run that cannot be scored."""
    benchmark = benchmark_of(run)
    if not factors_of(benchmark):
        return []
    results = run_results(run, parser)
    if not results.ok:
        return []
    variants = set(getattr(benchmark, "failure_variants", ()) or ())
    wrong = {request_id for request_id, found in results.outcomes.items() if found.status == WRONG}
    first: dict[str, Prediction] = {}
    for prediction in (Prediction.objects.filter(run=run, request_id__in=wrong, error="")
                       .select_related("item").order_by("request_id", "sample_index")):
        first.setdefault(prediction.request_id, prediction)
    from_plan = [(request, first[request.request_id]) for request in planned_requests(run)
                 if request.request_id in first and (not variants or request.variant in variants)]
    tags = current_tags(prediction for _, prediction in from_plan)
    return [WrongPrediction(request, prediction, tags.get(prediction.pk)) for request, prediction in from_plan]


def is_wrong(prediction: Prediction) -> bool:
    return any(found.prediction.pk == prediction.pk for found in wrong_predictions(prediction.run))


def tag(user, prediction: Prediction, factor: str, note: str = "") -> FailureTag:
    """Record `factor` (a key of the benchmark's failure factors; "" clears the tag) as the prediction's
    current tag. FailureTagError for an unknown factor or a prediction that is not a wrong one."""
    require_tagger(user)
    factor = str(factor or "").strip()
    note = str(note or "").strip()
    known = factors_of(benchmark_of(prediction.run))
    if not known:
        raise FailureTagError(f"{prediction.run.version.benchmark.slug} declares no failure factors.")
    if factor and factor not in known:
        raise FailureTagError(f"Unknown failure factor {factor!r}; known: {', '.join(known)}.")
    if len(note) > NOTE_LIMIT:
        raise FailureTagError(f"The note is longer than {NOTE_LIMIT} characters.")
    if not is_wrong(prediction):
        raise FailureTagError(f"Prediction {prediction.pk} is not a wrong answer that failure analysis tags.")
    with transaction.atomic():
        return FailureTag.objects.create(prediction=prediction, factor=factor, note=note, tagged_by=user)


def distribution(run: EvaluationRun, parser: str = named_parsers.DEFAULT) -> dict:
    """Per factor the count of current tags and its share of the tagged predictions, with `wrong` and
    `tagged`; shares are None while nothing is tagged."""
    known = factors_of(benchmark_of(run))
    found = wrong_predictions(run, parser)
    counts = dict.fromkeys(known, 0)
    for entry in found:
        if entry.factor in counts:
            counts[entry.factor] += 1
    tagged = sum(counts.values())
    return {"run": run.pk, "model": run.model_id, "wrong": len(found), "tagged": tagged,
            "factors": [{"key": key, "label": factor.label, "count": counts[key],
                         "share": counts[key] / tagged if tagged else None} for key, factor in known.items()]}


def version_distributions(version, parser: str = named_parsers.DEFAULT) -> list[dict]:
    """`distribution` of every succeeded run of the version that has a wrong prediction, oldest first."""
    runs = version.runs.filter(status=EvaluationRun.Status.SUCCEEDED).order_by("created_at", "pk")
    rows = [distribution(run, parser) for run in runs] if factors_of(benchmarks.find(version.benchmark.slug)) else []
    return [row for row in rows if row["wrong"]]
