"""Creating, filling and freezing benchmark versions.

Freezing validates every payload and then runs the registered freeze checks: functions
`check(version) -> [(external id, reason), …]` that other apps (or a benchmark's own package) register at
start-up with `register_freeze_check`, each with the phrase its refusals use ("cannot be evaluated",
"is not validated"). The evaluation app registers one that builds every item's evaluation
requests, so a version that cannot produce its requests is never frozen (the annotation layer does not
import the evaluation layer: it only calls what was registered). A refusal is a `FreezeRefused`
naming the items and the reasons, the same in the import command, the API and the admin.
"""

import hashlib
import json
from collections.abc import Callable

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from annotation.models import BenchmarkItem, BenchmarkVersion, FrozenError, ItemMedia
from annotation.payloads import validate_payload

FreezeCheck = Callable[[BenchmarkVersion], list[tuple[str, str]]]
_freeze_checks: list[FreezeCheck] = []
_phrases: dict[FreezeCheck, str] = {}
DEFAULT_PHRASE = "cannot be evaluated"
SHOWN_ITEMS = 20  # items a refusal names one by one; the rest are counted


class FreezeRefused(ValidationError):
    """Freezing was refused because of the items in `items`: (external id, reason) pairs."""

    def __init__(self, messages: list[str], items: list[tuple[str, str]] | None = None):
        super().__init__(messages)
        self.items = list(items or [])


def register_freeze_check(check: FreezeCheck, phrase: str = DEFAULT_PHRASE) -> None:
    """Run `check` on every version about to be frozen (once, however often it is registered); a refused
    item is named as "item 'x' <phrase>: <reason>"."""
    if check not in _freeze_checks:
        _freeze_checks.append(check)
    _phrases[check] = phrase


def _refused(version: BenchmarkVersion) -> list[tuple[str, str, str]]:
    """(external id, phrase, reason) for every item a registered freeze check refuses."""
    return [(external_id, _phrases.get(check, DEFAULT_PHRASE), reason)
            for check in _freeze_checks for external_id, reason in check(version)]


def item_problems(version: BenchmarkVersion) -> list[tuple[str, str]]:
    """(external id, reason) for every item a registered freeze check refuses."""
    return [(external_id, reason) for external_id, _phrase, reason in _refused(version)]


def _refusal(refused: list[tuple[str, str, str]]) -> FreezeRefused:
    messages = [f"item {external_id!r} {phrase}: {reason}" for external_id, phrase, reason in refused[:SHOWN_ITEMS]]
    rest = refused[SHOWN_ITEMS:]
    if rest:
        phrases = {phrase for _external_id, phrase, _reason in rest}
        phrase = phrases.pop() if len(phrases) == 1 else "cannot be frozen"
        messages.append(f"… and {len(rest)} more item(s) that {phrase}")
    return FreezeRefused(messages, [(external_id, reason) for external_id, _phrase, reason in refused])


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
    """Validate every item, run the freeze checks and make the version immutable."""
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
        refused = _refused(version)
        if refused:
            raise _refusal(refused)
        version.item_count = count
        version.checksum = content_checksum(version)
        version.frozen = True
        version.frozen_at = timezone.now()
        version.save()
    return version
