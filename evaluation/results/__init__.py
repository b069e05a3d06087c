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
Each benchmark module gives its own rules as `Benchmark.drill_rules` (otherwise only its variants and the
count leaves narrow).
Every test of a rule gets the request and its `Outcome` (how its first response was scored).

Layout (everything is re-exported here, so `from evaluation import results; results.X` works for all of it):
- `outcomes`: how a request's first response was scored (`Outcome`, CORRECT/WRONG/…), which outcomes are a
  plain right or wrong (`right_or_wrong`), `UnknownMetric`;
- `paths`: paths into the metrics (`lookup`, `resolve`, `leaves`), `is_rate`, `display`, `Cell`, `flat_metrics`;
- `specs`: the shape of a benchmark's main metrics and per-category series (each benchmark declares its own);
- `consistency_views`: the consistency views computed when a run is scored (`views_of(benchmark)`);
- `metrics`: a run's metrics under a parser and their cache (`run_results`, `score_run`, `planned_requests`),
  the predictions the two parsers read differently (`disagreements`), a chain-of-thought run's reasoning rate
  (`cot_reasoning`);
- `leaderboards`: the leaderboard of a version, run labels;
- `per_category`: per-category series, their charts, and the consistency rows of a leaderboard;
- `drilldown`: metric path → requests (`drill`, `DrillRules`, `drill_rules`);
- `human`: the human-evaluation section (`human_section`).
(Submodules are not named after the functions they hold, so `results.leaderboard`, `results.series` and
`results.drill` stay the functions.)
"""

from evaluation.results.consistency_views import (
    PairView,
    PoolView,
    views_of,
)
from evaluation.results.drilldown import (
    COUNT_LEAVES,
    DEFAULT_RULES,
    Drill,
    DrillRules,
    Test,
    drill,
    drill_rules,
    drill_tests,
    extra_is,
    status_in,
)
from evaluation.results.human import (
    RATING_LABELS,
    ExplanationRow,
    HumanBaselineRow,
    HumanSection,
    RatingRow,
    explanation_rows,
    human_baseline_rows,
    human_section,
    rating_rows,
)
from evaluation.results.leaderboards import (
    Leaderboard,
    Row,
    frame_text,
    leaderboard,
    run_label,
    succeeded_runs,
)
from evaluation.results.metrics import (
    CACHE_PREFIX,
    CACHE_SECONDS,
    PLAN_ERRORS,
    Disagreement,
    Judgment,
    RunResults,
    cache_key,
    cot_reasoning,
    disagreements,
    fingerprint,
    planned_requests,
    run_metrics,
    run_results,
    score_run,
    stored_verdicts,
)
from evaluation.results.outcomes import (
    ANSWERED,
    CORRECT,
    DISCRETE_TYPES,
    EMPTY,
    MISSING,
    OUTCOMES,
    RIGHT_OR_WRONG,
    UNPARSED,
    WRONG,
    Outcome,
    UnknownMetric,
    outcome,
    right_or_wrong,
    verdict_outcome,
)
from evaluation.results.paths import (
    RATE_NAMES,
    SHARE_PARENTS,
    Cell,
    cell,
    display,
    flat_metrics,
    group_n,
    is_leaf,
    is_rate,
    leaves,
    lookup,
    resolve,
    split_path,
)
from evaluation.results.per_category import (
    CHART_KINDS,
    ConsistencyRow,
    Series,
    SeriesRow,
    chart_image,
    consistency,
    find_series,
    series,
    series_groups,
)
from evaluation.results.specs import (
    MetricSpec,
    SeriesSpec,
    main_metrics,
    series_specs,
)

__all__ = [
    "ANSWERED",
    "CACHE_PREFIX",
    "CACHE_SECONDS",
    "CHART_KINDS",
    "CORRECT",
    "COUNT_LEAVES",
    "Cell",
    "ConsistencyRow",
    "DISCRETE_TYPES",
    "DEFAULT_RULES",
    "Disagreement",
    "Drill",
    "DrillRules",
    "EMPTY",
    "ExplanationRow",
    "HumanBaselineRow",
    "HumanSection",
    "Judgment",
    "Leaderboard",
    "MISSING",
    "MetricSpec",
    "OUTCOMES",
    "Outcome",
    "PLAN_ERRORS",
    "PairView",
    "PoolView",
    "RATE_NAMES",
    "RATING_LABELS",
    "RIGHT_OR_WRONG",
    "RatingRow",
    "Row",
    "RunResults",
    "SHARE_PARENTS",
    "Series",
    "SeriesRow",
    "SeriesSpec",
    "Test",
    "UNPARSED",
    "UnknownMetric",
    "WRONG",
    "cache_key",
    "cell",
    "chart_image",
    "consistency",
    "cot_reasoning",
    "disagreements",
    "display",
    "drill",
    "drill_rules",
    "drill_tests",
    "explanation_rows",
    "extra_is",
    "find_series",
    "fingerprint",
    "flat_metrics",
    "frame_text",
    "group_n",
    "human_baseline_rows",
    "human_section",
    "is_leaf",
    "is_rate",
    "leaderboard",
    "leaves",
    "lookup",
    "main_metrics",
    "outcome",
    "planned_requests",
    "rating_rows",
    "resolve",
    "right_or_wrong",
    "run_label",
    "run_metrics",
    "run_results",
    "score_run",
    "series",
    "series_groups",
    "series_specs",
    "split_path",
    "status_in",
    "stored_verdicts",
    "succeeded_runs",
    "verdict_outcome",
    "views_of",
]
