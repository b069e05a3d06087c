"""Server-rendered pages. Views stay thin: they pick what to show and call services."""

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.shortcuts import get_object_or_404, render

from annotation import selectors
from annotation.crowd import curation, task_page
from annotation.media import max_upload_bytes
from annotation.models import Image, Video
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
    return render(request, "frontend/my_tasks.html", task_page.my_tasks_context(request.user))


@roles_allowed(CURATOR, ADMIN)
def queues(request):
    return render(request, "frontend/queues.html", {"queues": curation.queue_overview()})


@roles_allowed(*STAFF_ROLES)
def media_library(request):
    videos = Paginator(selectors.videos(), 24).get_page(request.GET.get("vpage"))
    images = Paginator(selectors.images(), 24).get_page(request.GET.get("ipage"))
    accept = ",".join(sorted(VIDEO_EXTENSIONS | IMAGE_EXTENSIONS))
    return render(request, "frontend/media_library.html", {
        "videos": videos, "images": images, "accept": accept,
        "can_upload": has_role(request.user, CURATOR, ADMIN),
        "max_upload_mb": max_upload_bytes() // (1024 * 1024),
    })


@roles_allowed(*STAFF_ROLES)
def video_detail(request, pk):
    return render(request, "frontend/video_detail.html", {"video": get_object_or_404(Video, pk=pk),
                                                          "may_split": has_role(request.user, CURATOR, ADMIN)})


@roles_allowed(*STAFF_ROLES)
def image_detail(request, pk):
    return render(request, "frontend/image_detail.html", {"image": get_object_or_404(Image, pk=pk)})


@roles_allowed(*STAFF_ROLES)
def benchmarks(request):
    rows = selectors.benchmarks_with_versions()
    return render(request, "frontend/benchmarks.html", {"benchmarks": rows})


@roles_allowed(*STAFF_ROLES)
def version_detail(request, pk):
    version = get_object_or_404(selectors.versions(), pk=pk)
    items = Paginator(version.items.prefetch_related("media"), 50).get_page(request.GET.get("page"))
    return render(request, "frontend/version_detail.html", {"version": version, "items": items})


@roles_allowed(*STAFF_ROLES)
def jobs_page(request):
    page = Paginator(visible_jobs(request.user), 50).get_page(request.GET.get("page"))
    return render(request, "frontend/jobs.html", {"jobs": page})


@roles_allowed(*ANY_ROLE)
def job_detail(request, pk):
    return render(request, "frontend/job_detail.html", {"job": get_object_or_404(visible_jobs(request.user), pk=pk)})
