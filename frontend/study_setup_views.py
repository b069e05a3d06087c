"""Curators' pages that set a study up: create it (form builder, Markdown previews), add its items
(from the media library, a frozen version or an uploaded file, with a dry run), open / pause /
close it, and duplicate it.

Views stay thin: studies are made by `annotation.crowd.studies.create_study` (through
`study_forms.NewStudyForm`), items come from `annotation.crowd.item_sources`, state changes go
through `annotation.crowd.study_state` and copies through `annotation.crowd.study_copy`.
"""

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from annotation import selectors as media_selectors
from annotation.crowd import item_sources, kinds, study_copy, study_state
from annotation.crowd.errors import CrowdError
from annotation.crowd.forms import FIELD_TYPES
from annotation.crowd.instructions import render_markdown
from annotation.crowd.models import Study
from annotation.crowd.study_forms import NewStudyForm
from annotation.models import Image, MediaAsset, Video
from config.permissions import roles_allowed
from config.roles import ADMIN, CURATOR

CURATORS = (CURATOR, ADMIN)
MAX_PREVIEW_CHARS = 100_000
SOURCES = ("media", "version", "file")
MEDIA_CHOICES = 200  # the newest ready videos and images offered on the items page


@roles_allowed(*CURATORS)
def study_new(request):
    """GET: an empty study form. POST: create the study (a draft) and go on to its items; settings
    out of range are 400 and a taken address 409, each shown on the form (nothing saved)."""
    asked = request.GET.get("step_kind")  # a kind's curation page links here with its kind chosen
    form = NewStudyForm(request.POST or None, initial={"step_kind": asked} if asked in kinds.names() else None)
    status = 200
    if request.method == "POST":
        if form.is_valid():
            try:
                study = form.create(request.user)
            except CrowdError as exc:
                for name, text in (exc.details or {}).items():
                    form.add_error(name if name in form.fields else None, f"{name}: {text}")
                if not exc.details:
                    form.add_error(None, exc.message)
                status = exc.status
            else:
                if kinds.of(study).setup is not None and study.items.exists():  # the kind made its first items
                    messages.success(request, f"Study “{study.name}” created with its first items; open it when "
                                              "it is ready.")
                    return redirect("crowd-study-detail", slug=study.slug)
                messages.success(request, f"Study “{study.name}” created. Add its items, then open it.")
                return redirect("crowd-study-items", slug=study.slug)
        else:
            status = 400
    return render(request, "crowd/study_new.html", {
        "form": form, "field_types": sorted(FIELD_TYPES), "form_kinds": kinds.with_forms(),
        "output_kinds": kinds.with_output()}, status=status)


@roles_allowed(*CURATORS)
@require_POST
def markdown_preview(request):
    """The Markdown of the form's `text` as the workers will see it (a fragment of HTML)."""
    text = request.POST.get("text", "")
    if len(text) > MAX_PREVIEW_CHARS:
        return HttpResponse("Too long to preview.", status=413, content_type="text/plain")
    return HttpResponse(render_markdown(text), content_type="text/html; charset=utf-8")


def _batch(request):
    source = request.POST.get("source", "")
    if source == "media":
        return item_sources.from_media(request.POST.getlist("video"), request.POST.getlist("image"))
    if source == "version":
        return item_sources.from_version(request.POST.get("version", ""))
    upload = request.FILES.get("file")
    if upload is None:
        raise CrowdError("Choose a CSV or JSON Lines file to upload.")
    if upload.size > item_sources.MAX_UPLOAD_BYTES:
        raise CrowdError(f"The file is larger than {item_sources.MAX_UPLOAD_BYTES // (1024 * 1024)} MB.", status=413)
    return item_sources.from_upload(upload.name, upload.read())


def _items_context(study: Study) -> dict:
    return {
        "study": study, "sources": SOURCES, "item_count": study.items.count(),
        "videos": media_selectors.library_assets(Video, status=MediaAsset.Status.READY)[:MEDIA_CHOICES],
        "images": media_selectors.library_assets(Image, status=MediaAsset.Status.READY)[:MEDIA_CHOICES],
        "versions": media_selectors.frozen_versions(), "items_help": kinds.of(study).items_help,
    }


@roles_allowed(*CURATORS)
def study_items(request, slug):
    """GET: the ways to add items. POST: check the chosen rows (`dry_run`) or add them all; problems
    are listed by row and nothing is written (400, or 200 for a dry run)."""
    study = get_object_or_404(Study, slug=slug)
    context = _items_context(study)
    if request.method != "POST":
        return render(request, "crowd/study_items.html", context)
    source = request.POST.get("source", "")
    dry_run = "dry_run" in request.POST
    try:
        if source not in SOURCES:
            raise CrowdError("Choose where the items come from.")
        outcome = item_sources.add(study, _batch(request), dry_run=dry_run)
    except CrowdError as exc:
        return render(request, "crowd/study_items.html", {**context, "source": source, "error": exc.message},
                      status=exc.status)
    if outcome.created:
        messages.success(request, f"{outcome.created} item{'s' if outcome.created != 1 else ''} added.")
        return redirect("crowd-study-detail", slug=study.slug)
    status = 400 if outcome.problems and not dry_run else 200
    return render(request, "crowd/study_items.html", {**context, "source": source, "outcome": outcome},
                  status=status)


@roles_allowed(*CURATORS)
@require_POST
def study_change_state(request, slug):
    """Open, pause or close the study (`verb` in the form); a move its state does not allow is 409."""
    study = get_object_or_404(Study, slug=slug)
    try:
        study = study_state.change(study, request.POST.get("verb", ""), request.user,
                                   reason=request.POST.get("reason", "").strip() or "on the study page")
    except CrowdError as exc:
        return render(request, "crowd/error.html", {
            "study": study, "message": exc.message, "title": "The study cannot do that now", "status": exc.status,
        }, status=exc.status)
    messages.success(request, f"The study is {study.get_state_display().lower()}.")
    return redirect("crowd-study-detail", slug=study.slug)


@roles_allowed(*CURATORS)
@require_POST
def study_duplicate(request, slug):
    """A draft copy of the study with its settings and items (no claims, no answers)."""
    study = get_object_or_404(Study, slug=slug)
    try:
        copy = study_copy.duplicate(study, request.user, name=request.POST.get("name", "").strip())
    except CrowdError as exc:
        return render(request, "crowd/error.html", {
            "study": study, "message": exc.message, "title": "The study cannot be copied", "status": exc.status,
        }, status=exc.status)
    messages.success(request, f"Copied “{study.name}” to this draft.")
    return redirect("crowd-study-detail", slug=copy.slug)
