from celery import shared_task

from generation import jobs
from generation.models import Job


@shared_task(name="generation.run_job", acks_late=True)
def run_job(job_id: int) -> None:
    jobs.run_job(job_id)


def send(job: Job) -> None:
    """Queue a job for a worker of its queue."""
    run_job.apply_async(args=[job.pk], queue=job.queue)


jobs.register_sender(send)
