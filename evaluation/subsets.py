"""Named, reproducible subsets of a frozen version's requests (`VersionSubset`): the 150-question samples
of BlackSwanSuite's ablations and human performance (seeds/000 §5.2), for any benchmark.

`make_subset(version, name, seed=…, per_group=150, variants=None, items=None)` plans the version's
requests as a run with the default options plans them (`scoring.item_requests`) and draws, per variant,
`per_group` request ids (all of them when the variant has fewer; without named variants, those the
version has no request of are left out). With `items` set, the open-ended
variants (answer type `free`, BlackSwanSuite's Gen tasks) are drawn by item instead: `items` items
(videos) among those with such requests, every open-ended request of each. Each draw has a seed of its
own, `derived_seed(seed, "subset:<group>")`, over the candidates' ids sorted in Python (never the
database's collation), so the same version, seed and sizes give the same subset on any database; the
ids are stored sorted within each variant.

A run restricted to a subset (`EvaluationRun.subset`, `runner.plan`) answers only the subset's requests;
request ids do not depend on the input or prompting strategy, so one subset serves every ablation.
"""

from __future__ import annotations

import random

from django.db import IntegrityError, transaction

from evaluation import benchmarks, scoring
from evaluation.benchmarks.base import RequestOptions, derived_seed
from evaluation.models import VersionSubset

DEFAULT_PER_GROUP = 150
FREE_ANSWERS = ("free",)  # answer types drawn by item when `items` is given
NAME_LENGTH = 100


class SubsetError(ValueError):
    """A subset that cannot be made or found as asked; `status` is the HTTP status that describes it."""

    def __init__(self, message: str, *, status: int = 400):
        super().__init__(message)
        self.message = message
        self.status = status


def _positive(value, what: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise SubsetError(f"{what} must be a whole number of at least 1 (got {value!r}).")
    return value


def _draw(candidates, size: int, seed: int, group: str) -> list[str]:
    """`size` of the candidates (all when fewer), drawn with the group's own seed, sorted."""
    ordered = sorted(set(candidates))
    if size >= len(ordered):
        return ordered
    return sorted(random.Random(derived_seed(seed, f"subset:{group}")).sample(ordered, size))


def draw(version, *, seed: int, per_group: int = DEFAULT_PER_GROUP, variants=None,
         items: int | None = None) -> dict:
    """What `make_subset` stores, without storing it: {variants, groups, item_ids, request_ids}."""
    try:
        benchmark = benchmarks.get(version.benchmark.slug)
    except (KeyError, ImportError) as exc:
        raise SubsetError(f"{version.benchmark.slug} has no benchmark module: {exc}") from None
    asked = list(dict.fromkeys(variants or ()))
    unknown = [variant for variant in asked if variant not in benchmark.variants]
    if unknown:
        raise SubsetError(f"{benchmark.slug} has no variant {', '.join(unknown)}; "
                          f"known: {', '.join(benchmark.variants)}.")
    chosen = [variant for variant in benchmark.variants if not asked or variant in asked]
    try:
        planned = [request for _, requests in scoring.item_requests(version, RequestOptions(), tuple(chosen))
                   for request in requests]
    except (KeyError, ValueError) as exc:
        raise SubsetError(f"The requests of {version} cannot be planned: {exc}") from None
    by_variant: dict[str, list] = {variant: [] for variant in chosen}
    for request in planned:
        by_variant.setdefault(request.variant, []).append(request)
    empty = [variant for variant in chosen if not by_variant[variant]]
    if empty and (asked or len(empty) == len(chosen)):  # all variants: those the version lacks are left out
        raise SubsetError(f"{version} has no request of {', '.join(empty)}.")
    chosen = [variant for variant in chosen if by_variant[variant]]
    open_ended = [variant for variant in chosen if items is not None
                  and all(r.answer_type in FREE_ANSWERS for r in by_variant[variant])]
    item_ids: list[str] = []
    if open_ended:
        item_ids = _draw({r.item_id for v in open_ended for r in by_variant[v]}, items, seed, "items")
    groups = {}
    for variant in chosen:
        if variant in open_ended:
            kept = set(item_ids)
            groups[variant] = sorted(r.request_id for r in by_variant[variant] if r.item_id in kept)
        else:
            groups[variant] = _draw([r.request_id for r in by_variant[variant]], per_group, seed, variant)
    return {"variants": chosen, "groups": groups, "item_ids": item_ids,
            "request_ids": [rid for variant in chosen for rid in groups[variant]]}


def make_subset(version, name: str, *, seed: int = 0, per_group: int = DEFAULT_PER_GROUP, variants=None,
                videos: int | None = None, user=None) -> VersionSubset:
    """Draw and store a named subset of a frozen version (see the module docstring); `videos` is the
    number of items drawn for the open-ended variants (BlackSwanSuite: videos). SubsetError (400, or
    409 for a name the version already has) when it cannot be made; nothing is stored then."""
    name = (name or "").strip()
    if not name or len(name) > NAME_LENGTH:
        raise SubsetError(f"A subset needs a name of 1 to {NAME_LENGTH} characters.")
    if not version.frozen:
        raise SubsetError(f"{version} is not frozen: subsets are drawn from a frozen version.")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise SubsetError(f"The seed must be a whole number (got {seed!r}).")
    per_group = _positive(per_group, "The size per group")
    videos = _positive(videos, "The number of videos")
    if per_group is None:
        raise SubsetError("Give the size per group.")
    if VersionSubset.objects.filter(version=version, name=name).exists():
        raise SubsetError(f"{version} already has a subset named {name!r}.", status=409)
    drawn = draw(version, seed=seed, per_group=per_group, variants=variants, items=videos)
    try:
        with transaction.atomic():
            return VersionSubset.objects.create(
                version=version, name=name, seed=seed, per_group=per_group, items=videos, variants=drawn["variants"],
                groups=drawn["groups"], item_ids=drawn["item_ids"], request_ids=drawn["request_ids"],
                created_by=user if user is not None and getattr(user, "pk", None) else None)
    except IntegrityError:
        raise SubsetError(f"{version} already has a subset named {name!r}.", status=409) from None


def find_subset(version, subset) -> VersionSubset | None:
    """The version's subset named `subset` (or the subset itself, checked to be the version's); None for
    no subset; SubsetError naming the version's subsets otherwise."""
    if subset in (None, ""):
        return None
    if isinstance(subset, VersionSubset):
        if subset.version_id != version.pk:
            raise SubsetError(f"Subset {subset.name!r} belongs to {subset.version}, not {version}.")
        return subset
    found = VersionSubset.objects.filter(version=version, name=str(subset).strip()).first()
    if found is None:
        known = ", ".join(VersionSubset.objects.filter(version=version).values_list("name", flat=True)) or "none yet"
        raise SubsetError(f"{version} has no subset {subset!r}; its subsets: {known}.")
    return found


def counts(subset: VersionSubset) -> dict[str, int]:
    """Requests per variant of a subset, in its order."""
    return {variant: len(ids) for variant, ids in (subset.groups or {}).items()}


def subsets_of(versions) -> list[VersionSubset]:
    """The subsets of a version, or of several, by version and name."""
    versions = list(versions) if isinstance(versions, list | tuple | set) else [versions]
    return list(VersionSubset.objects.filter(version__in=versions).select_related("version__benchmark")
                .order_by("version_id", "name"))
