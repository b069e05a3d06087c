"""Watching for a run's cancellation while its model calls are in flight.

A chunk asks whether its run should stop before every batch; a batch of calls to a server can take
much longer (retries honouring a long `Retry-After`, backoff). While a batch's calls run, `CancelWatch`
asks `run_cancelled` from a daemon thread every `EVAL_CANCEL_POLL_SECONDS` and sets the stop event it
hands to the backend (`generation.backends.registry.generate`), so an API backend stops retrying and
waiting within about that long. The thread only reads (the chunk's own check settles the run's status)
and uses its own database connection, closed when the block ends.
"""

import logging
import threading
from collections.abc import Callable

from django.conf import settings
from django.db import DatabaseError, connection

from evaluation.models import EvaluationRun
from generation.models import Job

logger = logging.getLogger(__name__)


def run_cancelled(run_id: int) -> bool:
    """Whether a run that exists was cancelled, failed or finished meanwhile, or its job was cancelled."""
    row = EvaluationRun.objects.filter(pk=run_id).values_list("status", "job__status").first()
    if row is None:  # not visible from here (yet): nothing says it should stop
        return False
    status, job_status = row
    return status != EvaluationRun.Status.RUNNING or job_status == Job.Status.CANCELLED


class CancelWatch:
    """`with CancelWatch(check) as stop:` — `stop` (a threading.Event) is set once `check()` answers True,
    asked every `interval` seconds from a daemon thread until the block ends. Without `check`, `stop` is
    None and no thread runs."""

    def __init__(self, check: Callable[[], bool] | None, interval: float | None = None):
        self.check = check
        self.interval = settings.EVAL_CANCEL_POLL_SECONDS if interval is None else interval
        self.stop = threading.Event() if check is not None else None
        self._done = threading.Event()
        self._thread = None

    def __enter__(self) -> threading.Event | None:
        if self.check is not None:
            self._thread = threading.Thread(target=self._run, name="cancel-watch", daemon=True)
            self._thread.start()
        return self.stop

    def __exit__(self, *exc_info):
        self._done.set()
        if self._thread is not None:
            self._thread.join(timeout=max(self.interval, 5.0))
        return False

    def _run(self) -> None:
        try:
            while not self._done.wait(self.interval):
                try:
                    if self.check():
                        self.stop.set()
                        return
                except DatabaseError:  # a busy database: the next look tries again
                    logger.warning("Could not look up whether the run was cancelled", exc_info=True)
        finally:
            connection.close()  # this thread's own connection
