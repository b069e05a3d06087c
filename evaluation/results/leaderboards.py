"""The leaderboard of a version: its succeeded runs × the benchmark's main metrics."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from evaluation.models import EvaluationRun
from evaluation.results.metrics import RunResults, run_results
from evaluation.results.paths import Cell, cell
from evaluation.results.specs import MetricSpec, main_metrics
from generation.frames import FramePolicy


def frame_text(run: EvaluationRun) -> str:
    """The run's frame policy as written on the command line (`uniform:8@448`)."""
    if not run.frame_policy:
        return ""
    try:
        return FramePolicy.from_dict(run.frame_policy).spec()
    except (KeyError, TypeError, ValueError):
        return str(run.frame_policy)


def run_label(run: EvaluationRun) -> str:
    """A short name of a run for tables and chart legends: #id, model name, the non-default strategies
    (a shuffled option order included) and the subset it was restricted to."""
    name = run.model_id.rstrip("/").rsplit("/", 1)[-1] or run.model_id
    settings = [value for value in (run.input_strategy, run.prompting, run.option_order)
                if value not in ("", "default", "standard", "release")]
    if run.subset_id:
        settings.append(f"subset {run.subset.name}")
    return f"#{run.pk} {name}" + (f" ({', '.join(settings)})" if settings else "")


def succeeded_runs(version):
    return (version.runs.filter(status=EvaluationRun.Status.SUCCEEDED).select_related("version__benchmark", "subset")
            .order_by("model_id", "pk"))



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
