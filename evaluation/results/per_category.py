"""Per-category series of a version (and their charts), and the consistency views of its leaderboard."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from django.core.cache import cache

from evaluation import benchmarks, plots
from evaluation.models import EvaluationRun
from evaluation.results.consistency_views import views_of
from evaluation.results.leaderboards import Leaderboard, leaderboard
from evaluation.results.metrics import CACHE_SECONDS
from evaluation.results.outcomes import UnknownMetric
from evaluation.results.paths import _ABSENT, Cell, cell, lookup
from evaluation.results.specs import SeriesSpec, series_specs


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
    benchmark = benchmarks.find(board.version.benchmark.slug)
    out = []
    for name, view in views_of(benchmark).items():
        rows = [ConsistencyRow(row.run, row.label, row.results.views[name]) for row in board.rows
                if name in row.results.views and row.results.views[name]["n"]]
        out.append((name, view.title, rows))
    return out
