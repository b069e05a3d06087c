"""The sample of QA pairs CVRR-ES experts assess: every video at least once, then at random by dimension
(seeds/003 §3.2: "We randomly sample 1120 QA pairs, which encompass all videos of the CVRR-ES benchmark";
SPEC "What the papers also did").

- The population is the `qa` items of an unfrozen CVRR-ES QA pool version whose curation record is at stage
  `filtered` (kept in filtration), ordered by external id. A pair without its library video (role
  `video`) cannot be shown to an expert: it is left out, with its reason. A video is its dimension and
  its `video_id` (the release's identity: each dimension folder has its own videos).
- `draw(population, size, seed)`: `random.Random(seed)` first picks one pair of every video (videos in
  order), then fills up the sample at random, stratified by dimension: each further place goes to the
  dimension furthest below its proportional share of the sample (`size` × its share of the population;
  ties to the first dimension in order) that still has pairs left, and each dimension's further pairs
  are drawn from its remaining pairs in external-id order. The same pool and seed give the same sample.
  The sample is ordered by video, so that an expert gets a video's pairs one after another.
- `resolve_size(population, size, share)`: the sample size, given as a number of pairs or a share of the
  population (rounded half up); it must cover every video and not exceed the population.
- `setup`: what a study of the kind made on the studies page starts with: the expert qualification as
  its requirement and, when it is given no items, a sample of the one QA pool with the paper's share
  (1,120 of 2,400 pairs, at least one pair per video) and seed `DEFAULT_SEED`.
"""

from __future__ import annotations

import random
from collections import defaultdict
from dataclasses import dataclass, field
from fractions import Fraction

from annotation.benchmarks.cvrr import expert_group, stages
from annotation.crowd.errors import CrowdError
from annotation.crowd.kinds import StudySetup
from annotation.curation_models import CategoryDefinition
from annotation.models import BenchmarkItem, BenchmarkVersion, Video

SLUG = "cvrr"
STUDY_KIND = "cvrr_expert_assessment"
PAPER_PAIRS, PAPER_POPULATION = 1120, 2400
DEFAULT_SHARE = Fraction(PAPER_PAIRS, PAPER_POPULATION)
DEFAULT_SEED = 0
METHOD = ("random.Random(seed): one pair of every video (videos in order), then the rest stratified by dimension "
          "(each place to the dimension furthest below its proportional share)")


@dataclass(frozen=True)
class Pair:
    item: BenchmarkItem
    video: Video

    @property
    def dimension(self) -> str:
        return self.item.payload["dimension"]

    @property
    def video_key(self) -> tuple[str, str]:
        return (self.item.payload["dimension"], self.item.payload["video_id"])


@dataclass
class Population:
    version: BenchmarkVersion
    pairs: list[Pair]
    excluded: dict[str, str] = field(default_factory=dict)  # external id -> why it cannot be assessed

    @property
    def videos(self) -> dict[tuple[str, str], list[Pair]]:
        found: dict[tuple[str, str], list[Pair]] = defaultdict(list)
        for pair in self.pairs:
            found[pair.video_key].append(pair)
        return dict(sorted(found.items()))

    @property
    def dimensions(self) -> dict[str, list[Pair]]:
        found: dict[str, list[Pair]] = defaultdict(list)
        for pair in self.pairs:
            found[pair.dimension].append(pair)
        return dict(sorted(found.items()))


# --- The pool ----------------------------------------------------------------------------------------

def qa_pools():
    """Unfrozen CVRR-ES versions holding QA pairs under curation, newest first."""
    return (BenchmarkVersion.objects.filter(benchmark__slug=SLUG, frozen=False, items__payload__kind="qa",
                                            items__curation__isnull=False)
            .distinct().select_related("benchmark").order_by("-created_at", "-pk"))


def pool_named(pk) -> BenchmarkVersion:
    """The QA pool with this id; CrowdError (400) for anything else, saying why."""
    version = BenchmarkVersion.objects.select_related("benchmark").filter(pk=pk).first() \
        if str(pk).strip().isdigit() else None
    if version is None:
        raise CrowdError(f"No version {pk!r}: choose a CVRR-ES QA pool.")
    if version.benchmark.slug != SLUG:
        raise CrowdError(f"Version {version} is not a CVRR-ES version.")
    if version.frozen:
        raise CrowdError(f"Version {version} is frozen: experts assess the pairs of an unfrozen QA pool.", status=409)
    return version


def default_pool() -> BenchmarkVersion:
    """The one QA pool; CrowdError when there is none or several to choose from."""
    pools = list(qa_pools()[:2])
    if not pools:
        raise CrowdError("No CVRR-ES QA pool holds pairs under curation yet.", status=409)
    if len(pools) > 1:
        raise CrowdError("There are several CVRR-ES QA pools: create the study on the expert assessment page, "
                         "which lets you choose one.")
    return pools[0]


def _video_of(item: BenchmarkItem) -> Video | None:
    for media in item.media.all():
        if media.role == "video" and media.video_id:
            return media.video
    return None


def population(version: BenchmarkVersion) -> Population:
    """The pairs of `version` kept in filtration, with their videos; the others that are there are counted
    out with their reason."""
    items = (version.items.filter(payload__kind="qa", curation__stage=stages.FILTERED)
             .prefetch_related("media__video").order_by("external_id"))
    pairs, excluded = [], {}
    for item in items:
        video = _video_of(item)
        if video is None:
            excluded[item.external_id] = "no library video to show the experts"
        else:
            pairs.append(Pair(item=item, video=video))
    return Population(version=version, pairs=pairs, excluded=excluded)


# --- The sample ----------------------------------------------------------------------------------------

def whole(value, name: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise CrowdError(f"{name} must be a whole number of at least {minimum} (got {value!r}).")
    return value


def resolve_size(found: Population, size=None, share=None) -> int:
    """The number of pairs to draw (see the module docstring); CrowdError saying why otherwise."""
    if (size is None) == (share is None):
        raise CrowdError("Give the sample as a number of pairs or as a share of the pool, not both.")
    total, videos = len(found.pairs), len(found.videos)
    if not total:
        raise CrowdError(f"No pair of {found.version} is ready for experts (kept in filtration, with its video).",
                         status=409)
    if share is not None:
        if isinstance(share, bool) or not isinstance(share, int | float | Fraction) or not 0 < share <= 1:
            raise CrowdError(f"The share must be above 0 and at most 1 (got {share!r}).")
        size = int(Fraction(share).limit_denominator(10**6) * total + Fraction(1, 2))
        if size < videos:
            raise CrowdError(f"A share of {float(share):g} gives {size} pairs, fewer than the {videos} videos the "
                             f"sample must cover: choose at least {videos / total:.4f}.")
    size = whole(size, "The sample size", 1)
    if size < videos:
        raise CrowdError(f"A sample of {size} pairs cannot cover the {videos} videos of {found.version}: it needs at "
                         f"least {videos} pairs, one per video.")
    if size > total:
        raise CrowdError(f"The sample of {size} pairs is larger than the {total} pairs of {found.version} ready for "
                         f"experts.")
    return size


def draw(found: Population, size: int, seed: int) -> list[Pair]:
    """`size` pairs covering every video, drawn with `seed` (see the module docstring)."""
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise CrowdError(f"The seed must be a whole number (got {seed!r}).")
    rng = random.Random(seed)
    chosen = [rng.choice(pairs) for pairs in found.videos.values()]
    taken = {pair.item.pk for pair in chosen}
    dimensions = found.dimensions
    total = len(found.pairs)
    have = {name: sum(1 for pair in chosen if pair.dimension == name) for name in dimensions}
    left = {name: [pair for pair in pairs if pair.item.pk not in taken] for name, pairs in dimensions.items()}
    extra = dict.fromkeys(dimensions, 0)
    order = list(dimensions)
    for _place in range(size - len(chosen)):
        open_ = [name for name in order if len(left[name]) > extra[name]]
        # how far below its share of the sample: size * N_d / N - n_d, scaled by N to stay whole
        best = max(open_, key=lambda name: (size * len(dimensions[name]) - total * (have[name] + extra[name]),
                                            -order.index(name)))
        extra[best] += 1
    for name in order:
        chosen.extend(rng.sample(left[name], extra[name]))
    return sorted(chosen, key=lambda pair: (pair.video_key, pair.item.external_id))


def dimension_texts() -> dict[str, tuple[str, str]]:
    """{dimension key: (name, description)} from CVRR-ES's category definitions (curators edit them)."""
    rows = CategoryDefinition.objects.filter(benchmark__slug=SLUG).values_list("key", "name", "description")
    return {key: (name, description) for key, name, description in rows}


def humanised(key: str) -> str:
    """A dimension's folder name as words: "partial_actions" -> "Partial actions"."""
    words = str(key).replace("_", " ").replace("-", " ").strip()
    return words[:1].upper() + words[1:]


def dimension_text(key: str, texts: dict[str, tuple[str, str]]) -> tuple[str, str]:
    """(name, description) of a dimension: its definition when there is one, else its key as words."""
    return texts.get(key) or (humanised(key), "")


def item_payload(pair_payload: dict, texts: dict[str, tuple[str, str]]) -> dict:
    """What the expert reads beside the video (the dimension as defined when the study was made)."""
    name, description = dimension_text(pair_payload["dimension"], texts)
    return {"dimension": pair_payload["dimension"], "dimension_name": name, "dimension_description": description,
            "video_id": pair_payload["video_id"], "question": pair_payload["question"],
            "answer": pair_payload["answer"], "question_kind": pair_payload.get("question_kind") or ""}


def study_rows(pairs: list[Pair]) -> list[dict]:
    """The study's items: one per pair, with its video and its pool item."""
    texts = dimension_texts()
    return [{"external_id": pair.item.external_id, "payload": item_payload(pair.item.payload, texts),
             "video": pair.video, "benchmark_item": pair.item} for pair in pairs]


def description(found: Population, pairs: list[Pair], *, seed: int, size: int, share=None, k: int) -> dict:
    """What the study's history records about its sample."""
    sampled = defaultdict(int)
    for pair in pairs:
        sampled[pair.dimension] += 1
    return {"pool": str(found.version), "version_id": found.version.pk, "seed": seed, "size": size,
            "share": float(share) if share is not None else None, "population": len(found.pairs),
            "videos": len(found.videos), "excluded": len(found.excluded), "experts_per_pair": k,
            "dimensions": {name: {"population": len(members), "sampled": sampled[name]}
                           for name, members in found.dimensions.items()},
            "sampled": [pair.item.external_id for pair in pairs], "method": METHOD}


def setup(created_by, settings: dict, *, with_rows: bool = True) -> StudySetup:
    """A new expert assessment study: it requires the expert qualification unless its creator chose
    another, and, when it is given no items, assesses the default sample of the one QA pool."""
    made = {"required_qualification": expert_group.qualification()} \
        if settings.get("required_qualification") is None else {}
    if not with_rows:
        return StudySetup(settings=made)
    found = population(default_pool())
    size = min(len(found.pairs), max(len(found.videos), int(DEFAULT_SHARE * len(found.pairs) + Fraction(1, 2))))
    size = resolve_size(found, size=size)
    return StudySetup(settings=made, rows=study_rows(draw(found, size, DEFAULT_SEED)))
