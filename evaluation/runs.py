"""Evaluation runs from creation to their end: options checked against the benchmark, start and
resume (in this process, or as chunks on Celery workers), progress, cancellation, status.

Status: pending -> running -> succeeded | failed | cancelled; a finished (or interrupted) run can
be started again (resume), which goes back to running and only fills in what is missing. Every
change is written to the state history (`config.state`, insert-only). A run succeeds when every
(request, sample) has a prediction without an error; failed predictions make it `failed`, and resuming retries them.
A chunk that raises (the model cannot load, the database fails) fails the run at once and cancels
the chunks not yet run; resuming starts over from what is missing.

Work is split into `RunChunk`s of `chunk_size` requests. `workers="local"` runs them one after the
other in this process, inside the run's `Job` (kind `evaluation_run`, queue `gpu`).
`workers="celery"` sends one Celery task per chunk to the `gpu` queue (`evaluation.tasks`), acked
late and re-queued if the worker dies. A running chunk writes a heartbeat (`evaluation.heartbeats`);
beat re-queues a chunk whose worker went silent (`requeue_silent_chunks`), on every broker: the
file-system broker never redelivers a message whose worker died, and Redis would only after its
`visibility_timeout` (`CELERY_VISIBILITY_TIMEOUT`). That timeout must still be longer than the
slowest chunk, or a chunk still running is handed to a second worker (harmless: chunks are
idempotent, but the work is done twice); lower `chunk_size` for slow models rather than raising
the timeout without end. Each chunk checks the
run's status before every batch, so cancelling stops running chunks at their next batch and
pending chunks before they start; while a batch's calls run, the status is looked up every
`EVAL_CANCEL_POLL_SECONDS` (`evaluation.cancel_watch`), so an API backend stops retrying within
seconds. Progress (predictions done, throughput, ETA) is kept on the run and on its job.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models, transaction
from django.db.models import Count, F, IntegerField, Q, Sum
from django.db.models.fields.json import KeyTextTransform
from django.db.models.functions import Cast
from django.utils import timezone

from config import state
from evaluation import cancel_watch, heartbeats, request_options, runner, subsets
from evaluation.inputs import InputError, check_frame_policy
from evaluation.models import EvaluationRun, RunChunk
from evaluation.request_options import RunConfigError
from generation import jobs, model_text
from generation.backends import registry
from generation.backends.base import BackendError
from generation.frames import FramePolicy
from generation.models import Job

logger = logging.getLogger(__name__)

JOB_KIND = "evaluation_run"
GPU_QUEUE = "gpu"
WORKERS = ("local", "celery")
SCORING_BACKENDS = ("nli", "clip")  # backends that score text; they cannot answer a chat request
IMPORTED_BACKEND = "imported"  # runs whose predictions came from a file (evaluation.imported_runs): no model to call
GENERATION_KEYS = ("max_new_tokens", "temperature", "top_p")

Status = EvaluationRun.Status
FINISHED = (Status.SUCCEEDED, Status.FAILED, Status.CANCELLED)


class RunFailed(RuntimeError):
    """The run ended failed (its message says why); raised inside the job so the job fails too."""


@dataclass
class Progress:
    run_id: int
    status: str
    total: int
    completed: int
    failed: int
    cached: int
    throughput: float | None  # predictions per second since the run (re)started
    eta_seconds: float | None
    elapsed_seconds: float

    @property
    def percent(self) -> float:
        return 100.0 * self.completed / self.total if self.total else 100.0

    def line(self) -> str:
        rate = f"{self.throughput:.2f}/s" if self.throughput else "-/s"
        eta = format_seconds(self.eta_seconds) if self.eta_seconds is not None else "-"
        return (f"{self.completed}/{self.total} predictions ({self.percent:.0f}%), {self.cached} from cache, "
                f"{self.failed} errors, {rate}, ETA {eta}")


def format_seconds(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


_LISTENERS: dict[int, Callable[[Progress], None]] = {}


# --- Creating -------------------------------------------------------------------------------------

def _check_backend(name: str, role: str) -> None:
    if name not in registry.LOADERS:
        raise RunConfigError(f"Unknown {role} backend {name!r}; choose one of {', '.join(sorted(registry.LOADERS))}.")
    if name in SCORING_BACKENDS:
        chat = sorted(set(registry.LOADERS) - set(SCORING_BACKENDS))
        raise RunConfigError(f"The {name!r} backend scores text and cannot answer requests; use {', '.join(chat)}.")


def resolve_revision(backend: str, model_id: str, revision: str = "") -> str:
    """The revision a model resolves to, without loading its weights (see `registry.resolve_revision`)."""
    try:
        return registry.resolve_revision(backend, model_id, revision)
    except BackendError as exc:
        raise RunConfigError(str(exc)) from None


def _generation_params(params: dict | None) -> dict:
    params = {k: v for k, v in (params or {}).items() if v is not None}
    unknown = sorted(set(params) - set(GENERATION_KEYS))
    if unknown:
        raise RunConfigError(f"Unknown generation parameters {', '.join(unknown)}; "
                             f"known: {', '.join(GENERATION_KEYS)}.")
    if "max_new_tokens" in params and int(params["max_new_tokens"]) < 1:
        raise RunConfigError("max_new_tokens must be at least 1.")
    if "temperature" in params and float(params["temperature"]) < 0:
        raise RunConfigError("temperature must not be negative.")
    if "top_p" in params and not 0 < float(params["top_p"]) <= 1:
        raise RunConfigError("top_p must be in (0, 1].")
    return params


def _check_numbers(run: EvaluationRun) -> None:
    """RunConfigError for a number (seed, limit, batch or chunk size, samples) that does not fit its column: a
    PostgreSQL `integer` holds 32 bits, and a larger value would fail the insert."""
    numbers = [field.name for field in EvaluationRun._meta.concrete_fields if isinstance(field, models.IntegerField)]
    try:
        run.clean_fields(exclude=[field.name for field in EvaluationRun._meta.fields if field.name not in numbers])
    except ValidationError as exc:
        raise RunConfigError(" ".join(f"{name}: {' '.join(messages)}" for name, messages in exc.message_dict.items())
                             ) from None


def _positive(value, what: str, *, optional: bool = False):
    if value is None and optional:
        return None
    if value is None or int(value) < 1:
        raise RunConfigError(f"{what} must be at least 1 (got {value!r}).")
    return int(value)


def create_run(version, *, model_id: str, backend: str = "transformers", revision: str = "",
               backend_options: dict | None = None, input_strategy: str = "", prompting: str = "standard",
               option_order: str = "release", frame_policy: str = "", generation_params: dict | None = None,
               seed: int = 0, variants=(), limit: int | None = None, n_samples: int | None = None, batch_size: int = 8,
               chunk_size: int = 64, describer: dict | None = None, workers: str = "local",
               subset=None, user=None) -> EvaluationRun:
    """A pending run with its options checked against the benchmark and its requests counted.

    `describer` (image-to-text): {"model_id", "backend" (default transformers), "revision", "options"}.
    `option_order`: `release` (the default) or `shuffled:<seed>` (`evaluation.benchmarks.base`).
    `subset`: a `VersionSubset` of the version, or its name: only its requests are asked.
    Raises RunConfigError with a message meant for the person who chose the options.
    """
    if not version.frozen:
        raise RunConfigError(f"Version {version} is not frozen: freeze it before evaluating on it.")
    checked = request_options.check(version, input_strategy=input_strategy, prompting=prompting,
                                    option_order=option_order, variants=variants)
    benchmark, input_strategy, prompting, option_order, variants = (
        checked.benchmark, checked.input_strategy, checked.prompting, checked.option_order, checked.variants)
    try:
        subset = subsets.find_subset(version, subset)
    except subsets.SubsetError as exc:
        raise RunConfigError(exc.message) from None
    try:
        policy = FramePolicy.parse(frame_policy or runner.DEFAULT_FRAME_POLICY)
        check_frame_policy(policy)
    except (ValueError, InputError) as exc:
        raise RunConfigError(str(exc)) from None
    if workers not in WORKERS:
        raise RunConfigError(f"Unknown workers {workers!r}; choose local or celery.")
    if not model_id:
        raise RunConfigError("A model id (hub id, local folder or API model name) is required.")
    _check_backend(backend, "model")
    describer_record = {}
    if describer and describer.get("model_id"):
        describer_backend = describer.get("backend") or "transformers"
        _check_backend(describer_backend, "describer")
        describer_record = {
            "backend": describer_backend, "model_id": describer["model_id"], "revision": describer.get("revision", ""),
            "options": dict(describer.get("options") or {}),
            "resolved_revision": resolve_revision(describer_backend, describer["model_id"],
                                                  describer.get("revision", "")),
        }
    run = EvaluationRun(
        version=version, model_id=model_id, model_revision=revision or "", backend=backend,
        backend_options=dict(backend_options or {}), input_strategy=input_strategy, prompting=prompting,
        option_order=option_order, frame_policy=policy.as_dict(),
        generation_params=_generation_params(generation_params), seed=int(seed),
        variants=variants, limit=_positive(limit, "limit", optional=True), subset=subset,
        n_samples=_positive(n_samples, "n_samples", optional=True), batch_size=_positive(batch_size, "batch size"),
        chunk_size=_positive(chunk_size, "chunk size"), describer=describer_record, workers=workers,
        created_by=user if user is not None and user.pk else None,
    )
    _check_numbers(run)
    try:
        planned = runner.plan(run, benchmark)
    except ValueError as exc:  # the benchmark refuses these options for its items (or made bad requests)
        raise RunConfigError(str(exc)) from None
    if not planned:
        raise RunConfigError(f"No requests: {version} has no items for variants {variants or 'all'} under "
                             f"input strategy {input_strategy!r}"
                             f"{f' in subset {subset.name!r}' if subset is not None else ''}.")
    if any(p.request.describe_prompt for p in planned) and not describer_record:
        raise RunConfigError(f"Input strategy {input_strategy!r} captions the media first: give a describer model "
                             f"(--describer-model).")
    run.resolved_revision = resolve_revision(backend, model_id, revision)
    run.total_requests = len(planned)
    run.total_predictions = sum(runner.samples_for(run, p.request) for p in planned)
    run.save()
    return run


# --- Status ---------------------------------------------------------------------------------------

def transition(run: EvaluationRun | int, to: str, *, reason: str = "", by=None) -> bool:
    """Move a run to `to` if its current status allows it (`EvaluationRun.STATES`); record it.
    Ending as failed or cancelled also cancels its open chunks. Returns whether the status changed."""
    run_id = run.pk if isinstance(run, EvaluationRun) else int(run)
    now = timezone.now()
    fields = {"message": reason[:500]}
    if to == Status.RUNNING:
        fields.update(started_at=now, finished_at=None)
    elif to in FINISHED:
        fields["finished_at"] = now
    with transaction.atomic():
        if state.try_transition(EvaluationRun(pk=run_id), to, by, reason[:500], **fields) is None:
            return False
        if to in (Status.FAILED, Status.CANCELLED):
            state.transition_many(RunChunk.objects.filter(run_id=run_id, status__in=RunChunk.OPEN),
                                  RunChunk.Status.CANCELLED, by, f"The run {to}: {reason}"[:500], finished_at=now)
    if isinstance(run, EvaluationRun):
        run.refresh_from_db()
    return True


def cancel_run(run: EvaluationRun | int, *, user=None, reason: str = "Cancelled") -> bool:
    """Cancel a pending or running run: pending chunks never start, running ones stop before their
    next batch, and its job is marked cancelled."""
    run_id = run.pk if isinstance(run, EvaluationRun) else int(run)
    changed = transition(run_id, Status.CANCELLED, reason=reason, by=user)
    job_id = EvaluationRun.objects.filter(pk=run_id).values_list("job_id", flat=True).first()
    if changed and job_id:
        jobs.cancel(Job.objects.get(pk=job_id))
    if isinstance(run, EvaluationRun):
        run.refresh_from_db()
    return changed


def _should_stop(run_id: int) -> bool:
    row = EvaluationRun.objects.filter(pk=run_id).values_list("status", "job__status").first()
    if row is None:
        return True
    status, job_status = row
    if status == Status.RUNNING and job_status == Job.Status.CANCELLED:
        cancel_run(run_id, reason="Its job was cancelled")
        return True
    return status != Status.RUNNING


# --- Progress -------------------------------------------------------------------------------------

def refresh_progress(run_id: int) -> Progress:
    """Count the run's predictions, store progress, throughput and ETA on the run and its job, and
    tell a listener in this process (the CLI's progress bar)."""
    run = EvaluationRun.objects.get(pk=run_id)
    counts = run.predictions.aggregate(
        completed=Count("id", filter=Q(error="")), failed=Count("id", filter=~Q(error="")),
        cached=Count("id", filter=Q(error="", from_cache=True)),
        recent=Count("id", filter=Q(created_at__gte=run.started_at)) if run.started_at else Count("id"),
    )
    now = timezone.now()
    elapsed = max((now - run.started_at).total_seconds(), 0.0) if run.started_at else 0.0
    throughput = counts["recent"] / elapsed if elapsed > 0 and counts["recent"] else None
    remaining = max(run.total_predictions - counts["completed"], 0)
    eta = remaining / throughput if throughput else (0.0 if not remaining else None)
    EvaluationRun.objects.filter(pk=run_id).update(
        completed_predictions=counts["completed"], failed_predictions=counts["failed"],
        cached_predictions=counts["cached"], throughput=throughput, eta_seconds=eta)
    progress = Progress(run_id=run_id, status=run.status, total=run.total_predictions, completed=counts["completed"],
                        failed=counts["failed"], cached=counts["cached"], throughput=throughput, eta_seconds=eta,
                        elapsed_seconds=elapsed)
    if run.job_id:
        Job.objects.filter(pk=run.job_id).exclude(status__in=Job.FINISHED).update(
            progress=min(100, int(progress.percent)), message=progress.line()[:500])
    listener = _LISTENERS.get(run_id)
    if listener is not None:
        listener(progress)
    return progress


def nul_removed(run: EvaluationRun) -> int:
    """The NUL characters removed from the run's predictions' text (`generation.model_text`: each prediction
    counts its own in `params`), which the database could not have kept."""
    found = run.predictions.filter(params__has_key=model_text.NUL_KEY).aggregate(
        total=Sum(Cast(KeyTextTransform(model_text.NUL_KEY, "params"), IntegerField())))["total"]
    return found or 0


def summary(run: EvaluationRun) -> dict:
    run.refresh_from_db()
    elapsed = (run.finished_at or timezone.now()) - run.started_at if run.started_at else None
    return {"run": run.pk, "status": run.status, "message": run.message, "total": run.total_predictions,
            "predictions": run.completed_predictions, "from_cache": run.cached_predictions,
            "errors": run.failed_predictions, "nul_removed": nul_removed(run),
            "seconds": round(elapsed.total_seconds(), 3) if elapsed else None}


def _sync_job(run: EvaluationRun) -> None:
    """The job mirrors a finished run (for Celery runs, where no single task owns the job)."""
    if not run.job_id or run.status not in FINISHED:
        return
    status = {Status.SUCCEEDED: Job.Status.SUCCEEDED, Status.FAILED: Job.Status.FAILED,
              Status.CANCELLED: Job.Status.CANCELLED}[run.status]
    fields = {"message": run.message[:500], "finished_at": timezone.now()}
    if status == Job.Status.SUCCEEDED:
        fields.update(progress=100, result=summary(run))
    state.try_transition(Job(pk=run.job_id), status, reason=run.message, **fields)


def finish_if_done(run_id: int) -> EvaluationRun:
    """When no chunk is open any more, settle the run's status from its predictions."""
    run = EvaluationRun.objects.get(pk=run_id)
    if run.chunks.filter(status__in=RunChunk.OPEN).exists():
        return run
    refresh_progress(run_id)
    run.refresh_from_db()
    if run.status == Status.RUNNING:
        failed_chunk = run.chunks.filter(status=RunChunk.Status.FAILED).order_by("index").first()
        missing = run.total_predictions - run.completed_predictions
        if failed_chunk is not None:
            transition(run, Status.FAILED, reason=f"Chunk {failed_chunk.index} failed: {failed_chunk.error}")
        elif run.failed_predictions:
            transition(run, Status.FAILED, reason=f"{run.failed_predictions} of {run.total_predictions} predictions "
                                                  f"failed; resume the run to retry them")
        elif missing > 0:
            transition(run, Status.FAILED, reason=f"{missing} predictions are missing; resume the run")
        else:
            transition(run, Status.SUCCEEDED, reason=f"{run.total_predictions} predictions, "
                                                     f"{run.cached_predictions} from the cache")
    _sync_job(run)
    return run


# --- Executing chunks -----------------------------------------------------------------------------

def run_chunk(chunk_id: int, *, pool: runner.BackendPool, planned: dict | None = None) -> runner.ExecutionStats | None:
    """Execute one chunk if it is still open and its run is running; safe to call twice."""
    now = timezone.now()
    worker = heartbeats.worker_name()
    claimed = state.transition_many(
        RunChunk.objects.filter(pk=chunk_id, status__in=RunChunk.OPEN), RunChunk.Status.RUNNING,
        reason=f"Started by {worker}", attempts=F("attempts") + 1, started_at=now, heartbeat_at=now, worker=worker,
        error="")
    if not claimed:
        return None
    chunk = RunChunk.objects.select_related("run__version__benchmark").get(pk=chunk_id)
    run = chunk.run
    if run.status != Status.RUNNING:
        _end_chunk(chunk_id, RunChunk.Status.CANCELLED, f"The run is {run.status}")
        return None
    try:
        if planned is None:
            planned = {p.request.request_id: p for p in runner.plan(run)}
        lost = [rid for rid in chunk.request_ids if rid not in planned]
        if lost:
            raise runner.PlanError(f"{len(lost)} requests of this chunk are no longer planned (first: {lost[0]!r}); "
                                   f"the benchmark module changed: resume the run to plan it again")
        executor = runner.Executor(run, pool=pool, should_stop=lambda: _should_stop(run.pk),
                                   after_batch=lambda stats: refresh_progress(run.pk),
                                   cancelled=lambda: cancel_watch.run_cancelled(run.pk))
        with heartbeats.Heartbeat(chunk_id, chunk.attempts):
            stats = executor.execute([planned[rid] for rid in chunk.request_ids])
    except Exception as exc:  # noqa: BLE001 - the chunk and the run say why; resuming retries
        logger.exception("Run %s chunk %s failed", run.pk, chunk.index)
        message = f"{type(exc).__name__}: {exc}"
        _end_chunk(chunk_id, RunChunk.Status.FAILED, message, error=message)
        transition(run, Status.FAILED, reason=f"Chunk {chunk.index} failed: {message}")
        finish_if_done(run.pk)
        return None
    if stats.stopped:
        _end_chunk(chunk_id, RunChunk.Status.CANCELLED, "Stopped before its next batch")
    else:
        _end_chunk(chunk_id, RunChunk.Status.DONE, "Done")
    finish_if_done(run.pk)
    return stats


def _end_chunk(chunk_id: int, to: str, reason: str, **fields) -> bool:
    """End a running chunk (`RunChunk.STATES`); False if it is no longer running."""
    running = RunChunk.objects.filter(pk=chunk_id, status=RunChunk.Status.RUNNING)
    return bool(state.transition_many(running, to, reason=reason, finished_at=timezone.now(), **fields))


def requeue_silent_chunks(send: Callable[[list[int]], None], *, now=None) -> dict:
    """Beat's look for Celery chunks whose worker went silent (no heartbeat for
    `EVAL_CHUNK_SILENT_AFTER_SECONDS`): each goes back to pending and is sent again with `send`, or,
    once it was started `EVAL_CHUNK_MAX_ATTEMPTS` times, fails together with its run. Returns the
    ids of the chunks re-queued and failed."""
    now = now or timezone.now()
    cutoff = now - timedelta(seconds=settings.EVAL_CHUNK_SILENT_AFTER_SECONDS)
    requeued, failed = [], []
    for chunk in heartbeats.silent_chunks(now).select_related("run"):
        last = chunk.heartbeat_at or chunk.started_at
        silence = f"its worker {chunk.worker or '(unknown)'} went silent (last heartbeat {last:%Y-%m-%d %H:%M:%S} UTC)"
        gave_up = chunk.attempts >= settings.EVAL_CHUNK_MAX_ATTEMPTS
        # Only if it is still the same silent attempt: a worker that beat meanwhile keeps its chunk.
        still_silent = RunChunk.objects.filter(heartbeats.silent_since(cutoff), pk=chunk.pk,
                                               status=RunChunk.Status.RUNNING, attempts=chunk.attempts)
        if gave_up:
            message = f"{silence}; it was started {chunk.attempts} times, the most allowed (EVAL_CHUNK_MAX_ATTEMPTS)"
            if state.transition_many(still_silent, RunChunk.Status.FAILED, reason=message, error=message,
                                     finished_at=now):
                logger.warning("Run %s chunk %s failed: %s", chunk.run_id, chunk.index, message)
                transition(chunk.run_id, Status.FAILED, reason=f"Chunk {chunk.index} failed: {message}")
                finish_if_done(chunk.run_id)
                failed.append(chunk.pk)
        elif state.transition_many(still_silent, RunChunk.Status.PENDING, reason=f"Re-queued: {silence}",
                                   error=f"Re-queued: {silence}"):
            logger.warning("Run %s chunk %s re-queued: %s", chunk.run_id, chunk.index, silence)
            requeued.append(chunk.pk)
    if requeued:
        send(requeued)
    return {"requeued": requeued, "failed": failed}


def execute_locally(job: jobs.JobContext, run_id: int) -> dict:
    """The `evaluation_run` job: every open chunk of a started run, in order, in this process."""
    run = EvaluationRun.objects.select_related("version__benchmark").get(pk=run_id)
    if run.status != Status.RUNNING:
        return {"message": f"Run {run_id} is {run.status}: nothing to do"}
    pool = runner.BackendPool()
    try:
        planned = {p.request.request_id: p for p in runner.plan(run)}
        chunk_ids = list(run.chunks.filter(status__in=RunChunk.OPEN).order_by("index").values_list("pk", flat=True))
        job.log(f"Run {run_id}: {len(planned)} requests in {len(chunk_ids)} chunks")
        for chunk_id in chunk_ids:
            if _should_stop(run_id):
                break
            run_chunk(chunk_id, pool=pool, planned=planned)
    except Exception as exc:
        transition(run, Status.FAILED, reason=f"{type(exc).__name__}: {exc}")
        raise
    finally:
        pool.clear()
    run.refresh_from_db()
    if run.status == Status.RUNNING:
        run = finish_if_done(run_id)
    if run.status == Status.RUNNING:  # stopped early without a final status: should not happen
        transition(run, Status.FAILED, reason="Stopped before every chunk ran")
    if run.status == Status.CANCELLED:
        raise jobs.JobCancelled()
    if run.status == Status.FAILED:
        raise RunFailed(run.message)
    return {"message": run.message, **summary(run)}


# --- Starting -------------------------------------------------------------------------------------

def _chunks(planned: list[runner.PlannedRequest], size: int) -> list[list[str]]:
    ids = [p.request.request_id for p in planned]
    return [ids[start:start + size] for start in range(0, len(ids), size)]


_CHUNK_SENDERS: list[Callable[[list[int]], None]] = []


def register_chunk_sender(send: Callable[[list[int]], None]) -> None:
    """Set how the chunks of a celery run reach the workers: `evaluation.tasks` registers its Celery
    task when the app is ready, so that this module does not import the task module."""
    _CHUNK_SENDERS[:] = [send]


def _send_chunks(chunk_ids: list[int]) -> None:
    if not _CHUNK_SENDERS:
        raise RuntimeError("No chunk sender is registered; evaluation.tasks registers one when the app is ready.")
    _CHUNK_SENDERS[0](chunk_ids)


def start_run(run: EvaluationRun, *, workers: str | None = None, user=None,
              on_progress: Callable[[Progress], None] | None = None) -> EvaluationRun:
    """Start (or resume) a run. `local`: runs to its end in this process and returns the finished
    run; `celery`: dispatches its chunks to the `gpu` queue once the transaction commits and
    returns the running run. Resuming only makes the predictions that are missing or failed."""
    workers = workers or run.workers or "local"
    if workers not in WORKERS:
        raise RunConfigError(f"Unknown workers {workers!r}; choose local or celery.")
    run.refresh_from_db()
    if run.backend == IMPORTED_BACKEND:
        raise RunConfigError(f"Run {run.pk} was imported from a file: it has no model to run; import the file again "
                             f"instead.")
    if not run.version.frozen:
        raise RunConfigError(f"Version {run.version} is not frozen.")
    try:
        planned = runner.plan(run)
    except ValueError as exc:
        raise RunConfigError(str(exc)) from None
    previous = run.status
    with transaction.atomic():
        if run.job_id:  # a job left running by a killed process, or queued chunks of a celery run
            message = "Interrupted; the run was resumed"
            state.try_transition(Job(pk=run.job_id), Job.Status.FAILED, user, message, message=message,
                                 finished_at=timezone.now())
        job = jobs.create(JOB_KIND, params={"run_id": run.pk}, user=user)
        RunChunk.objects.filter(run=run).delete()  # old chunk tasks still queued find nothing and stop
        chunks = RunChunk.objects.bulk_create([RunChunk(run=run, index=index, request_ids=ids)
                                               for index, ids in enumerate(_chunks(planned, run.chunk_size))])
        EvaluationRun.objects.filter(pk=run.pk).update(
            job=job, workers=workers, total_requests=len(planned),
            total_predictions=sum(runner.samples_for(run, p.request) for p in planned), throughput=None,
            eta_seconds=None)
        reason = "Started" if previous == Status.PENDING else f"Resumed (was {previous})"
        if not transition(run, Status.RUNNING, reason=f"{reason}, {len(chunks)} chunks on {workers}", by=user):
            raise RunConfigError(f"Run {run.pk} is {run.status} and cannot start.")
        if workers == "celery":
            Job.objects.filter(pk=job.pk).update(status=Job.Status.RUNNING, started_at=timezone.now(),
                                                 message=f"{len(chunks)} chunks sent to the {GPU_QUEUE} queue")
            chunk_ids = [c.pk for c in RunChunk.objects.filter(run=run).order_by("index")]
            transaction.on_commit(lambda: _send_chunks(chunk_ids))
    if workers == "local":
        if on_progress is not None:
            _LISTENERS[run.pk] = on_progress
        try:
            jobs.run_job(job.pk)
        finally:
            _LISTENERS.pop(run.pk, None)
    run.refresh_from_db()
    return run


def wait(run: EvaluationRun, *, poll_seconds: float = 1.0, timeout: float | None = None,
         on_progress: Callable[[Progress], None] | None = None) -> EvaluationRun:
    """Poll a run (started on Celery workers) until it is finished, reporting progress."""
    started = time.monotonic()
    while True:
        progress = refresh_progress(run.pk)
        if on_progress is not None:
            on_progress(progress)
        run.refresh_from_db()
        if run.status in FINISHED:
            return run
        if timeout is not None and time.monotonic() - started > timeout:
            return run
        time.sleep(poll_seconds)
