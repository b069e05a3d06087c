"""The demo's evaluation: a tiny-model run on every demo version, judged by the tiny chat model and
scored with the tiny scoring models its benchmark declares (CLIP, BERTScore), and the paper baselines
that need no model (the random one, and those a benchmark declares), so that the demo's leaderboards
and charts show computed numbers (`manage.py seed_demo`).

Registered with `annotation.demo` in `EvaluationConfig.ready`; it calls the services the `evaluate`,
`judge`, `score --run` and `baseline` commands call. The tiny models answer and judge at random: the numbers are
real computations, not meaningful scores. The tiny judge cannot write the judges' formats, so it judges with
`choices` decoding (its most likely allowed answer), which each judgment records.
"""

from evaluation import baseline_runs, benchmarks, judges, run_scoring, runs
from evaluation.models import EvaluationRun, RunModelMetric

RUN_MODEL, JUDGE_MODEL = "qwen2-vl", "causal-lm"
RUN_OPTIONS = {"backend_options": {"device": "cpu", "native_video": False}, "frame_policy": "uniform:2@64",
               "generation_params": {"max_new_tokens": 4}, "batch_size": 4}
JUDGE_PARAMS = {"max_new_tokens": 24}
# scoring model a benchmark declares → the tiny demo model that stands in for it (BERTScore reads the
# hidden states of the tiny BERT encoder built as the NLI model)
SCORING_MODELS = {"clip": "clip", "bertscore": "nli"}


def seed_demo_runs(*, versions, models: dict, user, say=lambda line: None) -> list[EvaluationRun]:
    """One finished, judged tiny-model run per demo version whose benchmark has an LLM judge (kept
    when there is one already); nothing without the tiny models."""
    if RUN_MODEL not in models or JUDGE_MODEL not in models:
        return []
    made = []
    for version in versions:
        kind = judges.kind_for_benchmark(version.benchmark.slug)
        if kind is None:
            continue
        run = EvaluationRun.objects.filter(version=version, model_id=models[RUN_MODEL]).order_by("pk").first()
        if run is None:
            say(f"Running the tiny {RUN_MODEL} model on {version} ...")
            run = runs.create_run(version, model_id=models[RUN_MODEL], user=user, **RUN_OPTIONS)
        if run.status != EvaluationRun.Status.SUCCEEDED:
            run = runs.start_run(run, workers="local", user=user)
        if run.status == EvaluationRun.Status.SUCCEEDED:
            say(f"Judging run {run.pk} with the tiny {JUDGE_MODEL} model ({kind}) ...")
            judges.judge_run(run, kind, judges.judge_spec(models[JUDGE_MODEL]), params=JUDGE_PARAMS,
                             decoding=judges.CHOICES)
        made.append(run)
    return made


def tiny_run(version, models: dict) -> EvaluationRun | None:
    """The demo's finished tiny-model run on `version`, if there is one."""
    return EvaluationRun.objects.filter(version=version, model_id=models.get(RUN_MODEL),
                                        status=EvaluationRun.Status.SUCCEEDED).order_by("pk").first()


def seed_demo_model_metrics(*, versions, models: dict, user, say=lambda line: None) -> list:
    """The model metrics (CLIP, BERTScore) each demo version's benchmark declares, computed for its
    tiny-model run with the tiny scoring models and kept with the run, as `score --run` keeps them
    (kept when computed already). Nothing is returned: the runs are listed by the run step."""
    for version in versions:
        kept = run_scoring.kept_models(benchmarks.get(version.benchmark.slug))
        wanted = {name: models[SCORING_MODELS[name]] for name in kept if SCORING_MODELS.get(name) in models}
        run = tiny_run(version, models) if wanted else None
        if run is None:
            continue
        done = set(RunModelMetric.objects.filter(run=run).values_list("kind", flat=True))
        todo = {name: model for name, model in wanted.items() if name not in done}
        if not todo:
            continue
        say(f"Scoring run {run.pk} with the tiny {', '.join(todo)} model(s) ...")
        try:
            rows = run_scoring.score_run_with_models(run, todo, device="cpu")
        except run_scoring.ScoringModelError as exc:
            say(f"No model metrics for run {run.pk}: {exc}")
            continue
        for row in rows:
            say(f"Kept {row.kind} of run {run.pk}: {', '.join(sorted(row.values))}")
    return []


BASELINE_SEED = 0


def demo_baselines(slug: str) -> list[baseline_runs.Baseline]:
    """The baselines of a benchmark that run without a model: `random` and those it declares."""
    found = []
    for name in ("random", *benchmarks.get(slug).baselines):
        maker = baseline_runs.BASELINE_CLASSES[name](seed=BASELINE_SEED)
        try:
            maker.check()
        except baseline_runs.BaselineError:  # it needs models (nli, unimodal): not part of the demo
            continue
        found.append(maker)
    return found


def seed_demo_baselines(*, versions, models: dict, user, say=lambda line: None) -> list[EvaluationRun]:
    """One run of every model-free baseline on every demo version whose answers it can give (kept when
    there is one already); a baseline with no answer for the version's questions (open answers) is skipped."""
    made = []
    for version in versions:
        for maker in demo_baselines(version.benchmark.slug):
            run = EvaluationRun.objects.filter(version=version, backend=baseline_runs.BACKEND,
                                               model_id=maker.model_id()).order_by("pk").first()
            if run is None:
                try:
                    run = baseline_runs.run_baseline(version, maker.name, seed=BASELINE_SEED, user=user)
                except baseline_runs.BaselineError as exc:
                    say(f"No {maker.name} baseline on {version}: {exc}")
                    continue
                say(f"Ran the {maker.name} baseline on {version}.")
            made.append(run)
    return made
