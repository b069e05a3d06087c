"""Export actions for the Django admin: queue an `export_results` job for the selected rows.

Each action queues a background job (`evaluation.exports.enqueue_export`) and answers with links to
the job's page and to the download, which works once the job has finished; nothing is built in the
request. Who may export which rows is checked in `enqueue_export` (`exports.can_export`).

Importing this module adds the actions to the registered admins (`attach`): on evaluation runs,
the predictions, metrics or judgments of the selected runs, or the runs themselves; on predictions,
judgments and crowd submissions (human judgments), the selected rows. It is imported at the end of
`evaluation.admin`, after that module has registered its own admins; crowd submissions get their
actions from here because `annotation` must not import `evaluation`.

A selection goes to the job as whole runs or whole studies when it covers them entirely (so
"select all" over a run's million predictions costs two queries), else as a list of at most
`MAX_SELECTED_IDS` primary keys.
"""

from django.apps import apps
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.urls import reverse
from django.utils.html import format_html

from evaluation import exports

MAX_SELECTED_IDS = 20_000
FORMAT_ORDER = ("csv", "jsonl", "parquet", "hf")


def selection_of(src: exports.Source, queryset) -> dict:
    """The job parameters that select the rows of `queryset` (a queryset of `src`'s model)."""
    queryset = queryset.order_by()
    count = queryset.count()
    for key, lookup in (("runs", src.run_lookup), ("studies", src.study_lookup)):
        if not lookup or lookup == "pk":
            continue
        groups = sorted(set(queryset.values_list(lookup, flat=True).distinct()))
        if groups and src.queryset(**{key: groups}).count() == count:
            return {key: groups}
    if count > MAX_SELECTED_IDS:
        raise exports.ExportError(
            f"{count} rows are selected; an export of single rows takes at most {MAX_SELECTED_IDS}. Select whole "
            f"runs or studies (filter by them and select all), or use `manage.py export_results`.")
    return {"ids": list(queryset.values_list("pk", flat=True))}


def export_action(what: str, fmt: str, *, of_runs: bool = False):
    """An admin action that exports the selected rows of source `what` as `fmt`; with `of_runs` the
    selection is runs and the export is `what` (e.g. predictions) of those runs."""

    def action(modeladmin, request, queryset):
        try:
            if of_runs:
                selection = {"runs": sorted(queryset.values_list("pk", flat=True))}
            else:
                selection = selection_of(exports.source(what), queryset)
            job = exports.enqueue_export(request.user, what, fmt, **selection)
        except PermissionDenied as exc:
            modeladmin.message_user(request, str(exc), level=messages.ERROR)
            return
        except exports.ExportError as exc:
            modeladmin.message_user(request, str(exc), level=messages.ERROR)
            return
        modeladmin.message_user(request, format_html(
            'Export queued as <a href="{}">job #{}</a>; once it has finished, download it '
            '<a href="{}">here</a>.', reverse("job-detail", kwargs={"pk": job.pk}), job.pk,
            reverse("export-download", kwargs={"pk": job.pk})))

    action.__name__ = f"export_{what}_{'of_runs_' if of_runs else ''}{fmt}"
    target = f"{what} of the selected runs" if of_runs else f"the selected {what}"
    return admin.action(description=f"Export {target} ({exports.FORMAT_LABELS[fmt]})")(action)


def actions_for(what: str, *, of_runs: bool = False) -> list:
    return [export_action(what, fmt, of_runs=of_runs) for fmt in FORMAT_ORDER]


# Model label → the export actions its admin gets.
ACTIONS_BY_MODEL = {
    "evaluation.EvaluationRun": (actions_for("predictions", of_runs=True) + actions_for("metrics", of_runs=True)
                                 + actions_for("judgments", of_runs=True) + actions_for("runs")),
    "evaluation.Prediction": actions_for("predictions"),
    "evaluation.Judgment": actions_for("judgments"),
    "annotation.Submission": actions_for("submissions"),
}


def attach(site=admin.site) -> None:
    """Add the export actions to the admins registered on `site` (a model without one is skipped)."""
    for label, actions in ACTIONS_BY_MODEL.items():
        try:
            model_admin = site.get_model_admin(apps.get_model(label))
        except (LookupError, admin.sites.NotRegistered):
            continue
        existing = list(model_admin.actions or [])
        names = {getattr(a, "__name__", a) for a in existing}
        model_admin.actions = existing + [a for a in actions if a.__name__ not in names]


attach()
