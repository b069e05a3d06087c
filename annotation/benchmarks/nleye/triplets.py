"""Read paths of the NL-EYE curation console: the triplets under curation (items of NL-EYE versions with a
`CurationRecord`), per pool version and stage, and one triplet's state through the pipeline.

A triplet's progress is read from what the pipeline wrote, not only from its stage: its scenes (the
record exists once they were accepted), its approved prompts and their provenance
(`working["prompts"]`, `working["prompts_provenance"]`, see `prompts`), the image a designer chose
for each slot (the latest chosen `ImageAttempt` of the slot; else an image the item already links
under the slot's role), its explanation (the payload's `explanation`), its latest check per aspect
(`ItemCheck`) and whether it was validated (stage `validated`).

The explanation and validation pages read whole items instead (`triplet_items`: an NL-EYE triplet item
with its version, curation record, media, checks and chosen attempts prefetched), so that an item added
to a pool outside the pipeline (no curation record yet) can be explained and validated too.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.contrib.auth import get_user_model
from django.db.models import Count, Prefetch

from annotation.benchmarks.nleye import prompts, stages
from annotation.curation_models import CurationRecord, ImageAttempt, ItemCheck
from annotation.models import BenchmarkItem, BenchmarkVersion
from generation.models import Proposal

SLUG = prompts.SLUG
KIND = "triplet"
SLOT_NAMES = {"premise": "premise", "hypothesis1": "hypothesis 1", "hypothesis2": "hypothesis 2"}


@dataclass
class Slot:
    """One of the triplet's three images."""

    name: str
    scene: str
    prompt: str
    attempt: ImageAttempt | None = None  # the chosen attempt
    image: object | None = None  # the library image the item links under this role

    @property
    def chosen(self) -> bool:
        return self.attempt is not None or self.image is not None


@dataclass
class Triplet:
    record: CurationRecord
    slots: list[Slot]
    checks: list[ItemCheck] = field(default_factory=list)

    @property
    def item(self):
        return self.record.item

    @property
    def stage_label(self) -> str:
        return stages.label(self.record.stage)

    @property
    def working(self) -> dict:
        return self.record.working or {}

    @property
    def prompts(self) -> dict:
        return self.working.get("prompts") or {}

    @property
    def provenance(self) -> dict:
        return self.working.get("prompts_provenance") or {}

    @property
    def looks(self) -> dict:
        return self.working.get("prompt_looks") or {}

    @property
    def explanation(self) -> str:
        return str((self.item.payload or {}).get("explanation") or "")

    @property
    def validated(self) -> bool:
        return self.record.stage == stages.VALIDATED

    @property
    def images_chosen(self) -> int:
        return sum(slot.chosen for slot in self.slots)


def pool_versions():
    """The NL-EYE versions that hold triplets under curation, with how many (`triplets`), newest first."""
    return (BenchmarkVersion.objects.filter(benchmark__slug=SLUG, items__curation__isnull=False)
            .annotate(triplets=Count("items__curation")).order_by("-created_at", "-pk"))


def triplet_records(*, version: int | None = None, stage: str = ""):
    """The curation records of NL-EYE items, by version and item, narrowed to a version and a stage."""
    found = (CurationRecord.objects.filter(item__version__benchmark__slug=SLUG)
             .select_related("item__version", "author").order_by("item__version_id", "item_id"))
    if version is not None:
        found = found.filter(item__version_id=version)
    if stage:
        found = found.filter(stage=stage)
    return found


def stage_counts(version: int | None = None) -> dict[str, int]:
    """{stage: number of triplets} (of one version when given)."""
    rows = triplet_records(version=version).order_by().values_list("stage").annotate(n=Count("pk"))
    return dict(rows)


def _chosen_attempts(item_ids) -> dict[tuple[int, str], ImageAttempt]:
    chosen = {}
    for attempt in (ImageAttempt.objects.filter(item_id__in=item_ids, chosen_at__isnull=False)
                    .order_by("item_id", "slot", "-chosen_at", "-pk")):
        chosen.setdefault((attempt.item_id, attempt.slot), attempt)
    return chosen


def _latest_checks(item_ids) -> dict[int, list[ItemCheck]]:
    latest: dict[int, dict[str, ItemCheck]] = {}
    for check in ItemCheck.objects.filter(item_id__in=item_ids).select_related("checked_by"):
        latest.setdefault(check.item_id, {}).setdefault(check.aspect, check)  # ordered newest first per aspect
    return {item_id: list(by_aspect.values()) for item_id, by_aspect in latest.items()}


def triplets(records) -> list[Triplet]:
    """Each record's triplet with its chosen images and latest checks (a few queries for all of them)."""
    records = list(records)
    ids = [record.item_id for record in records]
    chosen = _chosen_attempts(ids)
    checks = _latest_checks(ids)
    linked = {}
    for record in records:
        for link in record.item.media.all():
            if link.image_id is not None:
                linked[(record.item_id, link.role)] = link.image
    found = []
    for record in records:
        scenes = prompts.scenes_of(record)
        approved = (record.working or {}).get("prompts") or {}
        slots = [Slot(name, scenes[name], str(approved.get(name) or ""), chosen.get((record.item_id, name)),
                      linked.get((record.item_id, name))) for name in stages.SLOTS]
        found.append(Triplet(record, slots, checks.get(record.item_id, [])))
    return found


def listed(*, version: int | None = None, stage: str = "") -> list[Triplet]:
    """The console's list: the triplets of a version (or all) at a stage (or any)."""
    return triplets(triplet_records(version=version, stage=stage).prefetch_related("item__media__image"))


def triplet(item_id: int) -> Triplet:
    """One triplet under curation (CurationRecord.DoesNotExist if the item is none)."""
    record = triplet_records().prefetch_related("item__media__image").get(item_id=item_id)
    return triplets([record])[0]


def prompt_proposals(item_id: int):
    """The prompt proposals made for a triplet, newest first, with their set."""
    return (Proposal.objects.filter(task_kind=prompts.KIND, source_key=prompts.source_key(item_id))
            .select_related("proposal_set").order_by("-created_at", "-pk"))


def nleye_versions():
    """Every NL-EYE version with its benchmark."""
    return BenchmarkVersion.objects.filter(benchmark__slug=SLUG).select_related("benchmark")


def triplet_items():
    """NL-EYE triplet items with what the explanation and validation pages read: version, curation record,
    media, checks (newest first) and the attempts picked as final images (latest pick first, as
    `chosen_attempts`)."""
    chosen = ImageAttempt.objects.filter(chosen_at__isnull=False).select_related("chosen_by").order_by(
        "-chosen_at", "-id")
    return (BenchmarkItem.objects.filter(version__benchmark__slug=SLUG, payload__kind=KIND)
            .select_related("version__benchmark", "curation")
            .prefetch_related("media__image",
                              Prefetch("checks", queryset=ItemCheck.objects.select_related("checked_by")
                                       .order_by("-checked_at", "-id")),
                              Prefetch("image_attempts", queryset=chosen, to_attr="chosen_attempts")))


def version_triplet_items(version):
    """The triplet items of one version, by external id."""
    return triplet_items().filter(version=version).order_by("external_id")


def users_by_id(ids) -> dict:
    """The users with these ids, by id (for names shown beside recorded ids)."""
    ids = {pk for pk in ids if isinstance(pk, int)}
    return {user.pk: user for user in get_user_model().objects.filter(pk__in=ids)} if ids else {}
