"""A BlackSwanSuite +P/+PC captions study's page for curators: the accepted captions of its videos
(`annotation.benchmarks.blackswan.caption_study`), applied to an unfrozen version."""

from django.contrib import messages
from django.http import Http404
from django.shortcuts import redirect, render

from annotation.benchmarks.blackswan import caption_study
from annotation.crowd.errors import CrowdError
from config.permissions import roles_allowed
from config.roles import ADMIN, CURATOR


def _captions_page(request, study, error: str = "", status: int = 200, version_label: str = ""):
    return render(request, "blackswan/captions.html",
                  {"study": study, "rows": caption_study.study_rows(study),
                   "versions": caption_study.unfrozen_versions(), "error": error,
                   "version_label": version_label}, status=status)


@roles_allowed(CURATOR, ADMIN)
def captions_page(request, slug):
    """GET: the videos of +P/+PC captions study `slug` with their accepted captions. POST `version` (a label):
    fill the accepted captions into that unfrozen BlackSwanSuite version (404 for no such version, 409 for
    a frozen one)."""
    try:
        study = caption_study.caption_study(slug)
    except CrowdError as exc:
        raise Http404(exc.message) from None
    if request.method != "POST":
        return _captions_page(request, study)
    label = (request.POST.get("version") or "").strip()
    if not label:
        return _captions_page(request, study, "Choose an unfrozen BlackSwanSuite version.", 400)
    try:
        applied = caption_study.apply_captions(label, request.user)
    except CrowdError as exc:
        return _captions_page(request, study, exc.message, exc.status, label)
    messages.success(request, applied.message)
    return redirect("blackswan-captions", slug=study.slug)
