"""Read paths of the media, benchmark and version pages: the querysets they show."""

from annotation.models import Benchmark, BenchmarkVersion, Image, Video, VideoSplit


def videos():
    return Video.objects.select_related("probe_job")


def images():
    return Image.objects.select_related("probe_job")


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
