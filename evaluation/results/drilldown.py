"""Drill-down: the requests behind a metric of a run, narrowed segment by segment with the benchmark's
`DrillRules` (see the package docstring). Each benchmark declares its rules in its own module
(`Benchmark.drill_rules`, built from `DrillRules`, `COUNT_LEAVES`, `status_in` and `extra_is`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from evaluation import benchmarks, named_parsers
from evaluation.models import EvaluationRun
from evaluation.results.metrics import RunResults, planned_requests, run_results
from evaluation.results.outcomes import CORRECT, EMPTY, MISSING, UNPARSED, Outcome, UnknownMetric
from evaluation.results.paths import _ABSENT, display, group_n, is_leaf, is_rate, resolve, split_path

Test = Callable[[Any, Outcome], bool]


@dataclass(frozen=True)
class DrillRules:
    """How the segments of a metric path narrow a benchmark's requests (see the package docstring)."""

    keyed: dict[str, Callable[[Any, Outcome], Any]] = field(default_factory=dict)
    segments: dict[str, Test] = field(default_factory=dict)
    leaves: dict[str, Test] = field(default_factory=dict)


def status_in(*statuses: str) -> Test:
    """A request whose first response was scored with one of `statuses`."""
    return lambda request, found: found.status in statuses


def extra_is(key: str, value) -> Test:
    """A request whose `extra[key]` is `value`."""
    return lambda request, found: request.extra.get(key) == value


COUNT_LEAVES: dict[str, Test] = {
    "correct": status_in(CORRECT),
    "missing": status_in(MISSING),
    "unparsed": status_in(UNPARSED, EMPTY),
    "empty": status_in(EMPTY),
}
DEFAULT_RULES = DrillRules(leaves=dict(COUNT_LEAVES))  # a benchmark that declares none: variants and counts

def drill_rules(benchmark) -> DrillRules:
    """The benchmark's own rules (`Benchmark.drill_rules`), else the variants and the count leaves."""
    return getattr(benchmark, "drill_rules", None) or DEFAULT_RULES


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
          parser: str = named_parsers.DEFAULT) -> Drill:
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
        variants = benchmark.consistency_views[view].variants
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
