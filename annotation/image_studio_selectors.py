"""Read paths of the image studio's pages and API: items with image slots, attempts and their trees."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field

from django.db.models import Count

from annotation.benchmarks import registry
from annotation.curation_models import ImageAttempt
from annotation.image_studio import ACTIVE, image_slots
from annotation.models import BenchmarkItem, BenchmarkVersion, Image, ItemMedia
from generation import model_registry
from generation.registered_models import Use


def studio_benchmark_slugs() -> list[str]:
    """The benchmarks whose items have image slots."""
    return [definition.slug for definition in registry.all() if definition.image_slots]


def studio_versions():
    """The versions of those benchmarks, drafts first, newest first."""
    return (BenchmarkVersion.objects.filter(benchmark__slug__in=studio_benchmark_slugs())
            .select_related("benchmark").order_by("frozen", "-created_at", "-pk"))


def studio_items(version: BenchmarkVersion | None = None, query: str = ""):
    """Items with image slots (of one version when given; else of every draft version), in order."""
    found = BenchmarkItem.objects.select_related("version", "version__benchmark")
    if version is not None:
        found = found.filter(version=version)
    else:
        found = found.filter(version__benchmark__slug__in=studio_benchmark_slugs(), version__frozen=False)
    if query:
        found = found.filter(external_id__icontains=query)
    return found.order_by("version_id", "external_id")


def studio_item(pk: int) -> BenchmarkItem | None:
    return BenchmarkItem.objects.select_related("version", "version__benchmark").filter(pk=pk).first()


def version(pk: int) -> BenchmarkVersion | None:
    return BenchmarkVersion.objects.select_related("benchmark").filter(pk=pk).first()


@dataclass
class SlotSummary:
    slot: str
    image: Image | None
    attempts: int
    running: int


def slot_summaries(items) -> dict[int, list[SlotSummary]]:
    """For each item: its slots with their current image and how many attempts they have (and run)."""
    items = list(items)
    ids = [item.pk for item in items]
    counts = Counter()
    running = Counter()
    for row in (ImageAttempt.objects.filter(item_id__in=ids).values("item_id", "slot", "status")
                .annotate(n=Count("pk")).order_by()):
        counts[row["item_id"], row["slot"]] += row["n"]
        if row["status"] in ACTIVE:
            running[row["item_id"], row["slot"]] += row["n"]
    images = {(used.item_id, used.role): used.image
              for used in ItemMedia.objects.filter(item_id__in=ids, image__isnull=False).select_related("image")}
    roles = defaultdict(list)
    for item_id, role in images:
        roles[item_id].append(role)
    return {item.pk: [SlotSummary(slot, images.get((item.pk, slot)), counts[item.pk, slot], running[item.pk, slot])
                      for slot in image_slots(item, roles[item.pk])] for item in items}


def item_images(item: BenchmarkItem) -> dict[str, Image]:
    """The item's images by role."""
    return {used.role: used.image for used in item.media.filter(image__isnull=False).select_related("image")}


def item_image(item: BenchmarkItem, pk: int) -> Image | None:
    """A library image the item uses, or that one of its attempts started from."""
    used = ItemMedia.objects.filter(item=item, image_id=pk).exists()
    if not used and not ImageAttempt.objects.filter(item=item, parent_image_id=pk).exists():
        return None
    return Image.objects.select_related("uploaded_by").filter(pk=pk).first()


def attempts():
    """Every attempt with who made and chose it, oldest first."""
    return ImageAttempt.objects.select_related("created_by", "chosen_by").order_by("created_at", "pk")


def attempts_of(item: BenchmarkItem):
    return attempts().filter(item=item).select_related("job", "parent", "parent_image")


def attempt(pk: int) -> ImageAttempt | None:
    return (ImageAttempt.objects.select_related("item", "item__version", "item__version__benchmark", "created_by",
                                                "chosen_by", "job", "parent", "parent_image").filter(pk=pk).first())


def finals(item: BenchmarkItem, attempts: list[ImageAttempt], images: dict[str, Image]) -> dict[str, int]:
    """Slot → the attempt last picked as its final image, for slots that still hold an image."""
    chosen: dict[str, ImageAttempt] = {}
    for found in attempts:
        if found.chosen_at and (found.slot not in chosen or found.chosen_at >= chosen[found.slot].chosen_at):
            chosen[found.slot] = found
    return {slot: found.pk for slot, found in chosen.items() if slot in images}


def shown_status(found: ImageAttempt) -> tuple[str, str]:
    """(status, error) as a person should read them: an attempt whose job ended without running it
    (cancelled, or lost) has failed."""
    job = found.job
    if found.status in ACTIVE and job is not None and job.is_finished:
        return ImageAttempt.Status.FAILED, found.error or job.message or f"Its job {job.status}."
    return found.status, found.error


@dataclass
class Node:
    attempt: ImageAttempt | None = None
    image: Image | None = None  # a library image at the root of a subtree
    roles: list[str] = field(default_factory=list)  # the roles the image holds in the item
    children: list[Node] = field(default_factory=list)
    status: str = ""
    error: str = ""
    final: bool = False

    @property
    def key(self) -> str:
        return f"attempt:{self.attempt.pk}" if self.attempt is not None else f"image:{self.image.pk}"


def attempt_tree(item: BenchmarkItem, attempts: list[ImageAttempt] | None = None) -> list[Node]:
    """The item's attempts as a forest: each under its parent attempt; those made from a library image
    under a node for that image; text-to-image attempts at the top. Oldest first at every level."""
    attempts = list(attempts_of(item)) if attempts is None else attempts
    images = item_images(item)
    final_ids = set(finals(item, attempts, images).values())
    roles_of = defaultdict(list)
    for role, image in images.items():
        roles_of[image.pk].append(role)
    nodes: dict[int, Node] = {}
    for found in attempts:
        status, error = shown_status(found)
        nodes[found.pk] = Node(attempt=found, status=status, error=error, final=found.pk in final_ids)
    roots: list[Node] = []
    image_nodes: dict[int, Node] = {}
    for found in attempts:
        node = nodes[found.pk]
        if found.parent_id is not None and found.parent_id in nodes:
            nodes[found.parent_id].children.append(node)
        elif found.parent_image_id is not None:
            holder = image_nodes.get(found.parent_image_id)
            if holder is None:
                holder = image_nodes[found.parent_image_id] = Node(image=found.parent_image,
                                                                   roles=roles_of.get(found.parent_image_id, []))
                roots.append(holder)
            holder.children.append(node)
        else:
            roots.append(node)
    return roots


def model_choices() -> dict[str, list]:
    """The models the studio offers: the registered ones for image generation and for inpainting."""
    return {"text2image": model_registry.entries(Use.IMAGE_GENERATION),
            "inpaint": model_registry.entries(Use.INPAINTING)}
