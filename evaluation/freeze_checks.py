"""The check that keeps a version that cannot be evaluated from being frozen.

`evaluation.apps` registers `requests_check` with `annotation.versions` at start-up: freezing then
builds every item's requests under the default options (the benchmark's default input strategy,
standard prompting) and refuses, naming each item and the reason, when its benchmark module cannot
(e.g. a C-VQA numerical answer that is not a number, an unknown MAIA category, a BlackSwan video
without the end of its last part).
"""

from __future__ import annotations

from evaluation import benchmarks
from evaluation.benchmarks.base import RequestOptions


def requests_check(version) -> list[tuple[str, str]]:
    """(external id, reason) for every item of `version` whose requests cannot be built."""
    try:
        benchmark = benchmarks.get(version.benchmark.slug)
    except KeyError:
        return []
    problems = []
    items = version.items.order_by("external_id").prefetch_related("media__video", "media__image")
    for item in items.iterator(chunk_size=500):
        try:
            made = benchmark.requests(item, RequestOptions())
        except Exception as exc:  # noqa: BLE001  (whatever the builder raises, the item cannot be evaluated)
            problems.append((item.external_id, reason(exc)))
            continue
        if not made:
            problems.append((item.external_id, "its benchmark makes no request of it"))
    return problems


def reason(exc: Exception) -> str:
    """The builder's own message for a ValueError; the exception's type as well for anything else."""
    if isinstance(exc, ValueError) and str(exc):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"
