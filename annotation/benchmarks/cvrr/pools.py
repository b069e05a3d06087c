"""The CVRR-ES benchmark row and the unfrozen version its curation works in.

Videos under curation are `video` items (payload kind `video`) of the video pool version
(`VIDEO_POOL_LABEL`, source "curation"), made when first needed. It is never frozen: the evaluation
builds requests only for `qa` items, so freezing it is refused item by item (`evaluation.freeze_checks`).
Refusals here are `CurationError`s carrying the HTTP status that describes them.
"""

from __future__ import annotations

from annotation.benchmarks import registry
from annotation.models import Benchmark, BenchmarkVersion

SLUG = "cvrr"
VIDEO_POOL_LABEL = "video-pool"


class CurationError(Exception):
    """A CVRR-ES curation step refused; `status` is the HTTP status that describes it."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.message = message
        self.status = status


def benchmark() -> Benchmark:
    """The CVRR-ES benchmark row (made from the registry when missing)."""
    definition = registry.get(SLUG)
    found, _ = Benchmark.objects.get_or_create(slug=SLUG, defaults={"name": definition.name,
                                                                    "description": definition.description})
    return found


def video_pool_version(user=None) -> BenchmarkVersion:
    """The unfrozen video pool version (made when missing); 409 when it was frozen."""
    version, _ = BenchmarkVersion.objects.get_or_create(
        benchmark=benchmark(), label=VIDEO_POOL_LABEL,
        defaults={"created_by": user, "source": BenchmarkVersion.Source.CURATION,
                  "description": "Videos assigned to CVRR-ES dimensions, with their captions (never frozen)."})
    if version.frozen:
        raise CurationError(f"Version {version} is frozen: the video pool must stay unfrozen.", status=409)
    return version


def find_video_pool() -> BenchmarkVersion | None:
    """The video pool version if it exists (reading pages do not make it)."""
    return BenchmarkVersion.objects.filter(benchmark__slug=SLUG, label=VIDEO_POOL_LABEL).first()
