"""Server-rendered pages. Views stay thin: they pick what to show and call services."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.http import urlencode
from django.views.decorators.http import require_POST

from annotation import selectors, version_exports, version_pages, versions
from annotation.crowd import curation, language, platforms, task_page
from annotation.media import max_upload_bytes
from annotation.media_library import video_links
from annotation.models import FrozenError, Image, Video
from config.permissions import roles_allowed
from config.roles import ADMIN, ANNOTATOR, ANY_ROLE, CURATOR, STAFF_ROLES, has_role
from frontend.navigation import entries_for
from generation.media_probe import IMAGE_EXTENSIONS, VIDEO_EXTENSIONS
from generation.selectors import visible_jobs


@login_required
def home(request):
    return render(request, "frontend/home.html", {"entries": entries_for(request.user)})


@roles_allowed(ANNOTATOR)
def my_tasks(request):
    language.activate_for(request)
    return render(request, "frontend/my_tasks.html",
                  task_page.my_tasks_context(request.user, runs=platforms.reach(request)))


@roles_allowed(CURATOR, ADMIN)
def queues(request):
    return render(request, "frontend/queues.html", {"queues": curation.queue_overview()})


@roles_allowed(*STAFF_ROLES)
def media_library(request):
    """The library, searched (`q`: title or file name) and filtered by `kind`, `status` and `tag`."""
    filters = {"query": request.GET.get("q", "").strip()[:200], "status": request.GET.get("status", ""),
               "tag": request.GET.get("tag", "")}
    if filters["status"] not in Video.Status.values:
        filters["status"] = ""
    kind = request.GET.get("kind", "")
    videos = Paginator(selectors.library_assets(Video, **filters), 24).get_page(request.GET.get("vpage"))
    images = Paginator(selectors.library_assets(Image, **filters), 24).get_page(request.GET.get("ipage"))
    accept = ",".join(sorted(VIDEO_EXTENSIONS | IMAGE_EXTENSIONS))
    return render(request, "frontend/media_library.html", {
        "videos": videos if kind != "images" else None, "images": images if kind != "videos" else None,
        "accept": accept, "filters": {**filters, "kind": kind}, "statuses": Video.Status.choices,
        "tags": selectors.media_tags(),
        "filter_query": urlencode({key: value for key, value in (("q", filters["query"]), ("kind", kind),
                                                                 ("status", filters["status"]), ("tag", filters["tag"]))
                                   if value}),
        "can_upload": has_role(request.user, CURATOR, ADMIN),
        "max_upload_mb": max_upload_bytes() // (1024 * 1024),
    })


@roles_allowed(*STAFF_ROLES)
def video_detail(request, pk):
    video = get_object_or_404(Video, pk=pk)
    may_manage = has_role(request.user, CURATOR, ADMIN)
    return render(request, "frontend/video_detail.html", {
        "video": video, "may_manage": may_manage, "links": video_links(video) if may_manage else []})


@roles_allowed(*STAFF_ROLES)
def image_detail(request, pk):
    return render(request, "frontend/image_detail.html", {"image": get_object_or_404(Image, pk=pk),
                                                          "may_manage": has_role(request.user, CURATOR, ADMIN)})


@roles_allowed(*STAFF_ROLES)
def benchmarks(request):
    rows = selectors.benchmarks_with_versions()
    return render(request, "frontend/benchmarks.html", {"benchmarks": rows})


def _version_page(request, version, *, problems=(), export_error="", status=200):
    context = version_pages.version_page(version, request.GET.get("q", ""), request.GET.get("page"))
    return render(request, "frontend/version_detail.html", {
        **context, "can_freeze": not version.frozen and has_role(request.user, CURATOR, ADMIN),
        "may_approve_references": has_role(request.user, CURATOR, ADMIN),
        "freeze_problems": list(problems), "export_layouts": version_exports.layout_choices(version),
        "export_jobs": selectors.version_export_jobs(request.user, version), "export_error": export_error},
        status=status)


@roles_allowed(*STAFF_ROLES)
def version_detail(request, pk):
    """A version's items, searched (`q`) and paged, payloads as labelled fields, media previews."""
    return _version_page(request, get_object_or_404(selectors.versions(), pk=pk))


@roles_allowed(CURATOR, ADMIN)
@require_POST
def version_freeze(request, pk):
    """Freeze a draft version for good: only with `confirm=yes` (400 otherwise); refused items or an
    already frozen version are 409, with the reasons on the page; nothing changes then."""
    version = get_object_or_404(selectors.versions(), pk=pk)
    if request.POST.get("confirm") != "yes":
        return _version_page(request, version, status=400, problems=[
            "Tick the box to confirm: a frozen version can never change again."])
    try:
        versions.freeze(version)
    except FrozenError as exc:
        return _version_page(request, version, status=409, problems=[str(exc)])
    except ValidationError as exc:
        return _version_page(request, version, status=409, problems=exc.messages)
    return redirect("version-detail", pk=version.pk)


@roles_allowed(*STAFF_ROLES)
@require_POST
def version_export(request, pk):
    """Start a download of the version in a `layout` (the Hugging Face dataset, the release's layout or one of
    the benchmark's others) as a background job; the page lists it with its download link. An unknown layout
    is 400, with the reason on the page."""
    version = get_object_or_404(selectors.versions(), pk=pk)
    try:
        job = version_exports.enqueue_version_export(request.user, version, request.POST.get("layout", ""))
    except version_exports.VersionExportError as exc:
        return _version_page(request, version, status=400, export_error=str(exc))
    messages.success(request, f"The export started as job #{job.pk}; its download link appears below when it is done.")
    return redirect("version-detail", pk=version.pk)


@roles_allowed(*STAFF_ROLES)
def jobs_page(request):
    page = Paginator(visible_jobs(request.user), 50).get_page(request.GET.get("page"))
    return render(request, "frontend/jobs.html", {"jobs": page})


@roles_allowed(*ANY_ROLE)
def job_detail(request, pk):
    return render(request, "frontend/job_detail.html", {"job": get_object_or_404(visible_jobs(request.user), pk=pk)})
