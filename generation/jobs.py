"""Background jobs: register a handler per kind, enqueue it, report progress while it runs.

A handler is a plain function `handler(job_context, **params) -> dict` registered with
`@job_handler("kind", queue=...)`. `enqueue()` writes a `Job` row and hands its id to Celery once
the surrounding transaction commits; the worker runs `run_job`, which keeps the row up to date.
"""

import logging
import traceback
from collections.abc import Callable
from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from config import state
from generation.models import Job

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class JobKind:
    name: str
    handler: Callable
    queue: str
    label: str


_REGISTRY: dict[str, JobKind] = {}


def job_handler(name: str, *, queue: str = "default", label: str = ""):
    def register(func):
        _REGISTRY[name] = JobKind(name=name, handler=func, queue=queue, label=label or name)
        return func

    return register


def job_kind(name: str) -> JobKind:
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ValueError(f"Unknown job kind {name!r}.") from None


def registered_kinds() -> dict[str, JobKind]:
    return dict(_REGISTRY)


class JobCancelled(Exception):
    pass


class JobContext:
    """What a handler uses to talk about its progress."""

    def __init__(self, job: Job):
        self.job = job

    def progress(self, percent: float, message: str = "") -> None:
        percent = max(0, min(100, int(percent)))
        fields = {"progress": percent}
        if message:
            fields["message"] = message[:500]
        # A cancelled job keeps the progress and message it was cancelled with.
        updated = Job.objects.filter(pk=self.job.pk).exclude(status=Job.Status.CANCELLED).update(**fields)
        if not updated and Job.objects.filter(pk=self.job.pk, status=Job.Status.CANCELLED).exists():
            raise JobCancelled()

    def log(self, line: str) -> None:
        stamp = timezone.now().strftime("%H:%M:%S")
        self.job.refresh_from_db(fields=["log"])
        self.job.log += f"[{stamp}] {line}\n"
        Job.objects.filter(pk=self.job.pk).update(log=self.job.log)


def create(kind: str, *, params: dict | None = None, user=None) -> Job:
    """Create a queued job row without sending it (a caller that runs it itself uses this)."""
    spec = job_kind(kind)
    return Job.objects.create(
        kind=kind, queue=spec.queue, params=params or {}, requested_by=user if user and user.pk else None
    )


def enqueue(kind: str, *, params: dict | None = None, user=None) -> Job:
    """Create the job row and send it to its queue when the current transaction commits."""
    job = create(kind, params=params, user=user)
    transaction.on_commit(lambda: _send(job))
    return job


_SENDERS: list[Callable[[Job], None]] = []


def register_sender(send: Callable[[Job], None]) -> None:
    """Set how a queued job reaches a worker: `generation.tasks` registers its Celery task when the app
    is ready, so that this module does not import the task module."""
    _SENDERS[:] = [send]


def _send(job: Job) -> None:
    if not _SENDERS:
        raise RuntimeError("No job sender is registered; generation.tasks registers one when the app is ready.")
    _SENDERS[0](job)


def run_job(job_id: int) -> Job | None:
    """Run one job to its end; safe to call twice (a finished or running job is left alone)."""
    job = Job.objects.filter(pk=job_id).first()
    if job is None or state.try_transition(job, Job.Status.RUNNING, started_at=timezone.now(),
                                           message="Started") is None:
        return job
    context = JobContext(job)
    try:
        result = job_kind(job.kind).handler(context, **job.params) or {}
    except JobCancelled:
        _finish(job, Job.Status.CANCELLED, "Cancelled", {})
    except Exception as exc:  # the job row is where the user reads why it failed
        logger.exception("Job %s failed", job_id)
        context.log(traceback.format_exc())
        _finish(job, Job.Status.FAILED, str(exc) or exc.__class__.__name__, {})
    else:
        _finish(job, Job.Status.SUCCEEDED, result.pop("message", "Done"), result, progress=100)
    job.refresh_from_db()
    return job


def cancel(job: Job, by=None) -> bool:
    """Cancel a queued or running job (`Job.STATES`); False if it had already finished."""
    return state.try_transition(Job(pk=job.pk), Job.Status.CANCELLED, by, "Cancelled",
                                finished_at=timezone.now(), message="Cancelled") is not None


def _finish(job: Job, status: str, message: str, result: dict, progress: int | None = None) -> None:
    fields = {"message": message[:500], "result": result, "finished_at": timezone.now()}
    if progress is not None:
        fields["progress"] = progress
    # A job cancelled while running keeps its cancelled state (`Job.STATES` has no way out of it).
    state.try_transition(Job(pk=job.pk), status, reason=message[:500], **fields)
