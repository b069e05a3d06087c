"""Deployment checks of our own, run by `manage.py check --deploy`."""

from django.conf import settings
from django.core.checks import Tags, register
from django.core.checks import Warning as CheckWarning

DEMO_BROKERS = ("filesystem://", "memory://")


@register(Tags.security, deploy=True)
def check_production_services(app_configs, **kwargs):
    warnings = []
    if str(settings.CELERY_BROKER_URL).startswith(DEMO_BROKERS):
        warnings.append(CheckWarning(
            "CELERY_BROKER_URL is not set: background jobs use the embedded file-system broker, "
            "which only works when the web process and every worker share one machine's disk.",
            hint="Set CELERY_BROKER_URL to a Redis URL, e.g. redis://redis:6379/0.",
            id="config.W001",
        ))
    if not settings.MEDIA_ACCEL_REDIRECT_PREFIX:
        warnings.append(CheckWarning(
            "MEDIA_ACCEL_REDIRECT_PREFIX is not set: Django streams every protected media file itself, "
            "holding a web worker for the whole download.",
            hint="Set MEDIA_ACCEL_REDIRECT_PREFIX (e.g. /protected) and give nginx an `internal` location "
                 "with that prefix that aliases MEDIA_ROOT (see deploy/nginx.conf).",
            id="config.W002",
        ))
    return warnings
