"""The C-VQA curation pages, for curators (seeds/001 §3.1, §4.3; SPEC §2):

- `/cvqa/`: the hub: the sources versions with their questions per type, and links to the pages below;
- `/cvqa/sources/`: upload source questions (a CSV, or the VQAv2 questions and annotations files) with
  their images into a sources version, and the import's report (`annotation.benchmarks.cvqa.sources`);
- `/cvqa/subgroups/`: the images' subgroup labels for the bias analysis, a CSV of labels keyed by image
  to import (`annotation.benchmarks.cvqa.subgroups`); `/cvqa/subgroups/set/` sets or removes one label.

Views only read the request, call those services and render; a refusal is shown with its status.
"""

from collections import Counter

from django.contrib import messages
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST, require_safe

from annotation.benchmarks.cvqa import sources, subgroups
from annotation.benchmarks.cvqa.source_reading import FORMATS
from config.permissions import roles_allowed
from config.roles import ADMIN, CURATOR

CURATORS = (CURATOR, ADMIN)
SHOWN_QUESTIONS = 50  # the newest source questions listed
SHOWN_LABELS = 500
DEFAULT_LABEL = "sources"


def _versions() -> list[dict]:
    rows = []
    for version in sources.source_versions():
        counts = Counter(version.items.filter(payload__kind="source").values_list("payload__type", flat=True))
        rows.append({"version": version, "counts": sorted(counts.items()), "total": sum(counts.values())})
    return rows


@roles_allowed(*CURATORS)
@require_safe
def hub(request):
    return render(request, "cvqa/hub.html", {"versions": _versions(),
                                             "labels": subgroups.labels().count()})


def _sources_context(**extra) -> dict:
    versions = _versions()
    latest = versions[0]["version"] if versions else None
    questions = (latest.items.filter(payload__kind="source").prefetch_related("media__image")
                 .order_by("-id")[:SHOWN_QUESTIONS]) if latest else []
    return {"versions": versions, "latest": latest, "questions": questions, "formats": FORMATS,
            "default_label": latest.label if latest else DEFAULT_LABEL, **extra}


@roles_allowed(*CURATORS)
def sources_page(request):
    """GET: the upload form and the sources versions. POST: import the uploaded files (the report on the
    page; 400 naming every problem, 409 for a frozen version, nothing written then)."""
    if request.method != "POST":
        return render(request, "cvqa/sources.html", _sources_context())
    data, files = request.POST, request.FILES
    try:
        report = sources.upload_sources(request.user, data.get("version", ""), data.get("format", ""),
                                        table=files.get("table"), questions=files.get("questions"),
                                        annotations=files.get("annotations"), images=files.getlist("images"))
    except sources.SourceImportFailed as exc:
        return render(request, "cvqa/sources.html", _sources_context(errors=exc.problems, posted=data),
                      status=exc.status)
    return render(request, "cvqa/sources.html", _sources_context(report=report, posted=data))


def _subgroups_context(**extra) -> dict:
    rows = subgroups.labels()
    return {"rows": rows[:SHOWN_LABELS], "total": rows.count(), "max_label": subgroups.MAX_LABEL, **extra}


@roles_allowed(*CURATORS)
def subgroups_page(request):
    """GET: the labels and the forms. POST: import a CSV of labels (the report on the page; 400 naming
    every problem, nothing written then)."""
    if request.method != "POST":
        return render(request, "cvqa/subgroups.html", _subgroups_context())
    upload = request.FILES.get("table")
    if upload is None:
        return render(request, "cvqa/subgroups.html", _subgroups_context(errors=["Upload a CSV of labels."]),
                      status=400)
    try:
        report = subgroups.import_upload(upload, request.user)
    except subgroups.SubgroupError as exc:
        return render(request, "cvqa/subgroups.html", _subgroups_context(errors=exc.problems), status=exc.status)
    return render(request, "cvqa/subgroups.html", _subgroups_context(report=report))


@roles_allowed(*CURATORS)
@require_POST
def subgroup_set(request):
    """Set (or, with an empty label, remove) one image's label; 400/404 naming the problem."""
    data = request.POST
    try:
        row = subgroups.set_label(request.user, data.get("image", ""), data.get("label", ""))
    except subgroups.SubgroupError as exc:
        return render(request, "cvqa/subgroups.html", _subgroups_context(errors=exc.problems, posted=data),
                      status=exc.status)
    messages.success(request, f"Image #{row.image_id} is labelled “{row.label}”." if row
                     else f"Image #{data.get('image')} has no label now.")
    return redirect("cvqa-subgroups")
