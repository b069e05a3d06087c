"""A run's metrics, outcomes and consistency views: scored like `manage.py score --run`, and cached.

Each is scored under a named answer parser (`evaluation.named_parsers`: `authors` by default, `strict`);
the CLIP score and BERTScore that `score --run` computed and kept with the run
(`evaluation.model_metrics`) are put into the metrics. `disagreements(run)` lists the predictions
the two parsers read differently, with both readings.

Caching: `run_results(run, parser)` stores its result in Django's cache under the run id, the parser
and a fingerprint of what the metrics depend on (the version's checksum, the number and last id/time
of the run's predictions and judgments, its kept model metrics, the version's judge references), so
a finished run is scored once and a run that gains predictions, judgments, model metrics or judge
references is scored again.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass, field

from django.core.cache import cache
from django.db.models import Count, Max

from evaluation import benchmarks, judge_references, judges, model_metrics, named_parsers, runner, scoring
from evaluation.models import EvaluationRun, Judgment, Prediction, RunModelMetric
from evaluation.results.consistency_views import views_of
from evaluation.results.outcomes import Outcome, outcome

logger = logging.getLogger("evaluation.results")

CACHE_PREFIX = "results:run:v2"
CACHE_SECONDS = 30 * 24 * 3600  # the key changes with the predictions, so an entry never goes stale
COT_PROMPTING = "cot"  # the prompting strategy whose responses `cot_reasoning` reports on
# Why a run's requests cannot be rebuilt: no benchmark module for its slug, or items or options it refuses.
PLAN_ERRORS = (KeyError, ImportError, ValueError)


@dataclass
class RunResults:
    run_id: int
    metrics: dict = field(default_factory=dict)  # score_predictions' output (with its `predictions` summary)
    outcomes: dict[str, Outcome] = field(default_factory=dict)  # request id → Outcome
    views: dict[str, dict] = field(default_factory=dict)  # consistency views, by name (see `views_of`)
    judge: dict | None = None  # the stored judgments used: kind, model, judgments, verdicts
    error: str = ""  # why the run could not be scored
    key: str = ""  # the cache key it was stored under
    parser: str = named_parsers.DEFAULT  # the answer parser the metrics use
    model_metrics: list[dict] = field(default_factory=list)  # kept CLIP score / BERTScore put in (see overlay)

    @property
    def ok(self) -> bool:
        return not self.error


def fingerprint(run: EvaluationRun) -> str:
    """What the run's metrics depend on, as one string (part of the cache key)."""
    stats = run.predictions.aggregate(n=Count("id"), last=Max("id"), at=Max("created_at"))
    parts = [str(run.pk), run.version.checksum, str(run.version.item_count), str(stats["n"]), str(stats["last"]),
             stats["at"].isoformat() if stats["at"] else "-"]
    if Judgment is not None:
        judged = Judgment.objects.filter(prediction__run=run).aggregate(n=Count("id"), last=Max("id"))
        parts += [str(judged["n"]), str(judged["last"])]
    kept = RunModelMetric.objects.filter(run=run).aggregate(n=Count("id"), at=Max("computed_at"))
    parts += [str(kept["n"]), kept["at"].isoformat() if kept["at"] else "-", judge_references.fingerprint(run.version)]
    return "|".join(parts)


def cache_key(run: EvaluationRun, parser: str = named_parsers.DEFAULT) -> str:
    digest = hashlib.sha256(fingerprint(run).encode()).hexdigest()[:32]
    return f"{CACHE_PREFIX}:{run.pk}:{parser}:{digest}"


def run_results(run: EvaluationRun, parser: str = named_parsers.DEFAULT) -> RunResults:
    """The run's metrics, outcomes and consistency views under `parser`, from the cache or scored now
    (and cached)."""
    key = cache_key(run, named_parsers.check(parser))
    found = cache.get(key)
    if found is not None:
        return found
    results = score_run(run, parser=parser)
    results.key = key
    if results.ok:
        cache.set(key, results, CACHE_SECONDS)
    return results


def run_metrics(run: EvaluationRun, parser: str = named_parsers.DEFAULT) -> dict:
    return run_results(run, parser).metrics


def cot_reasoning(run: EvaluationRun) -> dict | None:
    """How many of a finished chain-of-thought run's responses give any reasoning before the answer
    (`evaluation.reasoning`, the metrics' `predictions.cot_reasoning`), from its cached results; None for
    a run asked without chain of thought, one still running, or one that cannot be scored."""
    if run.prompting != COT_PROMPTING or not run.is_finished:
        return None
    found = run_results(run)
    return found.metrics.get("predictions", {}).get("cot_reasoning") if found.ok else None


def planned_requests(run: EvaluationRun) -> list:
    return [planned.request for planned in runner.plan(run)]


def score_run(run: EvaluationRun, parser: str = named_parsers.DEFAULT) -> RunResults:
    """Score a stored run now under `parser`, like `manage.py score --run` with no scoring models, using
    the run's stored judgments where there are any and the model metrics kept with it."""
    try:
        benchmark = benchmarks.get(run.version.benchmark.slug)
        requests = planned_requests(run)
    except PLAN_ERRORS as exc:
        logger.warning("run %s cannot be planned for scoring: %s", run.pk, exc)
        return RunResults(run.pk, error=f"The run's requests cannot be rebuilt: {exc}")
    judge, verdicts = stored_verdicts(run, benchmark.slug)
    predictions = scoring.run_predictions(run, verdicts)
    try:
        metrics = scoring.score_predictions(benchmark, requests, predictions, parser=parser,
                                            **dict.fromkeys(benchmark.scoring_models))
    except ValueError as exc:
        return RunResults(run.pk, error=f"The run cannot be scored: {exc}", parser=parser)
    kept = model_metrics.overlay(run, metrics)
    collected = scoring.collect(requests, predictions, named_parsers.reader(benchmark.slug, parser))
    outcomes = {r.request_id: outcome(r, collected.responses.get(r.request_id)) for r in requests}
    views = {name: view.compute(requests, outcomes) for name, view in views_of(benchmark).items()}
    return RunResults(run.pk, metrics=metrics, outcomes=outcomes, views=views, judge=judge, parser=parser,
                      model_metrics=kept)


@dataclass
class Disagreement:
    """A prediction the two parsers read differently."""

    request: object  # the EvalRequest
    prediction: Prediction
    authors: object  # parsing.Parsed
    strict: object


def disagreements(run: EvaluationRun) -> list[Disagreement]:
    """The run's predictions that the authors' and the strict parser read differently, in plan order."""
    benchmark = benchmarks.get(run.version.benchmark.slug)
    requests = planned_requests(run)
    rows = {(p.request_id, p.sample_index): p for p in run.predictions.filter(error="")}
    collected = scoring.collect(requests, scoring.run_predictions(run))
    found = []
    for request, response, first, second in scoring.disagreeing(benchmark.slug, requests, collected.responses):
        found.append(Disagreement(request, rows[(request.request_id, response.sample)], first, second))
    return found


def stored_verdicts(run: EvaluationRun, slug: str) -> tuple[dict | None, dict]:
    """(what was used, {(request id, sample): verdict}) from the judge model that judged most of the
    run's predictions with the benchmark's judge; (None, {}) when there are no stored judgments."""
    kind = judges.kind_for_benchmark(slug)
    if kind is None:
        return None, {}
    top = (Judgment.objects.filter(prediction__run=run, kind=kind).exclude(parse_status="failed")
           .values("judge_model").annotate(n=Count("id"), last=Max("id")).order_by("-n", "-last").first())
    if top is None:
        return None, {}
    verdicts = judges.verdicts_for_run(run, kind, top["judge_model"])
    chosen = (Judgment.objects.filter(prediction__run=run, kind=kind, judge_model=top["judge_model"],
                                      params__decoding=judges.CHOICES).exclude(parse_status="failed").count())
    decoding = judges.FREE if not chosen else judges.CHOICES if chosen == top["n"] else "mixed"
    return {"kind": kind, "model": top["judge_model"], "judgments": top["n"], "verdicts": len(verdicts),
            "decoding": decoding}, verdicts
