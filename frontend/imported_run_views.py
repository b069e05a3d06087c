"""A version's results page for models run outside the platform: the version's requests as a download (the
platform's JSON lines, lmms-eval samples or a VLMEvalKit table, as `manage.py export_requests` writes them:
`evaluation.request_exports`), and the predictions made from them imported as a run (as `manage.py
import_run` imports them: `evaluation.imported_runs`) by a background job (`evaluation.prediction_import_jobs`), which
then shows on the page like any run.

Researchers and admins. The request options default to the paper's main setting, as on the command line; a
refusal found in the request (a bad option, a version that is not frozen, a file too large) re-renders the
version's page with the reason (400) and keeps nothing; a malformed file fails the job with the reason."""

from django import forms
from django.contrib import messages
from django.http import StreamingHttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_GET, require_POST

from config.permissions import roles_allowed
from config.roles import ADMIN, RESEARCHER
from evaluation import imported_runs, prediction_import_jobs, request_exports
from frontend.result_action_views import form_error
from frontend.results_views import version_of, version_page


class RequestOptionsForm(forms.Form):
    """How the requests are (or were) asked; empty fields take the paper's main setting."""

    input_strategy = forms.CharField(required=False, max_length=32)
    prompting = forms.CharField(required=False, max_length=32)
    seed = forms.IntegerField(required=False)
    variants = forms.MultipleChoiceField(required=False)
    option_order = forms.CharField(required=False, max_length=40)

    def __init__(self, *args, version=None, **kwargs):
        super().__init__(*args, **kwargs)
        offered = request_exports.offered_options(version) or {}
        self.fields["variants"].choices = [(name, name) for name in offered.get("variants", [])]

    def options(self) -> imported_runs.ImportOptions:
        data = self.cleaned_data
        return imported_runs.ImportOptions(
            input_strategy=data["input_strategy"] or "default", prompting=data["prompting"] or "standard",
            seed=data["seed"] or 0, variants=tuple(data["variants"]), option_order=data["option_order"] or "release")


class DownloadRequestsForm(RequestOptionsForm):
    fmt = forms.ChoiceField(choices=list(request_exports.FORMAT_LABELS.items()))
    frames = forms.CharField(required=False, max_length=64)


class ImportPredictionsForm(RequestOptionsForm):
    file = forms.FileField()
    fmt = forms.ChoiceField(required=False, choices=[("", "detect"), *request_exports.FORMAT_LABELS.items()])
    model_id = forms.CharField(max_length=imported_runs.MODEL_ID_LENGTH)


@roles_allowed(RESEARCHER, ADMIN)
@require_GET
def download_requests(request, pk):
    """The version's requests under the chosen options, streamed as a file in the chosen format."""
    version = version_of(pk)
    form = DownloadRequestsForm(request.GET, version=version)
    if not form.is_valid():
        return version_page(request, version, status=400, error=form_error(form))
    if not version.frozen:
        return version_page(request, version, status=400,
                            error=f"Version {version} is not frozen: its requests are exported once it is frozen.")
    chosen = form.options()
    try:
        export = request_exports.checked_request_export(
            version, input_strategy=chosen.input_strategy, prompting=chosen.prompting, seed=chosen.seed,
            option_order=chosen.option_order, variants=chosen.variants, fmt=form.cleaned_data["fmt"],
            frames=form.cleaned_data["frames"])
    except ValueError as exc:
        return version_page(request, version, status=400, error=f"The requests cannot be exported: {exc}")
    response = StreamingHttpResponse(export.chunks, content_type=export.content_type)
    response["Content-Disposition"] = f'attachment; filename="{export.file_name}"'
    return response


@roles_allowed(RESEARCHER, ADMIN)
@require_POST
def import_predictions(request, pk):
    """Check the import, store the file and start the job that imports it; to the job's page (which links the
    new run once it is imported), or the version's page again with the reason (400)."""
    version = version_of(pk)
    form = ImportPredictionsForm(request.POST, request.FILES, version=version)
    if not form.is_valid():
        return version_page(request, version, status=400, error=form_error(form), import_values=request.POST)
    try:
        job = prediction_import_jobs.enqueue_import(
            version, form.cleaned_data["file"], model_id=form.cleaned_data["model_id"],
            fmt=form.cleaned_data["fmt"] or None, options=form.options(), user=request.user)
    except imported_runs.ImportRefused as exc:
        return version_page(request, version, status=400, error=f"Nothing was imported: {exc}",
                            import_values=request.POST)
    messages.success(request, f"The import started as job #{job.pk}; the new run is linked here when it is done.")
    return redirect("job-detail", pk=job.pk)
