"""The demo's evaluation: a tiny-model run on every demo version, judged by the tiny chat model, so
that the demo's leaderboard and charts show computed numbers (`manage.py seed_demo`).

Registered with `annotation.demo` in `EvaluationConfig.ready`; it calls the services the `evaluate`
and `judge` commands call. The tiny models answer and judge at random: the numbers are real
computations, not meaningful scores.
"""

from evaluation import judges, runs
from evaluation.models import EvaluationRun

RUN_MODEL, JUDGE_MODEL = "qwen2-vl", "causal-lm"
RUN_OPTIONS = {"backend_options": {"device": "cpu", "native_video": False}, "frame_policy": "uniform:2@64",
               "generation_params": {"max_new_tokens": 4}, "batch_size": 4}
JUDGE_PARAMS = {"max_new_tokens": 24}


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
            judges.judge_run(run, kind, judges.judge_spec(models[JUDGE_MODEL]), params=JUDGE_PARAMS)
        made.append(run)
    return made
