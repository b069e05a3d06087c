"""Starting, cancelling and resuming runs for people (the web page and the API): who may, and the
message each outcome gives them. Runs are shared within the research team: every researcher (and
admin) sees every run; cancelling and resuming are for the person who started it, or an admin.

The model (and the describer) of a new run is picked from the model registry (`registered_models`, also
used by `manage.py evaluate`): the run records the entry's model id, revision and load options."""

from django.db import transaction

from config.roles import ADMIN, has_role
from evaluation import runs
from evaluation.models import EvaluationRun
from generation import model_registry
from generation.registered_models import Use

CANCELLABLE = (EvaluationRun.Status.PENDING, EvaluationRun.Status.RUNNING)
RESUMABLE = (EvaluationRun.Status.FAILED, EvaluationRun.Status.CANCELLED)


def visible_runs():
    """Every run, for the research team (the role check is the views')."""
    return EvaluationRun.objects.select_related("version__benchmark", "created_by").order_by("-created_at", "-pk")


def may_control(user, run: EvaluationRun) -> bool:
    """Whether `user` may cancel or resume `run`: who started it, or an admin."""
    return (run.created_by_id is not None and run.created_by_id == user.pk) or has_role(user, ADMIN)


def registered_models(options: dict, *, admin: bool) -> dict:
    """Run options (`model_id`, `backend`, `revision`, `backend_options`, `describer`) with the model and the
    describer resolved against the model registry: what the entries hold, with the options people added
    (admin-only ones for admins only). RunConfigError says what was refused."""
    try:
        choice = model_registry.choose(options.get("model_id"), use=Use.EVALUATION,
                                       backend=options.get("backend") or "", revision=options.get("revision") or "",
                                       options=options.get("backend_options"), admin=admin)
        describer = options.get("describer") or None
        if describer and describer.get("model_id"):
            found = model_registry.choose(describer["model_id"], use=Use.EVALUATION,
                                          backend=describer.get("backend") or "",
                                          revision=describer.get("revision") or "", options=describer.get("options"),
                                          admin=admin)
            describer = {"model_id": found.model_id, "backend": found.backend, "revision": found.revision,
                         "options": found.options}
    except model_registry.ModelRefused as exc:
        raise runs.RunConfigError(str(exc)) from None
    return {**options, **choice.service_kwargs(), "describer": describer}


def start_new_run(version, *, user, **options) -> EvaluationRun:
    """Create a run with registered models (`registered_models`) and send its chunks to the Celery workers;
    nothing is kept if either step refuses (RunConfigError)."""
    options = registered_models(options, admin=model_registry.is_admin(user))
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
