"""Chunk heartbeats and beat's re-queue of chunks whose worker went silent, on every broker.

A running chunk writes `heartbeat_at` from a background thread; beat's
`evaluation.requeue_silent_chunks` sends a chunk silent for `EVAL_CHUNK_SILENT_AFTER_SECONDS` back
to the `gpu` queue, or fails it and its run after `EVAL_CHUNK_MAX_ATTEMPTS` starts. The last test
kills a real worker on the file-system broker (which never redelivers the lost message) and shows
the re-queue bringing the run to its end on a second worker.
"""

import os
import signal
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import pytest
from celery import Celery
from django.conf import settings as django_settings
from django.utils import timezone

from config.celery import app as celery_app
from evaluation import heartbeats, runs, tasks
from evaluation.models import EvaluationRun, Prediction, RunChunk
from generation.models import Job
from tests.conftest import ingest_path
from tests.eval_support import count_model_calls, database_url, make_version, use_toy_benchmark
from tests.waiting import poll

ROOT = Path(__file__).resolve().parents[2]

WORKER_SECONDS = 120.0  # a worker starts and loads tiny models before its first answer


@pytest.fixture(autouse=True)
def toy(monkeypatch):
    return use_toy_benchmark(monkeypatch)


@pytest.fixture
def picture(db, astronaut):
    return ingest_path(astronaut)


def celery_run(image, tiny_models_dir, label: str, *, items: int = 3, chunk_size: int = 8, **options):
    """A started Celery run. Inside a test's transaction its chunk messages are never sent (on_commit
    does not fire): the tests play the workers."""
    version = make_version(label, [(f"{label}-{i}", {"premise": image}, ["open"]) for i in range(items)])
    run = runs.create_run(version, model_id=str(tiny_models_dir / "causal-lm"), backend="causal_lm",
                          input_strategy="text_only", chunk_size=chunk_size, generation_params={"max_new_tokens": 5},
                          **options)
    return runs.start_run(run, workers="celery")


def went_silent(chunk: RunChunk, *, seconds_ago: float, attempts: int = 1, worker: str = "gpu-1:4242") -> RunChunk:
    """The chunk as a worker left it that was started `attempts` times and last beat `seconds_ago`."""
    then = timezone.now() - timedelta(seconds=seconds_ago)
    RunChunk.objects.filter(pk=chunk.pk).update(status=RunChunk.Status.RUNNING, attempts=attempts, worker=worker,
                                                started_at=then, heartbeat_at=then)
    chunk.refresh_from_db()
    return chunk


def test_beat_schedule_runs_the_requeue_task():
    entry = django_settings.CELERY_BEAT_SCHEDULE["requeue-silent-chunks"]
    assert entry == {"task": "evaluation.requeue_silent_chunks",
                     "schedule": float(django_settings.EVAL_CHUNK_REQUEUE_EVERY_SECONDS)}
    assert celery_app.tasks[entry["task"]].run is tasks.requeue_silent_chunks.run


@pytest.mark.django_db
def test_a_silent_chunk_is_requeued_and_completed_a_fresh_one_is_left_alone(picture, tiny_models_dir,
                                                                            monkeypatch, settings):
    settings.EVAL_CHUNK_SILENT_AFTER_SECONDS = 120
    loader = count_model_calls(monkeypatch)
    sent = []
    original = tasks.run_chunk.apply_async
    monkeypatch.setattr(tasks.run_chunk, "apply_async", lambda *a, **kw: sent.append(kw) or original(*a, **kw))
    silent_run = celery_run(picture, tiny_models_dir, "silent")
    busy_run = celery_run(picture, tiny_models_dir, "busy")
    local_run = celery_run(picture, tiny_models_dir, "local")
    EvaluationRun.objects.filter(pk=local_run.pk).update(workers="local")  # a command's own process owns it
    silent = went_silent(silent_run.chunks.get(), seconds_ago=600)
    busy = went_silent(busy_run.chunks.get(), seconds_ago=30)
    local = went_silent(local_run.chunks.get(), seconds_ago=600)

    result = tasks.requeue_silent_chunks.apply().get()

    assert result == {"requeued": [silent.pk], "failed": []}
    assert sent == [{"args": [silent.pk], "queue": "gpu"}]
    silent.refresh_from_db()  # the eager worker ran it at once
    assert (silent.status, silent.attempts, silent.worker) == ("done", 2, heartbeats.worker_name())
    assert silent.heartbeat_at > timezone.now() - timedelta(seconds=60)
    silent_run.refresh_from_db()
    assert silent_run.status == EvaluationRun.Status.SUCCEEDED, silent_run.message
    assert Prediction.objects.filter(run=silent_run).count() == 3 and len(loader.requests) == 3
    assert Job.objects.get(pk=silent_run.job_id).status == Job.Status.SUCCEEDED
    for left_alone in (busy, local):
        left_alone.refresh_from_db()
        assert (left_alone.status, left_alone.attempts) == ("running", 1)
        assert left_alone.run.status == EvaluationRun.Status.RUNNING

    assert tasks.requeue_silent_chunks.apply().get() == {"requeued": [], "failed": []}  # nothing twice


@pytest.mark.django_db
def test_a_chunk_silent_after_its_last_attempt_fails_its_run(picture, tiny_models_dir, monkeypatch, settings):
    settings.EVAL_CHUNK_MAX_ATTEMPTS = 3
    sent = []
    monkeypatch.setattr(tasks.run_chunk, "apply_async", lambda *a, **kw: sent.append(kw))
    run = celery_run(picture, tiny_models_dir, "doomed", items=4, chunk_size=2)
    first, second = run.chunks.order_by("index")
    went_silent(first, seconds_ago=3600, attempts=3)

    result = tasks.requeue_silent_chunks.apply().get()

    assert result == {"requeued": [], "failed": [first.pk]} and sent == []
    first.refresh_from_db()
    assert first.status == RunChunk.Status.FAILED
    assert "its worker gpu-1:4242 went silent" in first.error and "started 3 times" in first.error
    run.refresh_from_db()
    assert run.status == EvaluationRun.Status.FAILED
    assert run.message.startswith("Chunk 0 failed: its worker gpu-1:4242 went silent (last heartbeat ")
    assert "EVAL_CHUNK_MAX_ATTEMPTS" in run.message
    assert run.chunks.get(pk=second.pk).status == RunChunk.Status.CANCELLED
    job = Job.objects.get(pk=run.job_id)
    assert (job.status, job.message) == (Job.Status.FAILED, run.message)


@pytest.mark.django_db(transaction=True)
def test_a_running_chunk_beats_while_a_slow_batch_runs(picture, tiny_models_dir, monkeypatch, settings):
    """The thread beats while the model is busy, and stops once the chunk is no longer this attempt's."""
    settings.EVAL_CHUNK_HEARTBEAT_SECONDS = 0.05
    monkeypatch.setattr(tasks, "dispatch_chunks", lambda chunk_ids: None)  # this test is the worker
    run = celery_run(picture, tiny_models_dir, "slow", items=1)
    chunk = run.chunks.get()
    seen = []
    real_execute = runs.runner.Executor.execute

    def slow_execute(executor, planned):
        for _tick in range(8):
            time.sleep(0.1)
            seen.append(RunChunk.objects.get(pk=chunk.pk).heartbeat_at)
        return real_execute(executor, planned)

    monkeypatch.setattr(runs.runner.Executor, "execute", slow_execute)
    tasks.run_chunk.apply(args=[chunk.pk])

    assert len(set(seen)) >= 4, seen  # it moved on while the batch was still running
    chunk.refresh_from_db()
    assert (chunk.status, chunk.attempts) == ("done", 1)

    went_silent(chunk, seconds_ago=600, attempts=2)  # handed to another worker meanwhile
    assert not heartbeats.beat(chunk.pk, attempt=1)
    assert RunChunk.objects.get(pk=chunk.pk).heartbeat_at == chunk.heartbeat_at
    assert heartbeats.beat(chunk.pk, attempt=2)


# --- A real worker killed on the file-system broker ---------------------------------------------

def filesystem_sender(var_dir: Path) -> Celery:
    """A Celery app that sends to the file-system broker of `var_dir` (what `make demo` uses); the caller
    unsets CELERY_BROKER_URL, which Celery would prefer to the broker given here."""
    broker = var_dir / "broker"
    sender = Celery("sender", broker="filesystem://", set_as_current=False)
    sender.conf.broker_transport_options = {"data_folder_in": str(broker / "queue"),
                                            "data_folder_out": str(broker / "queue"),
                                            "control_folder": str(broker / "control")}
    return sender


def start_worker_process(env: dict, log: Path) -> subprocess.Popen:
    command = [sys.executable, "-m", "tests.eval_support", "celery", "worker", "-Q", "gpu", "--pool", "solo",
               "--concurrency", "1", "--loglevel", "INFO", "--without-heartbeat", "--without-mingle",
               "--without-gossip"]
    return subprocess.Popen(command, cwd=ROOT, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT)


@pytest.mark.django_db(transaction=True)
def test_killed_worker_on_the_filesystem_broker_is_replaced_by_the_requeue(astronaut, tiny_models_dir, media_root,
                                                                           tmp_path, monkeypatch, settings):
    settings.EVAL_CHUNK_SILENT_AFTER_SECONDS = 2
    var_dir = tmp_path / "var"  # a fresh folder: the worker makes its broker folders itself
    env = {key: value for key, value in os.environ.items() if not key.startswith(("CELERY_", "DJANGO_", "EVAL_"))}
    env.update(DATABASE_URL=database_url(django_settings.DATABASES["default"]), MEDIA_ROOT=str(media_root),
               PLATFORM_VAR_DIR=str(var_dir), HF_HUB_OFFLINE="1", PYTHONUNBUFFERED="1", DJANGO_DEBUG="true",
               EVAL_CHUNK_HEARTBEAT_SECONDS="1", EVAL_CHUNK_SILENT_AFTER_SECONDS="2")
    monkeypatch.delenv("CELERY_BROKER_URL", raising=False)  # CI's Redis: the worker listens on the file system
    sender = filesystem_sender(var_dir)

    def send(chunk_ids):
        for chunk_id in chunk_ids:
            sender.send_task("evaluation.run_chunk", args=[chunk_id], queue="gpu")

    monkeypatch.setattr(tasks, "dispatch_chunks", send)
    first_log, second_log = tmp_path / "worker-1.log", tmp_path / "worker-2.log"
    first = start_worker_process(env, first_log)
    second = None
    try:
        poll(lambda: first_log.read_text(errors="replace"), lambda text: " ready." in text or first.poll() is not None,
             timeout=WORKER_SECONDS)
        assert (var_dir / "broker" / "queue").is_dir() and (var_dir / "broker" / "control").is_dir()
        image = ingest_path(astronaut)
        version = make_version("killed", [(f"item-{i:02d}", {"premise": image}, ["open", "sampled"])
                                          for i in range(30)])
        run = runs.create_run(version, model_id=str(tiny_models_dir / "causal-lm"), backend="causal_lm",
                              input_strategy="text_only", batch_size=1, chunk_size=1000,
                              generation_params={"max_new_tokens": 5})
        run = runs.start_run(run, workers="celery")  # one chunk, sent once the transaction commits
        poll(lambda: Prediction.objects.filter(run=run).count(), lambda n: n >= 6 or first.poll() is not None,
             timeout=WORKER_SECONDS)
        os.kill(first.pid, signal.SIGKILL)
        first.wait(30)
        made = Prediction.objects.filter(run=run).count()
        assert made < run.total_predictions, "the worker was killed in the middle of its chunk"

        second = start_worker_process(env, second_log)
        poll(lambda: second_log.read_text(errors="replace"), lambda text: " ready." in text, timeout=WORKER_SECONDS)
        chunk = run.chunks.get()
        assert (chunk.status, chunk.attempts) == ("running", 1)
        # The broker lost the message with its worker: nothing happens until beat re-queues the chunk.
        time.sleep(2.5)
        assert run.chunks.get().status == "running" and Prediction.objects.filter(run=run).count() == made
        result = poll(lambda: runs.requeue_silent_chunks(send=send), lambda r: r["requeued"], timeout=30)
        assert result == {"requeued": [chunk.pk], "failed": []}

        run = poll(lambda: EvaluationRun.objects.get(pk=run.pk), lambda r: r.is_finished, timeout=WORKER_SECONDS)
    finally:
        for process in (first, second):
            if process is not None and process.poll() is None:
                process.terminate()
                try:
                    process.wait(20)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
    assert run.status == EvaluationRun.Status.SUCCEEDED, (run.message, second_log.read_text(errors="replace"))
    keys = list(Prediction.objects.filter(run=run).values_list("request_id", "sample_index"))
    assert len(keys) == len(set(keys)) == run.total_predictions == 120  # none twice, none missing
    chunk = run.chunks.get()
    assert chunk.status == "done" and chunk.attempts == 2
    assert chunk.worker.endswith(f":{second.pid}")
