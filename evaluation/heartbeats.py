"""Signs of life of running evaluation chunks.

While a worker runs a chunk, a small background thread writes the chunk's `heartbeat_at` every
`EVAL_CHUNK_HEARTBEAT_SECONDS`, so a model batch that takes minutes does not make the chunk look
dead. A chunk whose heartbeat is older than `EVAL_CHUNK_SILENT_AFTER_SECONDS` lost its worker (killed,
out of memory, the machine went away); `evaluation.runs.requeue_silent_chunks` (run by beat) sends it
to another worker. The beat writes only while the chunk is still this worker's (same status and
attempt), so a worker that was given up on cannot make its chunk look alive again.
"""

import logging
import os
import socket
import threading
from datetime import timedelta

from django.conf import settings
from django.db import DatabaseError, connection
from django.db.models import Q
from django.utils import timezone

from evaluation.models import EvaluationRun, RunChunk

logger = logging.getLogger(__name__)


def worker_name() -> str:
    """host:pid of this process, as recorded on the chunks it starts."""
    return f"{socket.gethostname()}:{os.getpid()}"


def beat(chunk_id: int, attempt: int) -> bool:
    """Record that the worker running attempt `attempt` of a chunk is alive; False if it is no longer its."""
    return bool(RunChunk.objects.filter(pk=chunk_id, status=RunChunk.Status.RUNNING, attempts=attempt).update(
        heartbeat_at=timezone.now()))


class Heartbeat:
    """A context manager that beats for one chunk from a daemon thread until the block ends."""

    def __init__(self, chunk_id: int, attempt: int, interval: float | None = None):
        self.chunk_id = chunk_id
        self.attempt = attempt
        self.interval = settings.EVAL_CHUNK_HEARTBEAT_SECONDS if interval is None else interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"heartbeat-chunk-{chunk_id}", daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc_info):
        self._stop.set()
        self._thread.join(timeout=max(self.interval, 5.0))
        return False

    def _run(self) -> None:
        try:
            while not self._stop.wait(self.interval):
                try:
                    if not beat(self.chunk_id, self.attempt):
                        return  # the chunk finished, was cancelled or was handed to another worker
                except DatabaseError:  # a busy database: the next beat tries again
                    logger.warning("Heartbeat of chunk %s could not be written", self.chunk_id, exc_info=True)
        finally:
            connection.close()  # this thread's own connection


def silent_chunks(now=None):
    """Running chunks of running Celery runs whose worker has not beaten for `EVAL_CHUNK_SILENT_AFTER_SECONDS`."""
    cutoff = (now or timezone.now()) - timedelta(seconds=settings.EVAL_CHUNK_SILENT_AFTER_SECONDS)
    return RunChunk.objects.filter(silent_since(cutoff), status=RunChunk.Status.RUNNING,
                                   run__status=EvaluationRun.Status.RUNNING,
                                   run__workers="celery")


def silent_since(cutoff) -> Q:
    """No heartbeat since `cutoff` (a chunk claimed before heartbeats existed counts from its start)."""
    return Q(heartbeat_at__lt=cutoff) | Q(heartbeat_at__isnull=True, started_at__lt=cutoff)
