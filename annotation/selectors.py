"""Read paths of the media, benchmark and version pages and of their API: the querysets they show."""

from django.db.models import Q

from annotation.models import Benchmark, BenchmarkVersion, MediaTag, VideoSplit
from annotation.version_exports import VERSION_EXPORT_JOB_KIND
from generation.models import Job

RECENT_EXPORTS = 10


def library_assets(model, *, query: str = "", status: str = "", tag: str = ""):
    """The library's videos or images (`model`) with their probe job, uploader and tags, narrowed by a search
    text (in the title or the original file name), a status and a tag when given."""
    found = model.objects.select_related("probe_job", "uploaded_by").prefetch_related("tags")
    if query:
        found = titled(found, query)
    if status:
        found = found.filter(status=status)
    if tag:
        found = found.filter(tags__name=tag)
    return found


def titled(assets, query: str):
    """The assets (videos or images) with `query` in their title or original file name."""
    return assets.filter(Q(title__icontains=query) | Q(original_name__icontains=query))


def media_tags():
    """Every tag in use, by name."""
    return MediaTag.objects.all()


def benchmarks_with_versions():
    return Benchmark.objects.prefetch_related("versions")


def versions():
    """Every version with its benchmark."""
    return BenchmarkVersion.objects.select_related("benchmark")


def frozen_versions():
    """The frozen versions, by benchmark and label."""
    return versions().filter(frozen=True).order_by("benchmark__slug", "label")


def splits():
    """Video splits with their video."""
    return VideoSplit.objects.select_related("video")


def versions_with_creator():
    """Versions with their benchmark and creator."""
    return BenchmarkVersion.objects.select_related("benchmark", "created_by")


def version_export_jobs(user, version):
    """The user's latest exports of this version, newest first."""
    return (Job.objects.filter(kind=VERSION_EXPORT_JOB_KIND, requested_by=user, params__version=version.pk)
            .order_by("-pk")[:RECENT_EXPORTS])


def version_items(version):
    """A version's items with their media links."""
    return version.items.prefetch_related("media")
