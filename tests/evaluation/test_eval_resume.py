"""Resuming runs whose workers died: a separate `manage.py evaluate` process is killed with SIGKILL
in the middle of a run, and resuming it leaves exactly one prediction per (request, sample);
a real Celery worker runs a run's chunks from the `gpu` queue.

These tests commit (transaction=True) so that the other process and the worker thread see the
data: the SQLite test database is a file (tests/conftest.py), opened in WAL mode.
"""

import os
import signal
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest
from celery.contrib.testing.worker import start_worker
from django.core.management import call_command
from django.db import connection

from config.celery import app as celery_app
from evaluation import runs, tasks
from evaluation.models import EvaluationRun, Prediction
from generation.models import Job
from tests.conftest import ingest_path
from tests.eval_support import count_model_calls, database_url, make_version, use_toy_benchmark
from tests.waiting import poll

ROOT = Path(__file__).resolve().parents[2]
ITEMS = 40

WORKER_SECONDS = 120.0  # a worker starts and loads tiny models before its first answer


@pytest.fixture(autouse=True)
def toy(monkeypatch):
    return use_toy_benchmark(monkeypatch)


def worker_env(media_root: Path, var_dir: Path) -> dict:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("CELERY_", "DJANGO_"))}
    env.update(DATABASE_URL=database_url(connection.settings_dict), MEDIA_ROOT=str(media_root),
               PLATFORM_VAR_DIR=str(var_dir), HF_HUB_OFFLINE="1", PYTHONUNBUFFERED="1", DJANGO_DEBUG="true")
    return env


@pytest.mark.django_db(transaction=True)
def test_a_run_killed_with_sigkill_resumes_with_exactly_one_prediction_per_sample(
        astronaut, tiny_models_dir, tiny_registry, media_root, tmp_path):
    image = ingest_path(astronaut)
    version = make_version("killed", [(f"item-{i:02d}", {"premise": image}, ["open", "sampled"])
                                      for i in range(ITEMS)])
    expected = {(f"item-{i:02d}:open", 0) for i in range(ITEMS)} | \
        {(f"item-{i:02d}:sampled", s) for i in range(ITEMS) for s in range(3)}

    command = [sys.executable, "-m", "tests.eval_support", "evaluate", "--benchmark", "cvrr", "--version", "killed",
               "--model", str(tiny_models_dir / "causal-lm"), "--backend", "causal_lm", "--input", "text_only",
               "--batch-size", "1", "--chunk-size", "8", "--max-new-tokens", "5"]
    worker = subprocess.Popen(command, cwd=ROOT, env=worker_env(media_root, tmp_path / "var"),
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        made = poll(lambda: Prediction.objects.count(), lambda n: n >= 6 or worker.poll() is not None,
                    timeout=WORKER_SECONDS)
        os.kill(worker.pid, signal.SIGKILL)
        output = worker.communicate(timeout=30)[0].decode(errors="replace")
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.wait()
    assert worker.returncode == -signal.SIGKILL, output
    run = EvaluationRun.objects.get(version=version)
    before = {(p.request_id, p.sample_index): (p.pk, p.raw_output) for p in Prediction.objects.filter(run=run)}
    assert made <= len(before) < len(expected), "the worker was killed in the middle of the run"
    assert run.status == EvaluationRun.Status.RUNNING  # it died without a word
    assert Job.objects.get(pk=run.job_id).status == Job.Status.RUNNING

    call_command("evaluate", "--resume", str(run.pk))

    run.refresh_from_db()
    assert run.status == EvaluationRun.Status.SUCCEEDED, run.message
    rows = list(Prediction.objects.filter(run=run).values_list("request_id", "sample_index", "error"))
    assert len(rows) == len(expected) == run.total_predictions  # none twice ...
    assert {(r, s) for r, s, _ in rows} == expected  # ... and none missing
    assert all(error == "" for _, _, error in rows)
    kept = {(p.request_id, p.sample_index): (p.pk, p.raw_output) for p in Prediction.objects.filter(run=run)}
    assert all(kept[key] == value for key, value in before.items())  # what was made before the kill stays
    assert Job.objects.get(pk=run.job_id).status == Job.Status.SUCCEEDED
    old_jobs = Job.objects.filter(kind="evaluation_run").exclude(pk=run.job_id)
    assert [(j.status, j.message) for j in old_jobs] == [(Job.Status.FAILED, "Interrupted; the run was resumed")]


@contextmanager
def celery_worker():
    """An embedded worker thread on the in-memory broker, eager execution off, listening on `gpu`."""
    celery_app.conf.update(task_always_eager=False, broker_url="memory://",
                           broker_transport_options={"polling_interval": 0.05})
    skip_checks = os.environ.get("CELERY_SKIP_CHECKS")
    os.environ["CELERY_SKIP_CHECKS"] = "1"
    try:
        with start_worker(celery_app, perform_ping_check=False, pool="solo", concurrency=1, queues=["gpu"],
                          shutdown_timeout=30) as worker:
            yield worker
    finally:
        celery_app.conf.update(task_always_eager=True, broker_transport_options={})
        if skip_checks is None:
            os.environ.pop("CELERY_SKIP_CHECKS", None)
        else:
            os.environ["CELERY_SKIP_CHECKS"] = skip_checks


@pytest.mark.django_db(transaction=True)
def test_a_celery_worker_on_the_gpu_queue_runs_the_chunks(astronaut, tiny_models_dir, monkeypatch):
    loader = count_model_calls(monkeypatch)
    image = ingest_path(astronaut)
    version = make_version("celery", [(f"item-{i}", {"premise": image}, ["open"]) for i in range(5)])
    run = runs.create_run(version, model_id=str(tiny_models_dir / "causal-lm"), backend="causal_lm",
                          input_strategy="text_only", chunk_size=2, generation_params={"max_new_tokens": 5})
    seen = []
    with celery_worker():
        run = runs.start_run(run, workers="celery")
        run = runs.wait(run, poll_seconds=0.05, timeout=120, on_progress=seen.append)
    tasks.WORKER_BACKENDS.clear()
    assert run.status == EvaluationRun.Status.SUCCEEDED, run.message
    assert Prediction.objects.filter(run=run).count() == 5
    assert list(run.chunks.values_list("status", "attempts")) == [("done", 1)] * 3
    assert len(loader.loaded) == 1  # the worker kept its model from one chunk to the next
    assert len(loader.requests) == 5
    job = Job.objects.get(pk=run.job_id)
    assert (job.status, job.progress, job.queue) == (Job.Status.SUCCEEDED, 100, "gpu")
    assert seen[-1].completed == 5 and seen[-1].eta_seconds == 0
