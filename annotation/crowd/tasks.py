from celery import shared_task

from annotation.crowd import assignment


@shared_task(name="annotation.crowd.expire_leases")
def expire_leases() -> int:
    """Periodic: time out claims whose lease passed, so their places go to other workers."""
    return assignment.expire_leases()
