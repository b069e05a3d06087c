from celery import shared_task

from generation import jobs


@shared_task(name="generation.run_job", acks_late=True)
def run_job(job_id: int) -> None:
    jobs.run_job(job_id)
