"""Scoring a stored run with its scoring models (CLIP for BlackSwan's CLIP score, a BERTScore model for
MAIA's), keeping what they computed with the run (`evaluation.model_metrics`) so that the results pages
show it. `manage.py score` loads its models with `load_model`; the results page's scoring job calls
`score_run_with_models`, which scores the run as `manage.py score --run RUN_ID --clip-model …` does.
Every scoring model is a registered one (`generation.model_registry`): named by its registry name or by the
model id or folder its entry holds; what is kept with the run is the entry's model id.
"""

from __future__ import annotations

from collections.abc import Callable

from evaluation import benchmarks, judges, model_metrics, named_parsers, runner, scoring, stored_readings
from evaluation.models import EvaluationRun, RunModelMetric
from evaluation.similarity import BertScore
from generation import model_registry
from generation.registered_models import Use

# the scoring models that are kept with a run (the judge's verdicts are stored as judgments instead)
KEPT_MODELS = tuple(model_metrics.KEYS)
USES = {"clip": Use.CLIP, "bertscore": Use.BERTSCORE, "judge": Use.JUDGE}


class ScoringModelError(Exception):
    """A scoring model cannot be used as asked (not one the benchmark uses, or it does not load)."""


def registered_model(name: str, model: str, slug: str = "") -> model_registry.ModelChoice:
    """The registered model `model` names for scoring model `name` (clip, bertscore, judge; "default" is the
    judge kind's default model); ScoringModelError when the registry refuses it."""
    try:
        if name == "judge":
            kind = judges.kind_for_benchmark(slug) if slug else None
            if model == judges.DEFAULT_MODEL and kind is not None:
                model = judges.default_model(kind)
            return judges.registered_judge(model)
        if name not in USES:
            raise ScoringModelError(f"Unknown scoring model {name!r}; choose one of {', '.join(USES)}.")
        return model_registry.choose(model, use=USES[name])
    except (model_registry.ModelRefused, judges.JudgeError) as exc:
        raise ScoringModelError(str(exc)) from None


def load_model(name: str, model: str, slug: str, *, device: str | None = None, bertscore_layers: int | None = None):
    """The scoring model `name` (clip, bertscore, judge) of benchmark `slug`: the registered model `model`
    names (`registered_model`), loaded."""
    return load_choice(name, registered_model(name, model, slug), slug, device=device,
                       bertscore_layers=bertscore_layers)


def load_choice(name: str, chosen: model_registry.ModelChoice, slug: str, *, device: str | None = None,
                bertscore_layers: int | None = None):
    """Scoring model `name` loaded from a registered model."""
    try:
        if name == "clip":
            return chosen.load(**({"device": device} if device else {}))
        if name == "bertscore":
            return BertScore(chosen.model_id, num_layers=bertscore_layers or chosen.options.get("num_layers"),
                             device=device or chosen.options.get("device"))
        return judges.for_benchmark(slug, chosen.model_id, backend=chosen.backend, revision=chosen.revision,
                                    backend_options=chosen.options)
    except (OSError, ValueError, RuntimeError) as exc:
        raise ScoringModelError(f"Cannot load the {name} model {chosen.name}: {exc}") from None


def kept_models(benchmark) -> tuple[str, ...]:
    """The scoring models of a benchmark whose metrics are kept with a run (CLIP, BERTScore)."""
    return tuple(name for name in benchmark.scoring_models if name in KEPT_MODELS)


def score_run_with_models(run: EvaluationRun, models: dict[str, str], *, parser: str = named_parsers.DEFAULT,
                          device: str | None = None,
                          progress: Callable[[float, str], None] | None = None) -> list[RunModelMetric]:
    """Score `run` with the kept scoring models named in `models` (name → a registered model: its name, or the
    model id or folder its entry holds) and keep the computed metrics with the run, under the entries' model
    ids; the rows kept. Each name must be one the run's benchmark uses."""
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
    used = {}
    for name, model in models.items():
        report(10, f"Loading the {name} model {model}")
        chosen = registered_model(name, model, benchmark.slug)
        loaded[name] = load_choice(name, chosen, benchmark.slug, device=device)
        used[name] = chosen.model_id
    report(30, "Scoring")
    metrics = scoring.score_predictions(benchmark, requests, scoring.run_predictions(run), parser=parser, **loaded)
    stored_readings.store_readings(run, requests, parser)
    return model_metrics.store(run, metrics, used, parser)
