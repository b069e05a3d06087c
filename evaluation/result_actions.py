"""What a researcher starts from the results pages: an LLM judge over a run (or over the people's
free-text answers of a version's human baselines), the run's similarity
scoring (CLIP score, BERTScore), a paper baseline over a version (each a background `Job` on the `gpu`
queue, calling the services `manage.py judge`, `score --run` and `run_baseline` call), a
human-evaluation study over a version's runs (made at once, as `manage.py human_eval` makes it), and
an export of a version's or a run's results (the `export_results` job of `evaluation.exports`; the evaluation
kits' layouts, `evaluation.kits`, hold one run's predictions).

Only what the run's benchmark declares is offered and accepted (`judge_kinds`, `scoring_models`,
`baselines`, `human_evaluations`); anything else is a `ResultActionError` (400). The offers carry the
default model of each (the judge kind's, CLIP's, BERTScore's), which the page pre-selects when it is
registered. Every model is picked from the model registry (`generation.model_registry`): a job's params
name the registered entry, which the job resolves again when it runs.
"""

from __future__ import annotations

from dataclasses import dataclass

from annotation.crowd.models import Qualification
from annotation.models import BenchmarkVersion
from config.roles import has_role
from evaluation import (
    baseline_runs,
    benchmarks,
    exports,
    human_eval,
    judges,
    kits,
    named_parsers,
    run_scoring,
    runs,
    subsets,
)
from evaluation.models import EvaluationRun
from evaluation.similarity import CLIP_MODEL
from generation import jobs, model_registry
from generation.backends.base import BackendError
from generation.jobs import job_handler
from generation.registered_models import Use

JUDGE_JOB = "judge_run"
HUMAN_JUDGE_JOB = "judge_human_answers"
SCORE_JOB = "score_run_models"
BASELINE_JOB = "run_baseline"
HUMAN_CLIP_JOB = "score_human_answers"
METRIC_JOBS = (JUDGE_JOB, HUMAN_JUDGE_JOB, SCORE_JOB, BASELINE_JOB, HUMAN_CLIP_JOB)
HUMAN_PERFORMANCE = {human_eval.EXPERT: "an expert answers the sampled MCQ and Y/N questions",
                     human_eval.WRITTEN: "people write the generative answers for sampled videos"}
# the model pre-filled for each kept scoring model (BERTScore: bert-score's own English default)
SCORING_DEFAULTS = {"clip": CLIP_MODEL, "bertscore": "roberta-large"}
SCORING_LABELS = {"clip": "CLIP score", "bertscore": "BERTScore"}
# baselines that answer with a model, which the page asks for
BASELINES_WITH_MODELS = ("nli", "unimodal")
HUMAN_LABELS = {human_eval.RATING: "People rate generated responses",
                human_eval.VOTE: "People vote on explanations",
                human_eval.BASELINE: "Human baseline: people answer the version's requests"}
EXPORT_SOURCES = tuple(name for name, src in exports.SOURCES.items() if src.run_lookup)
EXPORT_FORMATS = exports.ALL_FORMATS  # the row formats, then the evaluation kits' layouts of one run's predictions


class ResultActionError(Exception):
    """The action cannot be started as asked (the benchmark does not support it, a model is missing, …)."""


@dataclass(frozen=True)
class Offer:
    name: str
    label: str
    default_model: str = ""
    needs_model: bool = True
    models: tuple = ()  # the registered models it may use (`generation.model_registry.entries`)


def _benchmark(version):
    return benchmarks.get(version.benchmark.slug)


def _default_judge(kind: str) -> str:
    try:
        return judges.default_model(kind)
    except judges.JudgeError:
        return ""


def _registered(use: str) -> tuple:
    return tuple(model_registry.entries(use))


def judge_offers(run: EvaluationRun) -> list[Offer]:
    return [Offer(kind, f"{kind} judge", _default_judge(kind), models=_registered(Use.JUDGE))
            for kind in _benchmark(run.version).judge_kinds]


def scoring_offers(run: EvaluationRun) -> list[Offer]:
    return [Offer(name, SCORING_LABELS.get(name, name), SCORING_DEFAULTS.get(name, ""),
                  models=_registered(run_scoring.USES[name]))
            for name in run_scoring.kept_models(_benchmark(run.version))]


def baseline_offers(version) -> list[Offer]:
    names = ["random", *(name for name in _benchmark(version).baselines if name != "random")]
    return [Offer(name, f"{name} baseline", needs_model=name in BASELINES_WITH_MODELS,
                  models=_registered(baseline_runs.MODEL_USES[name]) if name in baseline_runs.MODEL_USES else ())
            for name in names]


def clip_models() -> tuple:
    """The registered CLIP models (the CLIP score of people's answers)."""
    return _registered(Use.CLIP)


def human_offers(version) -> list[Offer]:
    names = [*_benchmark(version).human_evaluations, human_eval.BASELINE]
    return [Offer(name, HUMAN_LABELS.get(name, name), needs_model=False) for name in dict.fromkeys(names)]


def may_create_studies(user) -> bool:
    """Who may start human-evaluation studies (`human_eval.STUDY_MAKERS`)."""
    return has_role(user, *human_eval.STUDY_MAKERS)


def _model(model: str) -> str:
    model = (model or "").strip()
    if not model:
        raise ResultActionError("Choose a registered model.")
    return model


def _judge_model(model: str) -> str:
    """The name of the registered judge `model` names (the job resolves it again); ResultActionError."""
    try:
        return judges.registered_judge(_model(model)).name
    except judges.JudgeError as exc:
        raise ResultActionError(str(exc)) from None


def _scoring_model(name: str, model: str, slug: str = "") -> str:
    """The name of the registered scoring model (clip, bertscore) `model` names; ResultActionError."""
    try:
        return run_scoring.registered_model(name, _model(model), slug).name
    except run_scoring.ScoringModelError as exc:
        raise ResultActionError(str(exc)) from None


def _offered(name: str, offers: list[Offer], what: str, slug: str):
    if name not in {offer.name for offer in offers}:
        known = ", ".join(offer.name for offer in offers) or "none"
        raise ResultActionError(f"{slug} does not support the {what} {name!r} (it supports: {known}).")


# --- Judges ------------------------------------------------------------------------------------------

FREE_DECODING = judges.FREE


def _check_decoding(kind: str, decoding: str) -> None:
    if decoding not in judges.DECODINGS:
        raise ResultActionError(f"Unknown judge decoding {decoding!r}: one of {', '.join(judges.DECODINGS)}.")
    if decoding == judges.CHOICES and not judges.get_kind(kind).answer_choices:
        raise ResultActionError(f"The {kind} judge has no fixed answers to choose among.")


def _judge_progress(job):
    return lambda done, total: job.progress(100 * done / max(total, 1), f"{done} of {total} judge calls")


def start_judge(run: EvaluationRun, user, *, kind: str, model: str, decoding: str = judges.FREE):
    """Queue a judge job over `run` with judge `kind` (one its benchmark declares) on `model`, with
    `decoding` free (the authors') or choices (`evaluation.judges.base`)."""
    _offered(kind, judge_offers(run), "judge", run.version.benchmark.slug)
    _check_decoding(kind, decoding)
    return jobs.enqueue(JUDGE_JOB, params={"run": run.pk, "kind": kind, "judge_model": _judge_model(model),
                                           "decoding": decoding}, user=user)


@job_handler(JUDGE_JOB, queue="gpu", label="Judge a run")
def judge_job(job, *, run: int, kind: str, judge_model: str, decoding: str = judges.FREE) -> dict:
    found = EvaluationRun.objects.select_related("version__benchmark").get(pk=run)
    spec = judges.registered_spec(judge_model)
    job.progress(1, f"Judging run {run} with {judge_model}")
    stats = judges.judge_run(found, kind, spec, decoding=decoding, progress=_judge_progress(job))
    counts = judges.judgment_counts(found, kind, spec.model_id)
    return {"message": f"{stats.calls} judge calls; stored {counts['ok']} ok, {counts['unparsed']} unparsed, "
                       f"{counts['failed']} failed", "run": run, "counts": counts}


def human_judge_offers(version) -> list[Offer]:
    """The judge of people's free-text baseline answers, when the version has such a baseline."""
    if not human_eval.judged_studies(version):
        return []
    return [Offer(kind, f"{kind} judge", _default_judge(kind), models=_registered(Use.JUDGE))
            for kind in _benchmark(version).judge_kinds]


def start_human_judge(version, user, *, kind: str, model: str, decoding: str = judges.FREE):
    """Queue a judge job over the people's free-text answers of the version's human baselines, with judge
    `kind` on `model`, as a run's answers are judged."""
    _offered(kind, human_judge_offers(version), "judge of people's answers", version.benchmark.slug)
    _check_decoding(kind, decoding)
    return jobs.enqueue(HUMAN_JUDGE_JOB, params={"version": version.pk, "kind": kind,
                                                 "judge_model": _judge_model(model), "decoding": decoding},
                        user=user)


@job_handler(HUMAN_JUDGE_JOB, queue="gpu", label="Judge people's answers")
def human_judge_job(job, *, version: int, kind: str, judge_model: str, decoding: str = judges.FREE) -> dict:
    found = BenchmarkVersion.objects.select_related("benchmark").get(pk=version)
    spec = judges.registered_spec(judge_model)
    job.progress(1, f"Judging people's answers on {found} with {judge_model}")
    try:
        stats = human_eval.judge_version(found, spec, kind=kind, decoding=decoding, progress=_judge_progress(job))
    except human_eval.HumanEvalError as exc:
        raise RuntimeError(exc.message) from None
    return {"message": f"{stats.calls} judge calls over {stats.responses} answers; {stats.ok} ok, "
                       f"{stats.unparsed} unparsed, {stats.failed} failed, {stats.skipped} judged before",
            "version": version, "stats": stats.as_dict()}


# --- Named subsets and the paper's human performance ------------------------------------------------------

def make_subset(version, user, *, name: str, seed: int, per_group: int, videos: int | None = None, variants=()):
    """A named, reproducible subset of the version (`evaluation.subsets`); ResultActionError when refused."""
    try:
        return subsets.make_subset(version, name, seed=seed, per_group=per_group, videos=videos,
                                   variants=list(variants) or None, user=user)
    except subsets.SubsetError as exc:
        raise ResultActionError(exc.message) from None


def human_performance(version):
    """The benchmark's human-performance defaults (`Benchmark.human_performance`), or None."""
    return getattr(_benchmark(version), "human_performance", None)


def start_human_performance(version, user, *, who: str, seed: int, size: int | None = None,
                            qualification: str = "", k: int = 1):
    """The paper's expert baseline (`size` questions per task) or written human answers (`size` videos)."""
    if human_performance(version) is None:
        raise ResultActionError(f"{version.benchmark.slug} declares no human performance study.")
    if who not in HUMAN_PERFORMANCE:
        raise ResultActionError(f"Choose {' or '.join(HUMAN_PERFORMANCE)}.")
    if who == human_eval.EXPERT:
        required = None
        if qualification.strip():
            required = Qualification.objects.filter(name=qualification.strip()).first()
            if required is None:
                raise ResultActionError(f"There is no qualification {qualification.strip()!r}.")
        return human_eval.create_expert_baseline(version, curator=user, seed=seed, per_group=size,
                                                 qualification=required)
    return human_eval.create_written_baseline(version, curator=user, seed=seed, videos=size, k=k)


def human_clip_offered(version) -> bool:
    """Whether the version's people's written answers can get a CLIP score (a CLIP-scored benchmark)."""
    return "clip" in _benchmark(version).scoring_models and bool(human_eval.judged_studies(version))


def start_human_clip(version, user, *, model: str = ""):
    """Queue the CLIP scoring of the people's written answers of the version's baseline_runs."""
    if not human_clip_offered(version):
        raise ResultActionError("This version has no people's written answers to score with CLIP.")
    return jobs.enqueue(HUMAN_CLIP_JOB, params={"version": version.pk,
                                                "clip_model": _scoring_model("clip", model or CLIP_MODEL)}, user=user)


@job_handler(HUMAN_CLIP_JOB, queue="gpu", label="CLIP score of people's answers")
def human_clip_job(job, *, version: int, clip_model: str) -> dict:
    found = BenchmarkVersion.objects.select_related("benchmark").get(pk=version)
    job.progress(5, f"Loading the CLIP model {clip_model}")
    try:
        chosen = run_scoring.registered_model("clip", clip_model)
        clip = run_scoring.load_choice("clip", chosen, found.benchmark.slug)
    except run_scoring.ScoringModelError as exc:
        raise RuntimeError(str(exc)) from None
    scored = []
    for study in human_eval.judged_studies(found):
        job.progress(30, f"Scoring the answers of {study.slug}")
        try:
            scored.append(human_eval.score_human_baseline(study, clip=clip, model_id=chosen.model_id).study.slug)
        except human_eval.HumanEvalError:
            continue
    return {"message": f"CLIP score of the written answers of {len(scored)} stud{'y' if len(scored) == 1 else 'ies'}",
            "version": version, "studies": scored}


# --- Similarity scoring ------------------------------------------------------------------------------

def start_scoring(run: EvaluationRun, user, *, models: dict[str, str]):
    """Queue the scoring of `run` with the kept scoring models named (name → model id)."""
    offers = scoring_offers(run)
    for name in models:
        _offered(name, offers, "scoring model", run.version.benchmark.slug)
    if not models:
        raise ResultActionError("Choose a scoring model.")
    chosen = {name: _scoring_model(name, model, run.version.benchmark.slug) for name, model in models.items()}
    return jobs.enqueue(SCORE_JOB, params={"run": run.pk, "models": chosen}, user=user)


@job_handler(SCORE_JOB, queue="gpu", label="Score a run with its scoring models")
def score_job(job, *, run: int, models: dict, parser: str = named_parsers.DEFAULT) -> dict:
    found = EvaluationRun.objects.select_related("version__benchmark").get(pk=run)
    kept = run_scoring.score_run_with_models(found, models, parser=parser, progress=job.progress)
    return {"message": f"Kept {', '.join(row.kind for row in kept) or 'nothing'} with run {run}", "run": run}


# --- Baselines ---------------------------------------------------------------------------------------

def start_baseline(version, user, *, baseline: str, model: str = "", seed: int = 0, limit: int | None = None):
    """Queue a paper baseline (one the version's benchmark supports) over the frozen `version`."""
    offers = {offer.name: offer for offer in baseline_offers(version)}
    _offered(baseline, list(offers.values()), "baseline", version.benchmark.slug)
    models = [_model(model)] if offers[baseline].needs_model else []
    try:
        baseline_runs.registered_models(baseline, models)  # refused here rather than in the job, which resolves them
    except baseline_runs.BaselineError as exc:
        raise ResultActionError(str(exc)) from None
    if not version.frozen:
        raise ResultActionError(f"Version {version} is not frozen: freeze it before evaluating on it.")
    return jobs.enqueue(BASELINE_JOB, params={"version": version.pk, "baseline": baseline, "models": models,
                                              "seed": seed, "limit": limit}, user=user)


@job_handler(BASELINE_JOB, queue="gpu", label="Run a baseline")
def baseline_job(job, *, version: int, baseline: str, models: list, seed: int = 0, limit: int | None = None) -> dict:
    found = BenchmarkVersion.objects.select_related("benchmark").get(pk=version)
    job.progress(1, f"Running the {baseline} baseline")
    try:
        run = baseline_runs.run_baseline(found, baseline, seed=seed, limit=limit, user=job.job.requested_by,
                                     **baseline_runs.registered_models(baseline, models))
    except (baseline_runs.BaselineError, BackendError, runs.RunConfigError) as exc:
        raise RuntimeError(str(exc)) from None
    return {"message": f"Run {run.pk}: {run.status}. {run.message}".strip(), "run": run.pk}


# --- Human evaluation --------------------------------------------------------------------------------

def start_human_evaluation(version, user, *, kind: str, run_ids=(), sample: int | None = None, k: int = 3):
    """Create a human-evaluation study of `kind` (one the benchmark supports) over `version` or its runs."""
    _offered(kind, human_offers(version), "human evaluation", version.benchmark.slug)
    fields = {"curator": user, "sample": sample, "k": k}
    if kind == human_eval.BASELINE:
        return human_eval.create_human_baseline_study(version, **fields)
    chosen = list(version.runs.filter(pk__in=list(run_ids)).select_related("version__benchmark"))
    if not chosen or len(chosen) != len(set(run_ids)):
        raise ResultActionError("Choose one or more runs of this version.")
    return human_eval.study_kind(kind).create(chosen, **fields)


# --- Exports -----------------------------------------------------------------------------------------

def start_export(version, user, *, what: str, fmt: str, scope: str):
    """Queue an export of `what` as `fmt` for the version's runs (`scope` "all") or one of them (its id)."""
    if what not in EXPORT_SOURCES:
        raise ResultActionError(f"Choose what to export: {', '.join(EXPORT_SOURCES)}.")
    if fmt not in EXPORT_FORMATS:
        raise ResultActionError(f"Choose a format: {', '.join(EXPORT_FORMATS)}.")
    run_ids = list(version.runs.values_list("pk", flat=True))
    if scope != "all":
        if not scope.isdigit() or int(scope) not in run_ids:
            raise ResultActionError("The scope is all runs of this version or one of them.")
        run_ids = [int(scope)]
    if not run_ids:
        raise ResultActionError("This version has no run to export.")
    try:
        exports.check_request(what, fmt)
    except exports.ExportError as exc:
        raise ResultActionError(str(exc)) from None
    if fmt in kits.names() and len(run_ids) != 1:
        raise ResultActionError(f"A {exports.FORMAT_LABELS[fmt]} file holds one run's predictions: choose one run "
                                "as the scope.")
    return exports.enqueue_export(user, what, fmt, runs=run_ids)
