"""Celery discovers tasks in `<app>.tasks`; the annotation app's live here and in its subpackages."""

import logging

from celery import shared_task

from annotation import media_cleanup
from annotation.crowd.tasks import expire_leases  # noqa: F401

logger = logging.getLogger(__name__)


@shared_task(name="annotation.clean_media")
def clean_media() -> int:
    """Periodic (beat): remove stored media files that no row references, past the grace period."""
    report = media_cleanup.clean()
    for orphan in report.orphans:
        logger.info("clean_media removed %s (%d bytes, %.0f s old)", orphan.name, orphan.size, orphan.age_seconds)
    return len(report.orphans)
