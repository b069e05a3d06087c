"""Background work of evaluation runs: the `evaluation_run` job kind (a whole run in one process)
and the `evaluation.run_chunk` Celery task (one chunk of a run, on the `gpu` queue).

Chunk tasks are acknowledged late and rejected (re-queued) when their worker is lost; beat's
`evaluation.requeue_silent_chunks` re-sends chunks whose worker stopped beating (on every broker,
also where the message itself is lost), so a chunk whose worker died runs again on another worker;
chunks are idempotent (see `evaluation.runner`).
A worker keeps its last loaded models between chunks (`WORKER_BACKENDS`).
"""

from celery import shared_task

from evaluation import runner, runs
from generation.jobs import job_handler

WORKER_BACKENDS = runner.BackendPool(max_loaded=2)


@job_handler(runs.JOB_KIND, queue=runs.GPU_QUEUE, label="Evaluation run")
def evaluation_run(job, *, run_id: int) -> dict:
    return runs.execute_locally(job, run_id)


@shared_task(name="evaluation.run_chunk", acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def run_chunk(chunk_id: int) -> None:
    runs.run_chunk(chunk_id, pool=WORKER_BACKENDS)


@shared_task(name="evaluation.requeue_silent_chunks", ignore_result=True)
def requeue_silent_chunks() -> dict:
    return runs.requeue_silent_chunks(send=dispatch_chunks)


def dispatch_chunks(chunk_ids: list[int]) -> None:
    for chunk_id in chunk_ids:
        run_chunk.apply_async(args=[chunk_id], queue=runs.GPU_QUEUE)


def _send_chunks(chunk_ids: list[int]) -> None:
    dispatch_chunks(chunk_ids)  # looked up when called, so that replacing `dispatch_chunks` takes effect


runs.register_chunk_sender(_send_chunks)
