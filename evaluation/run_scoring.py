"""Scoring a stored run with its scoring models (CLIP for BlackSwan's CLIP score, a BERTScore model for
MAIA's), keeping what they computed with the run (`evaluation.model_metrics`) so that the results pages
show it. `manage.py score` loads its models with `load_model`; the results page's scoring job calls
`score_run_with_models`, which scores the run as `manage.py score --run RUN_ID --clip-model …` does.
"""

from __future__ import annotations

from collections.abc import Callable

from evaluation import benchmarks, judges, model_metrics, parsers, readings, runner, scoring
from evaluation.models import EvaluationRun, RunModelMetric
from evaluation.similarity import BertScore
from generation.backends import registry

# the scoring models that are kept with a run (the judge's verdicts are stored as judgments instead)
KEPT_MODELS = tuple(model_metrics.KEYS)


class ScoringModelError(Exception):
    """A scoring model cannot be used as asked (not one the benchmark uses, or it does not load)."""


def load_model(name: str, model: str, slug: str, *, device: str | None = None, bertscore_layers: int | None = None):
    """The scoring model `name` (clip, bertscore, judge) of benchmark `slug`, loaded from `model`."""
    try:
        if name == "clip":
            return registry.load_backend("clip", model, **({"device": device} if device else {}))
        if name == "bertscore":
            return BertScore(model, num_layers=bertscore_layers, device=device)
        return judges.for_benchmark(slug, model)
    except (OSError, ValueError, RuntimeError) as exc:
        raise ScoringModelError(f"Cannot load the {name} model {model!r}: {exc}") from None


def kept_models(benchmark) -> tuple[str, ...]:
    """The scoring models of a benchmark whose metrics are kept with a run (CLIP, BERTScore)."""
    return tuple(name for name in benchmark.scoring_models if name in KEPT_MODELS)


def score_run_with_models(run: EvaluationRun, models: dict[str, str], *, parser: str = parsers.DEFAULT,
                          device: str | None = None,
                          progress: Callable[[float, str], None] | None = None) -> list[RunModelMetric]:
    """Score `run` with the kept scoring models named in `models` (name → model id or local folder) and
    keep the computed metrics with the run; the rows kept. Each name must be one the run's benchmark uses."""
    benchmark = benchmarks.get(run.version.benchmark.slug)
    allowed = kept_models(benchmark)
    unknown = sorted(set(models) - set(allowed))
    if unknown or not models:
        raise ScoringModelError(f"{benchmark.slug} is scored with {', '.join(allowed) or 'no scoring model'}; "
                                f"not {', '.join(unknown) or 'nothing'}.")
    report = progress or (lambda percent, message: None)
    report(5, "Planning the run's requests")
    requests = [planned.request for planned in runner.plan(run)]
    loaded = dict.fromkeys(benchmark.scoring_models)
    for name, model in models.items():
        report(10, f"Loading the {name} model {model}")
        loaded[name] = load_model(name, model, benchmark.slug, device=device)
    report(30, "Scoring")
    metrics = scoring.score_predictions(benchmark, requests, scoring.run_predictions(run), parser=parser, **loaded)
    readings.store_readings(run, requests, parser)
    return model_metrics.store(run, metrics, dict(models), parser)
