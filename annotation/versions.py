"""Creating, filling and freezing benchmark versions."""

import hashlib
import json

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from annotation.models import BenchmarkItem, BenchmarkVersion, FrozenError, ItemMedia
from annotation.payloads import validate_payload


def add_item(version: BenchmarkVersion, external_id: str, payload: dict, media: dict | None = None) -> BenchmarkItem:
    """Add one validated item with its media ({role: Video or Image})."""
    if version.frozen:
        raise FrozenError(f"Version {version} is frozen: add items to a new version.")
    validate_payload(version.benchmark.slug, payload)
    with transaction.atomic():
        item = BenchmarkItem.objects.create(version=version, external_id=external_id, payload=payload)
        for role, asset in (media or {}).items():
            kind = asset.__class__.__name__.lower()
            if kind not in ("video", "image"):
                raise ValidationError(f"Media for role {role!r} must be a Video or an Image.")
            ItemMedia.objects.create(item=item, role=role, **{kind: asset})
    return item


def content_checksum(version: BenchmarkVersion) -> str:
    """SHA-256 over every item's id, payload and media (by file checksum), in id order."""
    digest = hashlib.sha256()
    items = version.items.order_by("external_id").prefetch_related("media__video", "media__image")
    for item in items.iterator(chunk_size=500):
        media = sorted((m.role, m.asset.checksum) for m in item.media.all())
        record = [item.external_id, item.payload, media]
        digest.update(json.dumps(record, sort_keys=True, separators=(",", ":")).encode())
        digest.update(b"\n")
    return digest.hexdigest()


def freeze(version: BenchmarkVersion) -> BenchmarkVersion:
    """Validate every item and make the version immutable."""
    with transaction.atomic():
        version = BenchmarkVersion.objects.select_for_update().get(pk=version.pk)
        if version.frozen:
            raise FrozenError(f"Version {version} is already frozen.")
        problems = []
        for item in version.items.iterator(chunk_size=500):
            try:
                validate_payload(version.benchmark.slug, item.payload)
            except ValidationError as exc:
                problems.extend(f"{item.external_id}: {m}" for m in exc.messages)
        count = version.items.count()
        if count == 0:
            problems.append("a version needs at least one item")
        if problems:
            raise ValidationError(problems)
        version.item_count = count
        version.checksum = content_checksum(version)
        version.frozen = True
        version.frozen_at = timezone.now()
        version.save()
    return version
