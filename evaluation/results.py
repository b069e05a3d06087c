"""Results of evaluation runs for the researchers' pages: a run's metrics (scored once and cached),
the leaderboard of a version, per-category series, consistency views, and the predictions behind
any number ("drill-down").

A run is scored exactly as `manage.py score --run` scores it (`evaluation.scoring`): its requests are
re-planned (`runner.plan`), its predictions collected, and the benchmark's `score` gives the nested
metrics with an `n` per group. Judge-based metrics use the run's stored judgments (`manage.py judge`)
when every answer the judge needs has one; CLIP score and BERTScore need their models and are shown
as not computed here, as the scorer reports them.

Caching: `run_results(run)` stores its result in Django's cache under the run id and a fingerprint of
what the metrics depend on (the version's checksum, the number and last id/time of the run's
predictions and judgments), so a finished run is scored once and a run that gains predictions or
judgments is scored again.

Drill-down: a metric is named by its dotted path in the metrics (`triplet.consistency_accuracy`,
`categories.SpazialeParziale.vsv.pool_accuracy`). `drill(run, path)` walks the path and narrows the
run's requests segment by segment, with the benchmark's `DrillRules`:
- a segment that is one of the benchmark's variants keeps the requests of that variant;
- a `keyed` segment (`categories`, `dimensions`, `by_category`, …) is followed by a group key, and
  keeps the requests whose key (computed as the scorer groups them) is that one;
- a `segments` entry (`real`, `hard`, `explanations`, …) keeps the requests of that subset;
- a `leaves` entry is a metric name that counts a subset of its group (`order1_accuracy`,
  `counterfactual_accuracy`, `missing`, `correct`, …);
- anything else (`accuracy`, `n`, `drop`, …) keeps the group as it is.
A benchmark module may give its own rules as `BENCHMARK.drill_rules`; otherwise those below apply.
Every test of a rule gets the request and its `Outcome` (how its first response was scored).
"""

from __future__ import annotations

import hashlib
import logging
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.core.cache import cache
from django.db.models import Count, Max

from evaluation import benchmarks, parsing, runner, scoring
from evaluation.benchmarks import cvrr as cvrr_module
from evaluation.benchmarks import maia as maia_module
from evaluation.benchmarks import nleye as nleye_module
from evaluation.models import EvaluationRun

try:  # stored LLM-judge verdicts (evaluation.judges); results work without them
    from evaluation.models import Judgment
except ImportError:  # pragma: no cover - installations without judges
    Judgment = None

logger = logging.getLogger(__name__)

CACHE_PREFIX = "results:run:v1"
CACHE_SECONDS = 30 * 24 * 3600  # the key changes with the predictions, so an entry never goes stale

# How the first response of a request was scored (`Outcome.status`).
CORRECT, WRONG, UNPARSED, EMPTY, MISSING, ANSWERED = "correct", "wrong", "unparsed", "empty", "missing", "answered"
OUTCOMES = (CORRECT, WRONG, UNPARSED, EMPTY, MISSING, ANSWERED)
DISCRETE_TYPES = ("letter", "yes_no", "number", "choice_12")


class UnknownMetric(LookupError):
    """The path names no metric of the run."""


# --- A run's metrics -------------------------------------------------------------------------------

@dataclass(frozen=True)
class Outcome:
    """The first response of a request as scored: status (see OUTCOMES) and the parsed value."""

    status: str
    value: Any = None
    verdict: dict | None = None


@dataclass
class RunResults:
    run_id: int
    metrics: dict = field(default_factory=dict)  # score_predictions' output (with its `predictions` summary)
    outcomes: dict[str, Outcome] = field(default_factory=dict)  # request id → Outcome
    views: dict[str, dict] = field(default_factory=dict)  # consistency views, by name (see VIEWS)
    judge: dict | None = None  # the stored judgments used: kind, model, judgments, verdicts
    error: str = ""  # why the run could not be scored
    key: str = ""  # the cache key it was stored under

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
    return "|".join(parts)


def cache_key(run: EvaluationRun) -> str:
    digest = hashlib.sha256(fingerprint(run).encode()).hexdigest()[:32]
    return f"{CACHE_PREFIX}:{run.pk}:{digest}"


def run_results(run: EvaluationRun) -> RunResults:
    """The run's metrics, outcomes and consistency views, from the cache or scored now (and cached)."""
    key = cache_key(run)
    found = cache.get(key)
    if found is not None:
        return found
    results = score_run(run)
    results.key = key
    if results.ok:
        cache.set(key, results, CACHE_SECONDS)
    return results


def run_metrics(run: EvaluationRun) -> dict:
    return run_results(run).metrics


def planned_requests(run: EvaluationRun) -> list:
    return [planned.request for planned in runner.plan(run)]


def score_run(run: EvaluationRun) -> RunResults:
    """Score a stored run now, like `manage.py score --run` with no scoring models, using the run's
    stored judgments where there are any."""
    try:
        benchmark = benchmarks.get(run.version.benchmark.slug)
        requests = planned_requests(run)
    except (KeyError, ImportError, ValueError) as exc:
        logger.warning("run %s cannot be planned for scoring: %s", run.pk, exc)
        return RunResults(run.pk, error=f"The run's requests cannot be rebuilt: {exc}")
    judge, verdicts = stored_verdicts(run, benchmark.slug)
    predictions = scoring.run_predictions(run, verdicts)
    try:
        metrics = scoring.score_predictions(benchmark, requests, predictions,
                                            **dict.fromkeys(benchmark.scoring_models))
    except ValueError as exc:
        return RunResults(run.pk, error=f"The run cannot be scored: {exc}")
    collected = scoring.collect(requests, predictions)
    outcomes = {r.request_id: outcome(r, collected.responses.get(r.request_id)) for r in requests}
    views = {name: view.compute(requests, outcomes) for name, view in VIEWS.get(benchmark.slug, {}).items()}
    return RunResults(run.pk, metrics=metrics, outcomes=outcomes, views=views, judge=judge)


def stored_verdicts(run: EvaluationRun, slug: str) -> tuple[dict | None, dict]:
    """(what was used, {(request id, sample): verdict}) from the judge model that judged most of the
    run's predictions with the benchmark's judge; (None, {}) when there are no stored judgments."""
    if Judgment is None:
        return None, {}
    try:
        from evaluation import judges
    except ImportError:  # pragma: no cover - installations without judges
        return None, {}
    kind = judges.KIND_BY_BENCHMARK.get(slug)
    if kind is None:
        return None, {}
    top = (Judgment.objects.filter(prediction__run=run, kind=kind).exclude(parse_status="failed")
           .values("judge_model").annotate(n=Count("id"), last=Max("id")).order_by("-n", "-last").first())
    if top is None:
        return None, {}
    verdicts = judges.verdicts_for_run(run, kind, top["judge_model"])
    return {"kind": kind, "model": top["judge_model"], "judgments": top["n"], "verdicts": len(verdicts)}, verdicts


def verdict_outcome(verdict: dict | None) -> str | None:
    """correct / wrong from a judge's verdict that says so (MAIA `correct`, CVRR-ES `pred`); else None."""
    if not isinstance(verdict, dict):
        return None
    if isinstance(verdict.get("correct"), bool):
        return CORRECT if verdict["correct"] else WRONG
    pred = str(verdict.get("pred") or "").strip().lower()
    return {"correct": CORRECT, "incorrect": WRONG}.get(pred)


def outcome(request, responses) -> Outcome:
    """How the request's first response was scored: discrete answers right or wrong as the scorer reads
    them; free text as judged when a verdict says right or wrong, else answered."""
    response = scoring.first_response(responses)
    if response is None:
        return Outcome(MISSING)
    if request.answer_type in DISCRETE_TYPES:
        found = scoring.answer(request, responses)
        status = CORRECT if found.correct else {parsing.UNPARSED: UNPARSED, parsing.EMPTY: EMPTY}.get(found.status,
                                                                                                       WRONG)
        return Outcome(status, found.value)
    if request.answer_type != "free":
        parsed = parsing.parse_for_request(request, response.text)
        status = ANSWERED if parsed.ok else {parsing.EMPTY: EMPTY}.get(parsed.status, UNPARSED)
        return Outcome(status, parsed.value)
    if not (response.text or "").strip():
        return Outcome(EMPTY)
    return Outcome(verdict_outcome(response.judgment) or ANSWERED, None, response.judgment)


# --- Paths into the metrics --------------------------------------------------------------------------

def split_path(path: str) -> list[str]:
    return [part for part in (path or "").split(".") if part]


def lookup(metrics: dict, path: str, default=None):
    node: Any = metrics
    for part in split_path(path):
        if not isinstance(node, dict) or part not in node:
            return default
        node = node[part]
    return node


_ABSENT = object()


def resolve(metrics: dict, path: str):
    """The metric at `path`; a not-computed block on the way stands for every metric below it (the
    scorer writes `{"computed": false}` in place of a whole group); _ABSENT when there is none."""
    node: Any = metrics
    for part in split_path(path):
        if scoring.is_not_computed(node):
            return node
        if not isinstance(node, dict) or part not in node:
            return _ABSENT
        node = node[part]
    return node


def is_leaf(value) -> bool:
    """A number, an empty rate (None) or a metric that was not computed."""
    return (value is None or scoring.is_not_computed(value)
            or (isinstance(value, int | float) and not isinstance(value, bool)))


def leaves(metrics: dict, prefix: str = "") -> list[tuple[str, Any]]:
    """(path, value) of every metric leaf, depth first in the scorer's order."""
    found = []
    for key, value in metrics.items():
        path = f"{prefix}.{key}" if prefix else str(key)
        if scoring.is_not_computed(value) or not isinstance(value, dict):
            if is_leaf(value):
                found.append((path, value))
        else:
            found.extend(leaves(value, path))
    return found


RATE_NAMES = ("drop", "diff", "gap", "hard_minus_easy")
SHARE_PARENTS = ("option_distribution", "gold_distribution")


def is_rate(path: str) -> bool:
    """Whether a metric is a fraction (shown as a percentage): accuracies, rates, drops, shares."""
    parts = split_path(path)
    if not parts:
        return False
    name = parts[-1]
    return (name.endswith("accuracy") or name.endswith("_rate") or name in RATE_NAMES
            or (len(parts) > 1 and parts[-2] in SHARE_PARENTS and name != "n"))


def display(value, rate: bool) -> str:
    if scoring.is_not_computed(value):
        return "not computed"
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return str(value)
    if rate:
        return f"{100 * value:.1f}%"
    return f"{value:.3f}"


def group_n(metrics: dict, path: str, n_key: str = "n"):
    """The count of the metric's nearest group: `n_key` next to it, else the closest `n` above it."""
    parts = split_path(path)
    candidate = lookup(metrics, ".".join([*parts[:-1], n_key]), _ABSENT)
    if isinstance(candidate, int) and not isinstance(candidate, bool):
        return candidate
    for depth in range(len(parts) - 1, -1, -1):
        found = lookup(metrics, ".".join([*parts[:depth], "n"]), _ABSENT)
        if isinstance(found, int) and not isinstance(found, bool):
            return found
    return None


# --- Main metrics and series per benchmark -------------------------------------------------------------

@dataclass(frozen=True)
class MetricSpec:
    path: str
    label: str
    n: str = "n"  # the count next to the metric (a path relative to the metric's group)
    rate: bool = True


MAIN_METRICS: dict[str, tuple[MetricSpec, ...]] = {
    "blackswan": (
        MetricSpec("detective_mcq.accuracy", "Detective MCQ"),
        MetricSpec("reporter_mcq.accuracy", "Reporter MCQ"),
        MetricSpec("detective_yn.accuracy", "Detective Y/N"),
        MetricSpec("reporter_yn.accuracy", "Reporter Y/N"),
        MetricSpec("forecaster_gen.clip_score", "Forecaster CLIP", n="scored", rate=False),
        MetricSpec("detective_gen.clip_score", "Detective CLIP", n="scored", rate=False),
        MetricSpec("reporter_gen.clip_score", "Reporter CLIP", n="scored", rate=False),
        MetricSpec("forecaster_gen.llm_match", "Forecaster LLM-Match", n="llm_match_questions", rate=False),
        MetricSpec("detective_gen.llm_match", "Detective LLM-Match", n="llm_match_questions", rate=False),
        MetricSpec("reporter_gen.llm_match", "Reporter LLM-Match", n="llm_match_questions", rate=False),
    ),
    "cvqa": (
        MetricSpec("real.original_accuracy", "Real original"),
        MetricSpec("real.counterfactual_accuracy", "Real counterfactual"),
        MetricSpec("real.drop", "Real drop"),
        MetricSpec("synthetic.original_accuracy", "Synthetic original"),
        MetricSpec("synthetic.counterfactual_accuracy", "Synthetic counterfactual"),
        MetricSpec("synthetic.drop", "Synthetic drop"),
    ),
    "nleye": (
        MetricSpec("triplet.consistency_accuracy", "Triplet consistency"),
        MetricSpec("triplet.order1_accuracy", "Order 1", n="order1.n"),
        MetricSpec("triplet.order2_accuracy", "Order 2", n="order2.n"),
        MetricSpec("pairs.order_faithful_accuracy", "Pairs order-faithful"),
        MetricSpec("triplet.explanations.valid_rate", "Valid explanations"),
    ),
    "cvrr": (
        MetricSpec("accuracy", "Accuracy (mean of dimensions)"),
        MetricSpec("mean_score", "Mean score (0–5)", rate=False),
        MetricSpec("pooled_accuracy", "Pooled accuracy", n="judged"),
    ),
    "maia": (
        MetricSpec("vsv.independent_accuracy", "VSV independent", n="pairs.n"),
        MetricSpec("vsv.pool_accuracy", "VSV pool"),
        MetricSpec("oevqa.judge_accuracy", "OEVQA judged"),
        MetricSpec("aggregate_accuracy", "Aggregate", n="aggregate_n"),
    ),
}


@dataclass(frozen=True)
class SeriesSpec:
    """One value per group per run: `parent.<group>.metric` (the groups: `groups`, or every key under
    `parent` that has the metric). Drawn as bars across models; `radar` also as a radar chart."""

    key: str
    title: str
    parent: str
    metric: str
    groups: tuple[str, ...] = ()
    radar: bool = False
    rate: bool = True
    labels: dict[str, str] = field(default_factory=dict)

    def path(self, group: str) -> str:
        return ".".join(part for part in (self.parent, group, self.metric) if part)


SERIES: dict[str, tuple[SeriesSpec, ...]] = {
    "blackswan": (
        SeriesSpec("task-accuracy", "MCQ and Y/N accuracy per task", "", "accuracy",
                   groups=("detective_mcq", "reporter_mcq", "detective_yn", "reporter_yn")),
        SeriesSpec("mcq-difficulty", "MCQ accuracy on the hard and easy subsets", "", "accuracy",
                   groups=("detective_mcq.hard", "detective_mcq.easy", "reporter_mcq.hard", "reporter_mcq.easy")),
        SeriesSpec("gen-clip", "CLIP score per task", "", "clip_score",
                   groups=("forecaster_gen", "detective_gen", "reporter_gen"), rate=False),
        SeriesSpec("gen-llm-match", "LLM-Match (1–5) per task", "", "llm_match",
                   groups=("forecaster_gen", "detective_gen", "reporter_gen"), rate=False),
    ),
    "cvqa": (
        SeriesSpec("real-original", "C-VQA-Real original accuracy per group", "real", "original_accuracy",
                   groups=("numerical_direct", "numerical_indirect", "boolean")),
        SeriesSpec("real-counterfactual", "C-VQA-Real counterfactual accuracy per group", "real",
                   "counterfactual_accuracy", groups=("numerical_direct", "numerical_indirect", "boolean")),
        SeriesSpec("synthetic-counterfactual", "C-VQA-Synthetic counterfactual accuracy per template",
                   "synthetic.templates", "counterfactual_accuracy"),
        SeriesSpec("synthetic-options", "C-VQA-Synthetic: share of each chosen option", "synthetic.option_distribution",
                   "", groups=("A", "B", "C", "D")),
        SeriesSpec("subgroups", "Drop (original − counterfactual) per subgroup", "subgroups", "diff"),
    ),
    "nleye": (
        SeriesSpec("category-consistency", "Triplet consistency accuracy per reasoning category", "by_category",
                   "triplet.consistency_accuracy"),
        SeriesSpec("direction-consistency", "Triplet consistency accuracy per time direction", "by_time_direction",
                   "triplet.consistency_accuracy"),
        SeriesSpec("duration-consistency", "Triplet consistency accuracy per time duration", "by_time_duration",
                   "triplet.consistency_accuracy"),
        SeriesSpec("category-pairs", "Pairs order-faithful accuracy per reasoning category", "by_category",
                   "pairs.order_faithful_accuracy"),
    ),
    "cvrr": (
        SeriesSpec("dimension-accuracy", "Accuracy per dimension", "dimensions", "accuracy",
                   labels=cvrr_module.DIMENSIONS),
        SeriesSpec("dimension-score", "Mean judge score (0–5) per dimension", "dimensions", "mean_score",
                   rate=False, labels=cvrr_module.DIMENSIONS),
    ),
    "maia": (
        SeriesSpec("category-pool", "VSV pool accuracy per category", "categories", "vsv.pool_accuracy", radar=True),
        SeriesSpec("category-independent", "VSV independent accuracy per category", "categories",
                   "vsv.independent_accuracy", radar=True),
        SeriesSpec("category-aggregate", "Aggregate accuracy per category", "categories", "aggregate_accuracy",
                   radar=True),
        SeriesSpec("macro-pool", "VSV pool accuracy per macro-category", "macro_categories", "vsv.pool_accuracy"),
    ),
}


def main_metrics(slug: str) -> tuple[MetricSpec, ...]:
    return MAIN_METRICS.get(slug, ())


def series_specs(slug: str) -> tuple[SeriesSpec, ...]:
    return SERIES.get(slug, ())


# --- Consistency views ----------------------------------------------------------------------------------

def _rates(**rates) -> dict:
    """The rates, and `shown`: each as a percentage for the page."""
    return {**rates, "shown": {name: display(value, True) for name, value in rates.items()}}


@dataclass(frozen=True)
class PairView:
    """Each item asked twice (two sides, told apart by `side`): how often both, only one, or neither is
    right. `cells` keeps the item ids of each outcome for the drill-down."""

    title: str
    path: str  # the metric whose requests the view's cells narrow (drill-down)
    variants: tuple[str, ...]
    side: Callable
    sides: tuple
    side_labels: tuple[str, str]

    def compute(self, requests, outcomes: dict[str, Outcome]) -> dict:
        right: dict[str, dict] = {}
        for request in requests:
            if request.variant in self.variants:
                right.setdefault(request.item_id, {})[self.side(request)] = (
                    outcomes[request.request_id].status == CORRECT)
        first, second = self.sides
        cells: dict[str, list[str]] = {"both": [], "first_only": [], "second_only": [], "neither": []}
        for item_id, found in sorted(right.items()):
            a, b = found.get(first, False), found.get(second, False)
            cells["both" if a and b else "first_only" if a else "second_only" if b else "neither"].append(item_id)
        n = len(right)
        counts = {name: len(ids) for name, ids in cells.items()}
        return {"kind": "pairs", "title": self.title, "path": self.path, "labels": list(self.side_labels), "n": n,
                "counts": counts, "cells": cells,
                **_rates(first_accuracy=scoring.fraction(counts["both"] + counts["first_only"], n),
                         second_accuracy=scoring.fraction(counts["both"] + counts["second_only"], n),
                         both_accuracy=scoring.fraction(counts["both"], n))}


@dataclass(frozen=True)
class PoolView:
    """Pools of requests that count together (MAIA: the eight statement pairs of a question): the
    independent accuracy, the pool accuracy, and how many pools have k of their requests right."""

    title: str
    path: str
    variants: tuple[str, ...]
    pool: Callable

    def compute(self, requests, outcomes: dict[str, Outcome]) -> dict:
        pools: dict[str, list[bool]] = {}
        for request in requests:
            if request.variant in self.variants:
                pools.setdefault(self.pool(request), []).append(outcomes[request.request_id].status == CORRECT)
        size = max((len(found) for found in pools.values()), default=0)
        cells: dict[str, list[str]] = {str(k): [] for k in range(size + 1)}
        for pool, found in sorted(pools.items()):
            cells[str(sum(found))].append(pool)
        pairs = sum(len(found) for found in pools.values())
        return {"kind": "pools", "title": self.title, "path": self.path, "n": len(pools), "pairs": pairs, "size": size,
                "cells": cells, "counts": {k: len(ids) for k, ids in cells.items()},
                **_rates(independent_accuracy=scoring.fraction(sum(sum(found) for found in pools.values()), pairs),
                         pool_accuracy=scoring.fraction(sum(all(found) for found in pools.values()), len(pools)))}


VIEWS: dict[str, dict[str, PairView | PoolView]] = {
    "nleye": {"orders": PairView("Hypothesis order: gold shown first (order 1) vs second (order 2)",
                                 "triplet.consistency_accuracy", ("triplet",),
                                 lambda r: r.extra.get("order"), (1, 2), ("order 1", "order 2"))},
    "cvqa": {"forms": PairView("Original vs counterfactual question", "n", ("original", "counterfactual"),
                               lambda r: r.extra.get("form"), ("original", "counterfactual"),
                               ("original", "counterfactual"))},
    "maia": {"pools": PoolView("VSV: independent vs pool accuracy (statement pairs right per question)",
                               "vsv.pool_accuracy", ("vsv",),
                               lambda r: r.extra.get("pool"))},
}


# --- Leaderboard and series of a version ------------------------------------------------------------------

def frame_text(run: EvaluationRun) -> str:
    """The run's frame policy as written on the command line (`uniform:8@448`)."""
    from generation.frames import FramePolicy

    if not run.frame_policy:
        return ""
    try:
        return FramePolicy.from_dict(run.frame_policy).spec()
    except (KeyError, TypeError, ValueError):
        return str(run.frame_policy)


def run_label(run: EvaluationRun) -> str:
    """A short name of a run for tables and chart legends: #id, model name, the non-default strategies."""
    name = run.model_id.rstrip("/").rsplit("/", 1)[-1] or run.model_id
    settings = [value for value in (run.input_strategy, run.prompting) if value not in ("", "default", "standard")]
    return f"#{run.pk} {name}" + (f" ({', '.join(settings)})" if settings else "")


def succeeded_runs(version):
    return (version.runs.filter(status=EvaluationRun.Status.SUCCEEDED).select_related("version__benchmark")
            .order_by("model_id", "pk"))


@dataclass
class Cell:
    path: str
    value: Any
    n: int | None
    display: str
    present: bool  # the run has this metric at all (a run limited to some variants may not)
    computed: bool
    reason: str = ""


def cell(metrics: dict, path: str, *, rate: bool, n_key: str = "n") -> Cell:
    value = resolve(metrics, path)
    if value is _ABSENT or not is_leaf(value):
        return Cell(path, None, None, "—", present=False, computed=False)
    computed = not scoring.is_not_computed(value)
    return Cell(path, value if computed else None, group_n(metrics, path, n_key), display(value, rate),
                present=True, computed=computed, reason="" if computed else value.get("reason", ""))


@dataclass
class Row:
    run: EvaluationRun
    label: str
    results: RunResults
    cells: list[Cell]
    frames: str = ""


@dataclass
class Leaderboard:
    version: Any
    specs: tuple[MetricSpec, ...]
    rows: list[Row]


def leaderboard(version, runs=None) -> Leaderboard:
    """Runs that succeeded × the benchmark's main metrics, each with its n."""
    specs = main_metrics(version.benchmark.slug)
    rows = []
    for run in runs if runs is not None else succeeded_runs(version):
        results = run_results(run)
        cells = [cell(results.metrics, spec.path, rate=spec.rate, n_key=spec.n) for spec in specs]
        rows.append(Row(run, run_label(run), results, cells, frame_text(run)))
    return Leaderboard(version, specs, rows)


@dataclass
class SeriesRow:
    run: EvaluationRun
    label: str
    cells: list[Cell]

    @property
    def values(self) -> list[float | None]:
        return [c.value if c.computed else None for c in self.cells]


@dataclass
class Series:
    spec: SeriesSpec
    groups: list[str]
    labels: list[str]
    rows: list[SeriesRow]

    @property
    def has_data(self) -> bool:
        return any(value is not None for row in self.rows for value in row.values)

    @property
    def radar_ready(self) -> bool:
        """Whether a radar chart says something: offered, three categories or more, and some value."""
        return self.spec.radar and len(self.groups) >= 3 and self.has_data


def series_groups(spec: SeriesSpec, metric_sets: list[dict]) -> list[str]:
    if spec.groups:
        return list(spec.groups)
    found = set()
    for metrics in metric_sets:
        parent = lookup(metrics, spec.parent) if spec.parent else metrics
        if isinstance(parent, dict):
            found |= {key for key, value in parent.items() if isinstance(value, dict)
                      and lookup(value, spec.metric, _ABSENT) is not _ABSENT}
    return sorted(found)


def series(version, board: Leaderboard | None = None) -> list[Series]:
    """Every per-category series of the version's benchmark over the leaderboard's runs."""
    board = board or leaderboard(version)
    found = []
    for spec in series_specs(version.benchmark.slug):
        groups = series_groups(spec, [row.results.metrics for row in board.rows])
        rows = [SeriesRow(row.run, row.label, [cell(row.results.metrics, spec.path(group), rate=spec.rate)
                                               for group in groups]) for row in board.rows]
        found.append(Series(spec, groups, [spec.labels.get(group, group) for group in groups], rows))
    return found


def find_series(version, key: str, board: Leaderboard | None = None) -> Series | None:
    return next((s for s in series(version, board) if s.spec.key == key), None)


CHART_KINDS = ("bar", "radar")


def chart_image(version, key: str, kind: str, fmt: str) -> bytes:
    """A series of the version as a bar or radar chart (PNG or SVG), cached with the runs' results;
    UnknownMetric for a series, kind or format the benchmark does not have."""
    from evaluation import plots

    board = leaderboard(version)
    found = find_series(version, key, board)
    if found is None or kind not in CHART_KINDS or (kind == "radar" and not found.spec.radar):
        raise UnknownMetric(f"{version} has no {kind} chart {key!r}.")
    if fmt not in plots.FORMATS:
        raise UnknownMetric(f"Charts come as {', '.join(plots.FORMATS)}, not {fmt!r}.")
    parts = [str(version.pk), key, kind, fmt, *(row.results.key or row.results.error for row in board.rows)]
    cache_name = "results:chart:v1:" + hashlib.sha256("|".join(parts).encode()).hexdigest()[:40]
    image = cache.get(cache_name)
    if image is None:
        title = f"{version}: {found.spec.title}"
        data = [(row.label, row.values) for row in found.rows]
        draw = plots.radar_chart if kind == "radar" else plots.bar_chart
        image = draw(title, found.labels, data, fmt=fmt, percent=found.spec.rate)
        cache.set(cache_name, image, CACHE_SECONDS)
    return image


@dataclass
class ConsistencyRow:
    run: EvaluationRun
    label: str
    view: dict


def consistency(board: Leaderboard) -> list[tuple[str, str, list[ConsistencyRow]]]:
    """(view name, title, a row per run) for the benchmark's consistency views."""
    slug = board.version.benchmark.slug
    out = []
    for name, view in VIEWS.get(slug, {}).items():
        rows = [ConsistencyRow(row.run, row.label, row.results.views[name]) for row in board.rows
                if name in row.results.views and row.results.views[name]["n"]]
        out.append((name, view.title, rows))
    return out


# --- Drill-down -------------------------------------------------------------------------------------------

Test = Callable[[Any, Outcome], bool]


@dataclass(frozen=True)
class DrillRules:
    """How the segments of a metric path narrow a benchmark's requests (see the module docstring)."""

    keyed: dict[str, Callable[[Any, Outcome], Any]] = field(default_factory=dict)
    segments: dict[str, Test] = field(default_factory=dict)
    leaves: dict[str, Test] = field(default_factory=dict)


def _status(*statuses: str) -> Test:
    return lambda request, found: found.status in statuses


def _extra(key: str, value) -> Test:
    return lambda request, found: request.extra.get(key) == value


COUNT_LEAVES: dict[str, Test] = {
    "correct": _status(CORRECT),
    "missing": _status(MISSING),
    "unparsed": _status(UNPARSED, EMPTY),
    "empty": _status(EMPTY),
}

DRILL_RULES: dict[str, DrillRules] = {
    "blackswan": DrillRules(
        segments={"hard": lambda r, o: r.extra.get("hard") is True, "easy": lambda r, o: r.extra.get("hard") is False},
        leaves={**COUNT_LEAVES, "unknown_difficulty": lambda r, o: r.extra.get("hard") is None}),
    "cvqa": DrillRules(
        keyed={"templates": lambda r, o: f"abs_counting_{r.extra.get('template')}",
               "groups": lambda r, o: r.extra.get("group"), "subgroups": lambda r, o: r.extra.get("subgroup"),
               "option_distribution": lambda r, o: o.value if o.status in (CORRECT, WRONG) else None,
               "gold_distribution": lambda r, o: r.gold},
        segments={"real": _extra("subset", "real"), "synthetic": _extra("subset", "synthetic"),
                  "numerical_direct": _extra("type", "direct"), "numerical_indirect": _extra("type", "indirect"),
                  "boolean": _extra("type", "boolean"), "subgroup_gap": lambda r, o: bool(r.extra.get("subgroup"))},
        leaves={**COUNT_LEAVES, "original_accuracy": _extra("form", "original"),
                "counterfactual_accuracy": _extra("form", "counterfactual")}),
    "nleye": DrillRules(
        keyed={name: (lambda r, o, f=fieldname: nleye_module.breakdown_key(r.extra.get(f)))
               for name, fieldname in nleye_module.BREAKDOWNS.items()},
        segments={"order1": _extra("order", 1), "order2": _extra("order", 2), "explanations": _status(CORRECT)},
        leaves={**COUNT_LEAVES, "order1_accuracy": _extra("order", 1), "order2_accuracy": _extra("order", 2)}),
    "cvrr": DrillRules(
        keyed={"dimensions": lambda r, o: r.extra.get("dimension"),
               "by_question_kind": lambda r, o: r.extra.get("question_kind")},
        leaves={**COUNT_LEAVES, "other_verdicts": _status(ANSWERED)}),
    "maia": DrillRules(
        keyed={"categories": lambda r, o: maia_module.release_category(r),
               "macro_categories": lambda r, o: r.extra.get("macro_category")},
        leaves=dict(COUNT_LEAVES)),
}


def drill_rules(benchmark) -> DrillRules:
    return getattr(benchmark, "drill_rules", None) or DRILL_RULES.get(benchmark.slug, DrillRules())


def drill_tests(benchmark, path: str) -> list[Test]:
    """The tests a request must pass to count in the metric at `path`."""
    rules = drill_rules(benchmark)
    parts = split_path(path)
    tests: list[Test] = []
    index = 0
    while index < len(parts):
        part = parts[index]
        last = index == len(parts) - 1
        if part in rules.keyed and not last:
            key = parts[index + 1]
            if not (key == "n" and index + 1 == len(parts) - 1):  # a keyed block's own count
                tests.append(lambda r, o, f=rules.keyed[part], k=key: str(f(r, o)) == k)
            index += 2
            continue
        if part in benchmark.variants:
            tests.append(lambda r, o, v=part: r.variant == v)
        elif part in rules.segments:
            tests.append(rules.segments[part])
        elif last and part in rules.leaves:
            tests.append(rules.leaves[part])
        index += 1
    return tests


@dataclass
class Drill:
    run: EvaluationRun
    path: str
    value: Any
    display: str
    n: int | None
    requests: list  # EvalRequests behind the number, in plan order
    outcomes: dict[str, Outcome]
    total: int  # before the outcome / cell filters
    outcome_counts: dict[str, int]
    results: RunResults
    cell_title: str = ""


def drill(run: EvaluationRun, path: str, *, outcome_filter: str = "", view: str = "", view_cell: str = "") -> Drill:
    """The requests behind the metric at `path` of a run (UnknownMetric when the run has none there);
    optionally only those with one outcome, or only the items of one cell of a consistency view."""
    results = run_results(run)
    if not results.ok:
        raise UnknownMetric(results.error)
    value = resolve(results.metrics, path) if split_path(path) else _ABSENT
    if value is _ABSENT or not is_leaf(value) or split_path(path)[:1] == ["predictions"]:
        raise UnknownMetric(f"Run {run.pk} has no metric {path!r}.")
    benchmark = benchmarks.get(run.version.benchmark.slug)
    tests = drill_tests(benchmark, path)
    behind = [r for r in planned_requests(run) if all(test(r, results.outcomes[r.request_id]) for test in tests)]
    cell_title = ""
    if view:
        found = results.views.get(view)
        if found is None or view_cell not in found["cells"]:
            raise UnknownMetric(f"Run {run.pk} has no {view!r} view cell {view_cell!r}.")
        items = set(found["cells"][view_cell])
        variants = VIEWS[benchmark.slug][view].variants
        behind = [r for r in behind if r.item_id in items and r.variant in variants]
        cell_title = f"{found['title']}: {view_cell.replace('_', ' ')}"
    counts: dict[str, int] = {}
    for request in behind:
        status = results.outcomes[request.request_id].status
        counts[status] = counts.get(status, 0) + 1
    total = len(behind)
    if outcome_filter:
        behind = [r for r in behind if results.outcomes[r.request_id].status == outcome_filter]
    return Drill(run, path, value, display(value, is_rate(path)), group_n(results.metrics, path), behind,
                 results.outcomes, total, counts, results, cell_title)


def flat_metrics(metrics: dict) -> list[Cell]:
    """Every metric leaf of a run (the `predictions` summary aside), with its display and n."""
    return [cell(metrics, path, rate=is_rate(path)) for path, _ in leaves(metrics)
            if split_path(path)[:1] != ["predictions"]]


# --- Human evaluation beside the models ------------------------------------------------------------------

@dataclass
class HumanBaselineRow:
    """People answering the version's own requests (`evaluation.human_eval`), scored like a run."""

    label: str
    studies: list[str]
    cells: list[Cell]
    annotators: int
    requests: int
    answered: int
    input_strategy: str
    per_annotator: dict
    agreement: dict
    items_waiting: int = 0
    error: str = ""


@dataclass
class RatingRow:
    """BlackSwan: people's mean ratings of a run's responses to one Gen variant, next to its CLIP score
    and LLM-Match."""

    run: EvaluationRun
    label: str
    variant: str
    clip: Cell
    llm_match: Cell
    means: dict[str, str]  # scale → mean as shown
    items: int
    ratings: int
    alpha: dict[str, str]  # scale → Krippendorff's alpha as shown


@dataclass
class ExplanationRow:
    """NL-EYE: the share of a run's explanations people found valid (≥ 1 vote), beside the judge's."""

    label: str
    run: EvaluationRun | None
    judge: Cell | None
    valid_rate: str
    explanations: int
    votes: dict[str, int]
    agreement: list[dict]


@dataclass
class HumanSection:
    baselines: list[HumanBaselineRow] = field(default_factory=list)
    ratings: list[RatingRow] = field(default_factory=list)
    rating_scales: list[str] = field(default_factory=list)
    explanations: list[ExplanationRow] = field(default_factory=list)
    vote_levels: list[str] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.baselines or self.ratings or self.explanations)


RATING_LABELS = {"correctness": "Correctness (1–5)", "depth": "Depth (1–5)", "detail": "Detail (1–5)",
                 "visual_entailment": "Visual entailment (0/1)"}


def _shown(value) -> str:
    return "—" if value is None else f"{value:.2f}"


def human_baseline_rows(version, specs) -> list[HumanBaselineRow]:
    from evaluation import human_eval

    rows = []
    for group in human_eval.baseline_groups(version):
        try:
            found = human_eval.human_baseline_results(group)
        except (human_eval.HumanEvalError, ValueError, KeyError) as exc:
            rows.append(HumanBaselineRow("Human (crowd)", [s.slug for s in group], [], 0, 0, 0, "", {}, {},
                                         error=str(exc)))
            continue
        cells = [cell(found["metrics"], spec.path, rate=spec.rate, n_key=spec.n) for spec in specs]
        rows.append(HumanBaselineRow("Human (crowd)", found["studies"], cells, found["annotators"], found["requests"],
                                     found["answered"], found["input_strategy"], found["per_annotator"],
                                     found["agreement"], found["items_waiting"]))
    return rows


def rating_rows(version, board: Leaderboard) -> tuple[list[RatingRow], list[str]]:
    from evaluation import human_eval

    studies = human_eval.studies_of(human_eval.RATING, version=version)
    if not studies:
        return [], []
    found = human_eval.rating_results(studies)
    by_run = {row.run.pk: row for row in board.rows}
    rows = []
    for group in found["groups"]:
        row = by_run.get(group["run"])
        if row is None:
            continue
        variant = group["variant"]
        scales = group["scales"]
        rows.append(RatingRow(
            row.run, row.label, variant,
            cell(row.results.metrics, f"{variant}.clip_score", rate=False, n_key="scored"),
            cell(row.results.metrics, f"{variant}.llm_match", rate=False, n_key="llm_match_questions"),
            {name: _shown(figures["mean"]) for name, figures in scales.items()},
            group["items"], max(figures["ratings"] for figures in scales.values()),
            {name: _shown(figures["alpha"]["value"]) for name, figures in scales.items()}))
    return rows, [RATING_LABELS[name] for name in human_eval.SCALE_NAMES]


def explanation_rows(version, board: Leaderboard) -> tuple[list[ExplanationRow], list[str]]:
    from evaluation import human_eval

    studies = human_eval.studies_of(human_eval.VOTE, version=version)
    if not studies:
        return [], []
    found = human_eval.explanation_results(studies)
    by_run = {row.run.pk: row for row in board.rows}
    rows, levels = [], []
    for group in found["groups"]:
        levels = levels if len(levels) >= len(group["votes"]) else list(group["votes"])
        shown = display(group["valid_rate"], True)
        if group["group"] == "humans":
            rows.append(ExplanationRow("People's explanations", None, None, shown, group["explanations"],
                                       group["votes"], []))
            continue
        row = by_run.get(group["run"])
        if row is None:
            continue
        judge = cell(row.results.metrics, "triplet.explanations.valid_rate", rate=True)
        rows.append(ExplanationRow(row.label, row.run, judge, shown, group["explanations"], group["votes"],
                                   group["judge_agreement"]))
    return rows, levels


def human_section(version, board: Leaderboard) -> HumanSection:
    """What people measured on this version: baseline rows for the leaderboard, BlackSwan ratings beside
    CLIP score and LLM-Match, NL-EYE explanation validity beside the judge's."""
    ratings, scales = rating_rows(version, board)
    explanations, levels = explanation_rows(version, board)
    return HumanSection(human_baseline_rows(version, board.specs), ratings, scales, explanations, levels)
