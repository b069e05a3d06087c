"""Curating the media library: rename, tag, and delete media nothing uses.

A video or image is *used* when a benchmark item, a crowd study item, a video split (as its source or
one of its parts) or a model proposal (whose inputs name the file or its checksum) refers to it.
Deleting a used one is refused with a message that names what uses it; deleting an unused one
removes its row, its tags and its stored files (the file and its poster or thumbnail).
"""

import re

from django.db import transaction
from django.db.models import ProtectedError, Q, TextField
from django.db.models.functions import Cast

from annotation.benchmarks import registry
from annotation.crowd.models import StudyItem
from annotation.media import discard
from annotation.models import Image, ItemMedia, MediaTag, Video, VideoSplit
from generation.models import Proposal

KINDS = {"videos": Video, "images": Image}
MAX_TAGS = 12
MAX_TAG_LENGTH = MediaTag._meta.get_field("name").max_length
MAX_TITLE_LENGTH = Video._meta.get_field("title").max_length
TAG_PATTERN = re.compile(r"^[\w][\w .\-]*$")
USES_NAMED = 5  # uses named in a refusal; the rest are counted
SPLIT_PARTS = ("video", "pre_video", "main_video", "post_video", "detective_video", "full_video")


class LibraryError(Exception):
    """A change the library refuses; `status` is the HTTP status that describes it best."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.message = message
        self.status = status


def model_for(kind: str):
    """The model of a library kind ('videos' or 'images'); LibraryError 404 for anything else."""
    try:
        return KINDS[kind]
    except KeyError:
        raise LibraryError(f"There is no media kind '{kind}'.", status=404) from None


def rename(asset, title: str):
    """Give the asset a new title (1 to 255 characters, surrounding spaces dropped)."""
    title = (title or "").strip()
    if not title:
        raise LibraryError("A title cannot be empty.")
    if len(title) > MAX_TITLE_LENGTH:
        raise LibraryError(f"A title has at most {MAX_TITLE_LENGTH} characters; this one has {len(title)}.")
    asset.title = title
    asset.save(update_fields=["title"])
    return asset


def parse_tags(text: str) -> list[str]:
    """Tags from a comma-separated text: lower-cased, inner spaces collapsed, duplicates dropped."""
    tags = []
    for raw in (text or "").split(","):
        tag = " ".join(raw.split()).lower()
        if not tag or tag in tags:
            continue
        if len(tag) > MAX_TAG_LENGTH:
            raise LibraryError(f"The tag '{tag[:20]}…' is longer than {MAX_TAG_LENGTH} characters.")
        if not TAG_PATTERN.match(tag):
            raise LibraryError(f"The tag '{tag}' may hold only letters, digits, spaces, '.', '-' and '_'.")
        tags.append(tag)
    if len(tags) > MAX_TAGS:
        raise LibraryError(f"An item has at most {MAX_TAGS} tags; {len(tags)} were given.")
    return tags


def set_tags(asset, text: str) -> list[str]:
    """Replace the asset's tags with those in `text` (comma-separated); tags no medium uses any longer
    are removed. Nothing changes when a tag is refused."""
    names = parse_tags(text)
    with transaction.atomic():
        tags = [MediaTag.objects.get_or_create(name=name)[0] for name in names]
        asset.tags.set(tags)
        _drop_unused_tags()
    return names


def _drop_unused_tags() -> None:
    MediaTag.objects.filter(videos__isnull=True, images__isnull=True).delete()


def uses(asset) -> list[str]:
    """What refers to the asset, one readable line per kind of use (empty when nothing does)."""
    field = "video" if isinstance(asset, Video) else "image"
    found = []
    items = ItemMedia.objects.filter(**{field: asset}).select_related("item__version__benchmark")
    found += _named("benchmark item", [f"{m.item.version.benchmark.slug} {m.item.version.label} / "
                                       f"{m.item.external_id}" for m in items[:USES_NAMED]], items.count())
    study_items = StudyItem.objects.filter(**{field: asset}).select_related("study")
    found += _named("study item", [f"{i.study.name} / {i.external_id}" for i in study_items[:USES_NAMED]],
                    study_items.count())
    if field == "video":
        splits = VideoSplit.objects.filter(_any_of(SPLIT_PARTS, asset)).select_related("video").distinct()
        found += _named("video split", [f"#{s.pk} of “{s.video.title}”" for s in splits[:USES_NAMED]],
                        splits.count())
    proposals = (Proposal.objects.annotate(inputs_text=Cast("inputs", TextField()))
                 .filter(inputs_text__contains=asset.checksum).select_related("proposal_set"))
    found += _named("proposal", [f"#{p.pk} in “{p.proposal_set}”" for p in proposals[:USES_NAMED]],
                    proposals.count())
    return found


def _any_of(fields, asset) -> Q:
    query = Q()
    for name in fields:
        query |= Q(**{name: asset})
    return query


def _named(what: str, names: list[str], count: int) -> list[str]:
    if not count:
        return []
    more = f" and {count - len(names)} more" if count > len(names) else ""
    return [f"{count} {what}{'s' if count != 1 else ''}: {', '.join(names)}{more}"]


def refusal(asset) -> str:
    """Why the asset cannot be deleted; empty when it can."""
    found = uses(asset)
    if not found:
        return ""
    return f"“{asset.title}” is in use and cannot be deleted. Used by " + "; ".join(found) + "."


def delete_unused(asset) -> None:
    """Delete an asset nothing uses, with its stored files; LibraryError 409 naming the uses otherwise."""
    reason = refusal(asset)
    if reason:
        raise LibraryError(reason, status=409)
    try:
        discard(asset)
        _drop_unused_tags()
    except ProtectedError:  # something started using it between the check and the delete
        raise LibraryError(refusal(asset) or f"“{asset.title}” is in use and cannot be deleted.",
                           status=409) from None


def video_links(video) -> list[tuple[str, str]]:
    """(label, URL) of the benchmarks' curation pages a ready library video's page links to for curators
    (`BenchmarkDefinition.video_links`)."""
    if video.status != Video.Status.READY:
        return []
    return [link for definition in registry.all() for link in definition.video_links(video)]
