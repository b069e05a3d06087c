"""Celery discovers tasks in `<app>.tasks`; the annotation app's live in its subpackages."""

from annotation.crowd.tasks import expire_leases  # noqa: F401
