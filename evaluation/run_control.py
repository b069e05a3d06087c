"""Starting, cancelling and resuming runs for people (the web page and the API): who may, and the
message each outcome gives them. Runs are shared within the research team: every researcher (and
admin) sees every run; cancelling and resuming are for the person who started it, or an admin."""

from django.db import transaction

from config.roles import ADMIN, has_role
from evaluation import runs
from evaluation.models import EvaluationRun

CANCELLABLE = (EvaluationRun.Status.PENDING, EvaluationRun.Status.RUNNING)
RESUMABLE = (EvaluationRun.Status.FAILED, EvaluationRun.Status.CANCELLED)


def visible_runs():
    """Every run, for the research team (the role check is the views')."""
    return EvaluationRun.objects.select_related("version__benchmark", "created_by").order_by("-created_at", "-pk")


def may_control(user, run: EvaluationRun) -> bool:
    """Whether `user` may cancel or resume `run`: who started it, or an admin."""
    return (run.created_by_id is not None and run.created_by_id == user.pk) or has_role(user, ADMIN)


def start_new_run(version, *, user, **options) -> EvaluationRun:
    """Create a run and send its chunks to the Celery workers; nothing is kept if either step refuses
    (RunConfigError)."""
    with transaction.atomic():
        run = runs.create_run(version, workers="celery", user=user, **options)
        return runs.start_run(run, workers="celery", user=user)


def cancel(run: EvaluationRun, user) -> tuple[bool, str]:
    """(done, message for the person)."""
    if run.status not in CANCELLABLE:
        return False, f"Run {run.pk} is {run.status}: only pending or running runs can be cancelled."
    if not runs.cancel_run(run, user=user, reason=f"Cancelled by {user.get_username()}"):
        run.refresh_from_db()
        return False, f"Run {run.pk} is {run.status}: it can no longer be cancelled."
    return True, f"Run {run.pk} cancelled."


def resume(run: EvaluationRun, user) -> tuple[bool, str]:
    """(done, message); RunConfigError when the run cannot be planned any more."""
    with transaction.atomic():  # two clicks on "resume" start it once
        current = EvaluationRun.objects.select_for_update().values_list("status", flat=True).get(pk=run.pk)
        if current not in RESUMABLE:
            return False, f"Run {run.pk} is {current}: only failed or cancelled runs can be resumed."
        runs.start_run(run, workers="celery", user=user)
    return True, f"Run {run.pk} resumed: only missing or failed predictions are made."
