"""Videos assigned to CVRR-ES dimensions (seeds/003 §3.2 Stage 1; SPEC §4 "Curation" 1).

A curator picks a ready video of the media library, a dimension, the dataset the video came from
(`payload.VIDEO_SOURCES`) and the metadata that came with it (the source dataset's captions, labels,
…). `assign_video` adds a `video` item to the video pool version (`pools.video_pool_version`):
external id `<dimension>/<video id>`, payload `{kind: "video", dimension, video_id, source, metadata}`,
the video under role `video`, and a `CurationRecord` at stage `stages.VIDEO_ASSIGNED` saying who
assigned it and when. A video is assigned to a dimension once (a second time is refused, 400); the
same video may serve several dimensions, under one video id.

Metadata is a JSON object or `key: value` lines (`parse_metadata`), at most `MAX_METADATA_BYTES`
once written as JSON, `MAX_METADATA_KEYS` keys and `MAX_METADATA_DEPTH` levels deep.
"""

from __future__ import annotations

import json
import re
from pathlib import PurePosixPath

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.text import slugify

from annotation import curation_stages
from annotation.benchmarks.cvrr import stages
from annotation.benchmarks.cvrr.dimensions import DIMENSIONS
from annotation.benchmarks.cvrr.payload import VIDEO_SOURCES
from annotation.benchmarks.cvrr.pools import CurationError, find_video_pool, video_pool_version
from annotation.models import BenchmarkItem, BenchmarkVersion, FrozenError, ItemMedia, MediaAsset, Video
from annotation.versions import add_item
from config import json_text
from config.roles import ADMIN, CURATOR, has_role

ROLE = "video"
SOURCE_LABELS = {
    "ssv2": "Something-Something-v2", "cater": "CATER", "charades": "Charades", "activitynet": "ActivityNet",
    "hmdb51": "HMDB51", "yfcc100m": "YFCC100M", "internet": "Internet", "other": "Other",
}
MAX_METADATA_BYTES = 8_000
MAX_METADATA_KEYS = 50
MAX_METADATA_DEPTH = 4
MAX_KEY_LENGTH = 100
MAX_VIDEO_ID = 64
_KEY_VALUE = re.compile(r"^\s*([^:=]+?)\s*[:=]\s*(.*?)\s*$")


def _depth(value, level: int = 1) -> int:
    if isinstance(value, dict):
        return max([level, *(_depth(v, level + 1) for v in value.values())])
    if isinstance(value, list):
        return max([level, *(_depth(v, level + 1) for v in value)])
    return level - 1


def check_metadata(metadata: dict) -> dict:
    """The metadata object itself when it is within the limits; CurationError 400 otherwise."""
    if not isinstance(metadata, dict):
        raise CurationError("Metadata must be a JSON object (or key: value lines).")
    if len(metadata) > MAX_METADATA_KEYS:
        raise CurationError(f"Metadata has {len(metadata)} keys; at most {MAX_METADATA_KEYS} are kept.")
    bad_keys = [str(key) for key in metadata
                if not isinstance(key, str) or not key.strip() or len(key) > MAX_KEY_LENGTH]
    if bad_keys:
        raise CurationError(f"Metadata keys must be texts of 1 to {MAX_KEY_LENGTH} characters: {bad_keys[0][:40]!r}.")
    if _depth(metadata) > MAX_METADATA_DEPTH:
        raise CurationError(f"Metadata is nested more than {MAX_METADATA_DEPTH} levels deep.")
    size = len(json.dumps(metadata, ensure_ascii=False).encode())
    if size > MAX_METADATA_BYTES:
        raise CurationError(f"Metadata takes {size} bytes; at most {MAX_METADATA_BYTES} are kept.")
    return metadata


def parse_metadata(text) -> dict | None:
    """The metadata as an object: a JSON object, or one `key: value` (or `key = value`) per line; None for
    no metadata. CurationError 400, naming the line or the limit, for anything else."""
    if isinstance(text, dict):
        return check_metadata(text) or None
    text = (text or "").strip()
    if not text:
        return None
    if len(text.encode()) > 4 * MAX_METADATA_BYTES:
        raise CurationError(f"Metadata is longer than {MAX_METADATA_BYTES} bytes.")
    if text.startswith(("{", "[")):
        try:
            value = json_text.loads(text)
        except json.JSONDecodeError as exc:
            raise CurationError(f"Metadata is not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno}).") \
                from None
        return check_metadata(value) or None
    metadata = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        match = _KEY_VALUE.match(line)
        if match is None or not match.group(1).strip():
            raise CurationError(f"Metadata line {number} is not 'key: value': {line.strip()[:60]!r}.")
        key, value = match.group(1).strip(), match.group(2)
        if key in metadata:
            raise CurationError(f"Metadata line {number} repeats the key {key!r}.")
        metadata[key] = value
    return check_metadata(metadata)


def _video_id(version: BenchmarkVersion, video: Video) -> str:
    """The video's id in the pool: the one it already has there, else its file name's stem (with the
    library's number when another video of the pool has that stem)."""
    uses = ItemMedia.objects.filter(item__version=version, role=ROLE).select_related("item")
    for use in uses.filter(video=video):
        return use.item.payload["video_id"]
    stem = slugify(PurePosixPath(video.original_name or video.title or "").stem)[:MAX_VIDEO_ID - 12] or "video"
    taken = {use.item.payload.get("video_id") for use in uses.exclude(video=video)}
    return stem if stem not in taken else f"{stem}-{video.pk}"


def _ready_video(video) -> Video:
    found = video if isinstance(video, Video) else (
        Video.objects.filter(pk=int(video)).first() if str(video).strip().isdigit() else None)
    if found is None:
        raise CurationError(f"There is no video #{video} in the media library.", status=400)
    if found.status != MediaAsset.Status.READY:
        raise CurationError(f"Video #{found.pk} is still being probed: assign it once it is ready.", status=400)
    return found


def assign_video(user, video, dimension: str, source: str, metadata=None) -> BenchmarkItem:
    """Add library video `video` (a Video or its id) to the video pool in `dimension` with its `source` and
    `metadata` (an object or the text `parse_metadata` reads). 403 for a user who is no curator, 400 for
    an unknown dimension or source, a video not ready, bad metadata or a video already in the dimension,
    409 when the pool is frozen; nothing is written then."""
    if not has_role(user, CURATOR, ADMIN):
        raise CurationError("Only curators assign videos to dimensions.", status=403)
    if dimension not in DIMENSIONS:
        raise CurationError(f"Choose one of the CVRR-ES dimensions, not {str(dimension)[:80]!r}.")
    if source not in VIDEO_SOURCES:
        raise CurationError(f"Choose where the video comes from: one of {', '.join(VIDEO_SOURCES)}.")
    video = _ready_video(video)
    metadata = parse_metadata(metadata)
    with transaction.atomic():
        version = BenchmarkVersion.objects.select_for_update().get(pk=video_pool_version(user).pk)
        if ItemMedia.objects.filter(item__version=version, role=ROLE, video=video,
                                    item__external_id__startswith=f"{dimension}/").exists():
            raise CurationError(f"Video #{video.pk} ({video.title}) is already assigned to “{DIMENSIONS[dimension]}”.")
        video_id = _video_id(version, video)
        payload = {"kind": "video", "dimension": dimension, "video_id": video_id, "source": source}
        if metadata:
            payload["metadata"] = metadata
        try:
            with transaction.atomic():
                item = add_item(version, f"{dimension}/{video_id}", payload, {ROLE: video})
        except FrozenError as exc:
            raise CurationError(" ".join(exc.messages), status=409) from None
        except ValidationError as exc:
            raise CurationError("The video does not fit CVRR-ES's items: " + "; ".join(exc.messages)) from None
        except IntegrityError:
            raise CurationError(f"The video pool already holds {dimension}/{video_id}.") from None
        curation_stages.start(item=item, stage=stages.VIDEO_ASSIGNED, author=user, by=user, working={
            "assigned": {"by": user.get_username(), "at": timezone.now().isoformat(), "library_video": video.pk}})
    return item


def pool_items(dimension: str = ""):
    """The video items of the video pool (none before it exists), by dimension then video id, with their
    curation record and video."""
    version = find_video_pool()
    if version is None:
        return BenchmarkItem.objects.none()
    items = (BenchmarkItem.objects.filter(version=version, payload__kind="video")
             .select_related("version", "curation", "curation__author").prefetch_related("media__video")
             .order_by("external_id"))
    if dimension:
        items = items.filter(external_id__startswith=f"{dimension}/")
    return items


def pool_item(item_id) -> BenchmarkItem:
    """One video item of the video pool; CurationError 404 for anything else."""
    found = pool_items().filter(pk=item_id).first() if str(item_id).isdigit() else None
    if found is None:
        raise CurationError(f"Item #{item_id} is not a CVRR-ES video under curation.", status=404)
    return found


def video_of(item: BenchmarkItem) -> Video | None:
    return next((use.video for use in item.media.all() if use.role == ROLE and use.video_id), None)


def row(item: BenchmarkItem, names: dict | None = None) -> dict:
    """What the pages show of a video item."""
    payload = item.payload or {}
    record = getattr(item, "curation", None)
    names = names or DIMENSIONS
    return {"item": item, "video": video_of(item), "dimension": payload.get("dimension", ""),
            "dimension_name": names.get(payload.get("dimension", ""), payload.get("dimension", "")),
            "source": SOURCE_LABELS.get(payload.get("source"), payload.get("source", "")),
            "metadata": payload.get("metadata") or {}, "caption": payload.get("caption") or "",
            "stage": record.stage if record else "", "stage_label": stages.LABELS.get(record.stage, record.stage)
            if record else "", "record": record}
