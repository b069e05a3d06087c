"""The main metrics (leaderboard columns) and per-category series of a benchmark: each benchmark
declares its own in its module (`Benchmark.main_metrics`, `Benchmark.series`); these read them by slug."""

from __future__ import annotations

from dataclasses import dataclass, field

from evaluation import benchmarks


@dataclass(frozen=True)
class MetricSpec:
    path: str
    label: str
    n: str = "n"  # the count next to the metric (a path relative to the metric's group)
    rate: bool = True


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


def main_metrics(slug: str) -> tuple[MetricSpec, ...]:
    """The leaderboard columns of the registered benchmark `slug` (none for an unknown one)."""
    return tuple(getattr(benchmarks.find(slug), "main_metrics", ()))


def series_specs(slug: str) -> tuple[SeriesSpec, ...]:
    """The per-category series of the registered benchmark `slug` (none for an unknown one)."""
    return tuple(getattr(benchmarks.find(slug), "series", ()))
