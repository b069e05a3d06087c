"""Drill-down: the requests behind a metric of a run, narrowed segment by segment with the benchmark's
`DrillRules` (see the package docstring)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from evaluation import benchmarks, parsers
from evaluation.benchmarks import maia as maia_module
from evaluation.benchmarks import nleye as nleye_module
from evaluation.models import EvaluationRun
from evaluation.results.consistency_views import VIEWS
from evaluation.results.metrics import RunResults, planned_requests, run_results
from evaluation.results.outcomes import ANSWERED, CORRECT, EMPTY, MISSING, UNPARSED, WRONG, Outcome, UnknownMetric
from evaluation.results.paths import _ABSENT, display, group_n, is_leaf, is_rate, resolve, split_path

Test = Callable[[Any, Outcome], bool]


@dataclass(frozen=True)
class DrillRules:
    """How the segments of a metric path narrow a benchmark's requests (see the package docstring)."""

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


def drill(run: EvaluationRun, path: str, *, outcome_filter: str = "", view: str = "", view_cell: str = "",
          parser: str = parsers.DEFAULT) -> Drill:
    """The requests behind the metric at `path` of a run scored under `parser` (UnknownMetric when the
    run has none there); optionally only those with one outcome, or only the items of one cell of a
    consistency view."""
    results = run_results(run, parser)
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
