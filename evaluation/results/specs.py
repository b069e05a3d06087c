"""The main metrics (leaderboard columns) and per-category series of each benchmark."""

from __future__ import annotations

from dataclasses import dataclass, field

from evaluation.benchmarks import cvrr as cvrr_module


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
