"""The human-evaluation section of a version's results: crowd baselines, people's ratings of generated
responses and their votes on explanations (`evaluation.human_eval`) beside the models' numbers. The run
metrics a ratings or votes table shows are those its benchmark declares for the section (`ratings`,
`explanation_votes`: `Benchmark.results_sections`); a benchmark without the section gets no such table."""

from __future__ import annotations

from dataclasses import dataclass, field

from evaluation import benchmarks, human_eval
from evaluation.models import EvaluationRun
from evaluation.results.leaderboards import Leaderboard
from evaluation.results.paths import Cell, cell, display
from evaluation.results.per_category import series_groups
from evaluation.results.specs import series_specs


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
    judge: dict | None = None  # free-text answers: the judge model their verdicts come from
    unjudged_answers: int = 0
    series: list[tuple[str, list[tuple[str, Cell]]]] = field(default_factory=list)  # per category: (title, cells)
    subset: str = ""  # the named subset of the version the people answered ("" for a sample or all)


@dataclass
class RatingRow:
    """People's mean ratings of a run's responses to one variant, next to the run's metrics of that variant
    that the benchmark's ratings section shows (`metrics`, in the section's order)."""

    run: EvaluationRun
    label: str
    variant: str
    metrics: list[Cell]
    means: dict[str, str]  # scale → mean as shown
    items: int
    ratings: int
    alpha: dict[str, str]  # scale → Krippendorff's alpha as shown


@dataclass
class ExplanationRow:
    """The share of a run's explanations people found valid (≥ 1 vote), beside the run's metrics that the
    benchmark's votes section shows (the judge's; `metrics`: (path, cell), the cell None for people's row)."""

    label: str
    run: EvaluationRun | None
    metrics: list[tuple[str, Cell | None]]
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


RATINGS_SECTION, VOTES_SECTION = "ratings", "explanation_votes"  # the kinds of `Benchmark.results_sections`
RATING_LABELS = {"correctness": "Correctness (1–5)", "depth": "Depth (1–5)", "detail": "Detail (1–5)",
                 "visual_entailment": "Visual entailment (0/1)"}


def _shown(value) -> str:
    return "—" if value is None else f"{value:.2f}"


def _series(version, metrics: dict) -> list[tuple[str, list[tuple[str, Cell]]]]:
    """The benchmark's per-category series (e.g. CVRR-ES accuracy per dimension) of the people's metrics."""
    found = []
    for spec in series_specs(version.benchmark.slug):
        groups = series_groups(spec, [metrics])
        cells = [(spec.labels.get(group, group), cell(metrics, spec.path(group), rate=spec.rate)) for group in groups]
        if any(c.present for _, c in cells):
            found.append((spec.title, cells))
    return found


def human_baseline_rows(version, specs) -> list[HumanBaselineRow]:
    rows = []
    for group in human_eval.baseline_groups(version):
        try:
            found = human_eval.human_baseline_results(group)
        except (human_eval.HumanEvalError, ValueError, KeyError) as exc:
            rows.append(HumanBaselineRow("Human (crowd)", [s.slug for s in group], [], 0, 0, 0, "", {}, {},
                                         error=str(exc)))
            continue
        cells = [cell(found["metrics"], spec.path, rate=spec.rate, n_key=spec.n) for spec in specs]
        rows.append(HumanBaselineRow(human_label(found), found["studies"], cells, found["annotators"],
                                     found["requests"], found["answered"], found["input_strategy"],
                                     found["per_annotator"], found["agreement"], found["items_waiting"],
                                     judge=found.get("judge"), unjudged_answers=found.get("unjudged_answers", 0),
                                     series=_series(version, found["metrics"]), subset=found.get("subset", "")))
    return rows


def human_label(found: dict) -> str:
    """The Human row's name: who answered, and the subset they answered."""
    subset = found.get("subset") or ""
    return f"Human ({found.get('who') or human_eval.CROWD}" + (f", subset {subset})" if subset else ")")


def _section_metrics(version, kind: str):
    """The run metrics the version's benchmark shows in its results section `kind`; None without the section."""
    benchmark = benchmarks.find(version.benchmark.slug)
    section = benchmark.results_section(kind) if benchmark is not None else None
    return None if section is None else section.metrics


def rating_rows(version, board: Leaderboard) -> tuple[list[RatingRow], list[str]]:
    shown = _section_metrics(version, RATINGS_SECTION)
    studies = human_eval.studies_of(human_eval.RATING, version=version) if shown is not None else []
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
            [cell(row.results.metrics, metric.path_for(variant), rate=metric.rate, n_key=metric.n) for metric in shown],
            {name: _shown(figures["mean"]) for name, figures in scales.items()},
            group["items"], max(figures["ratings"] for figures in scales.values()),
            {name: _shown(figures["alpha"]["value"]) for name, figures in scales.items()}))
    return rows, [RATING_LABELS[name] for name in human_eval.SCALE_NAMES]


def explanation_rows(version, board: Leaderboard) -> tuple[list[ExplanationRow], list[str]]:
    shown = _section_metrics(version, VOTES_SECTION)
    studies = human_eval.studies_of(human_eval.VOTE, version=version) if shown is not None else []
    if not studies:
        return [], []
    found = human_eval.study_kind(human_eval.VOTE).results(studies)
    by_run = {row.run.pk: row for row in board.rows}
    rows, levels = [], []
    for group in found["groups"]:
        levels = levels if len(levels) >= len(group["votes"]) else list(group["votes"])
        valid = display(group["valid_rate"], True)
        if group["group"] == "humans":
            rows.append(ExplanationRow("People's explanations", None, [(metric.path, None) for metric in shown],
                                       valid, group["explanations"], group["votes"], []))
            continue
        row = by_run.get(group["run"])
        if row is None:
            continue
        judged = [(metric.path, cell(row.results.metrics, metric.path, rate=metric.rate, n_key=metric.n))
                  for metric in shown]
        rows.append(ExplanationRow(row.label, row.run, judged, valid, group["explanations"], group["votes"],
                                   group["judge_agreement"]))
    return rows, levels


def human_section(version, board: Leaderboard) -> HumanSection:
    """What people measured on this version: baseline rows for the leaderboard, ratings of responses and the
    validity of explanations beside the run metrics the benchmark's sections show."""
    ratings, scales = rating_rows(version, board)
    explanations, levels = explanation_rows(version, board)
    return HumanSection(human_baseline_rows(version, board.specs), ratings, scales, explanations, levels)
