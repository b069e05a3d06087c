"""Validating an NL-EYE triplet (SPEC §3 Curation 5; paper §3 "Validation and Categorization").

A second curator judges each final image against its scene (image–text alignment, aspects
`image:premise`, `image:hypothesis1`, `image:hypothesis2`) and the triplet as a whole (`plausibility`:
is the labelled hypothesis the more plausible one?), pass or fail with a note. Verdicts are insert-only
`ItemCheck` rows; the latest per aspect counts. Each check records its `subject` (the image and scene,
or the images, scenes and label it judged): once that changes, the check no longer counts.

Nobody validates their own work: the validator of an image is not the person who picked it as the
slot's final image (`ImageAttempt.chosen_by`), and no validator is an author of the explanation
(`CurationRecord.working["explanation_authors"]`); the plausibility validator picked none of the three
images. The rule is applied when a check is recorded and again when the version is frozen.

`freeze_check` keeps a pool (a curated NL-EYE version whose triplets are under curation) from being
frozen while any of its triplets lacks its explanation and categorization, one of its three images, or a
passing, current, second-person check on every aspect; imported releases are not checked.

People's decisions (`human_decisions`, the benchmark's registry hook) are the current checks of every
version's triplets, one question per aspect: a failing one is a rejection, so a triplet a curator found
wrong is not frozen even in a version that is not a pool (an imported release, one assembled item by item).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field

from django.core.exceptions import ValidationError
from django.db import transaction

from annotation import curation_stages, decisions
from annotation.benchmarks.nleye import stages, triplets, vocabulary
from annotation.curation_models import CurationRecord, ItemCheck
from annotation.models import BenchmarkItem, BenchmarkVersion, FrozenError

PLAUSIBILITY = "plausibility"
IMAGE_PREFIX = "image:"
SLOTS = stages.SLOTS
ASPECTS = (*(IMAGE_PREFIX + slot for slot in SLOTS), PLAUSIBILITY)
VERDICTS = tuple(ItemCheck.Verdict.values)
REFUSAL_PHRASE = "is not validated"
CATEGORY_FIELDS = ("reasoning_category", "time_direction", "time_duration", "domain")
VOCABULARIES = {"reasoning_category": vocabulary.CATEGORY_VALUES, "time_direction": vocabulary.DIRECTION_VALUES,
                "time_duration": vocabulary.DURATION_VALUES, "domain": vocabulary.DOMAIN_VALUES}
FIELD_NAMES = {"reasoning_category": "reasoning category", "time_direction": "time direction",
               "time_duration": "time duration", "domain": "domain"}


class SecondPersonRule(ValidationError):
    """The validator made or explained what they were about to judge."""


class ChangedMeanwhile(ValidationError):
    """What the validator saw has changed since the page was opened."""


def aspect_name(aspect: str) -> str:
    """How messages name an aspect: "the premise image", "the plausibility"."""
    if aspect.startswith(IMAGE_PREFIX):
        slot = aspect.removeprefix(IMAGE_PREFIX)
        return f"the {triplets.SLOT_NAMES.get(slot, slot)} image"
    return "the plausibility"


def categorization_problems(payload: dict) -> list[str]:
    """What is wrong with a payload's categorization, in words (empty when it is complete and valid)."""
    problems = []
    for name in CATEGORY_FIELDS:
        value = payload.get(name)
        if value in (None, ""):
            problems.append(f"the {FIELD_NAMES[name]}")
        elif value not in VOCABULARIES[name]:
            problems.append(f"a known {FIELD_NAMES[name]} (not {value!r})")
    if (payload.get("time_direction") == vocabulary.PARALLEL
            and payload.get("time_duration") not in (None, "", vocabulary.SHORT)):
        problems.append(f"a {vocabulary.SHORT} time duration (the triplet is {vocabulary.PARALLEL})")
    return problems


def has_explanation(payload: dict) -> bool:
    value = payload.get("explanation")
    return isinstance(value, str) and bool(value.strip())


def curation_record(item) -> CurationRecord | None:
    try:
        return item.curation
    except CurationRecord.DoesNotExist:
        return None


def explanation_authors(item) -> set[int]:
    """Ids of everyone who wrote the item's explanation (`working["explanation_authors"]`, else
    `working["explained_by"]`)."""
    record = curation_record(item)
    working = record.working if record is not None and isinstance(record.working, dict) else {}
    authors = working.get("explanation_authors")
    found = set(authors) if isinstance(authors, list) else set()
    if isinstance(working.get("explained_by"), int):
        found.add(working["explained_by"])
    return {pk for pk in found if isinstance(pk, int)}


def _images(item) -> dict:
    return {link.role: link.image for link in item.media.all() if link.image_id and link.role in SLOTS}


def _chosen(item) -> dict:
    """The attempt last picked as final image, per slot (needs `triplets.triplet_items()`'s prefetch)."""
    attempts = getattr(item, "chosen_attempts", None)
    if attempts is None:
        attempts = item.image_attempts.filter(chosen_at__isnull=False).order_by("-chosen_at", "-id")
    picked = {}
    for attempt in attempts:
        picked.setdefault(attempt.slot, attempt)
    return picked


def subject(item, aspect: str, images: dict | None = None) -> dict:
    """What a check of `aspect` judges in the item's current state."""
    images = _images(item) if images is None else images
    payload = item.payload
    if aspect == PLAUSIBILITY:
        return {"images": [images[slot].pk if slot in images else None for slot in SLOTS],
                "scenes": [payload.get(slot) for slot in SLOTS], "label": payload.get("label")}
    slot = aspect.removeprefix(IMAGE_PREFIX)
    return {"image": images[slot].pk if slot in images else None, "scene": payload.get(slot)}


def fingerprint(value: dict) -> str:
    """A short digest of a subject, carried by the validation form to notice changes made meanwhile."""
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()[:16]


def makers(item, aspect: str, chosen: dict | None = None) -> dict[int, str]:
    """Who may not validate `aspect`: user id -> what they did."""
    chosen = _chosen(item) if chosen is None else chosen
    found = dict.fromkeys(explanation_authors(item), "wrote the explanation")
    slots = SLOTS if aspect == PLAUSIBILITY else (aspect.removeprefix(IMAGE_PREFIX),)
    for slot in slots:
        attempt = chosen.get(slot)
        if attempt is not None and attempt.chosen_by_id is not None:
            found.setdefault(attempt.chosen_by_id, f"made the {triplets.SLOT_NAMES[slot]} image final")
    return found


@dataclass
class AspectState:
    aspect: str
    name: str
    subject: dict
    fingerprint: str
    latest: ItemCheck | None
    history: list
    status: str  # passes, fails, missing, changed, own-work
    problem: str = ""  # what is missing, in words, when it does not pass
    makers: dict = field(default_factory=dict)

    @property
    def passes(self) -> bool:
        return self.status == "passes"


@dataclass
class TripletState:
    item: BenchmarkItem
    images: dict
    chosen: dict
    aspects: list[AspectState]
    missing: list[str]

    @property
    def external_id(self) -> str:
        return self.item.external_id

    @property
    def validated(self) -> bool:
        return not self.missing

    def aspect(self, aspect: str) -> AspectState:
        return next(state for state in self.aspects if state.aspect == aspect)


def _aspect_state(item, aspect: str, images: dict, chosen: dict, checks: list) -> AspectState:
    current = subject(item, aspect, images)
    history = [check for check in checks if check.aspect == aspect]
    latest = history[0] if history else None
    excluded = makers(item, aspect, chosen)
    name = aspect_name(aspect)
    if latest is None:
        status, problem = "missing", f"a check of {name}"
    elif latest.subject != current:
        status, problem = "changed", f"a new check of {name} (it changed since its last check)"
    elif latest.checked_by_id in excluded:
        status = "own-work"
        problem = f"a check of {name} by someone other than the person who {excluded[latest.checked_by_id]}"
    elif latest.verdict != ItemCheck.Verdict.PASS:
        status, problem = "fails", f"a passing check of {name} (the latest fails)"
    else:
        status, problem = "passes", ""
    return AspectState(aspect, name, current, fingerprint(current), latest, history, status, problem, excluded)


def triplet_state(item) -> TripletState:
    """Everything the gate asks of one triplet, and what is missing in words."""
    images, chosen = _images(item), _chosen(item)
    checks = sorted(item.checks.all(), key=lambda check: (check.checked_at, check.pk), reverse=True)
    aspects = [_aspect_state(item, aspect, images, chosen, checks) for aspect in ASPECTS]
    missing = [] if has_explanation(item.payload) else ["the explanation"]
    missing += categorization_problems(item.payload)
    missing += [f"the {triplets.SLOT_NAMES[slot]} image" for slot in SLOTS if slot not in images]
    missing += [state.problem for state in aspects if not state.passes]
    return TripletState(item, images, chosen, aspects, missing)


def version_states(version) -> list[TripletState]:
    """The state of every triplet of a version, by external id."""
    return [triplet_state(item) for item in triplets.version_triplet_items(version)]


def is_gated(version) -> bool:
    """A pool waits for validation: a curated NL-EYE version with triplets under curation (a curation
    record). Imported releases are frozen as released, and so are versions put together outside the
    curation pipeline (the demo's, one assembled item by item through the API)."""
    return (version.benchmark.slug == triplets.SLUG and version.source == BenchmarkVersion.Source.CURATION
            and CurationRecord.objects.filter(item__version=version).exists())


def freeze_check(version) -> list[tuple[str, str]]:
    """(external id, what is missing) for every triplet of a curated NL-EYE version that is not validated."""
    if not is_gated(version):
        return []
    return [(state.external_id, "missing " + "; ".join(state.missing))
            for state in version_states(version) if state.missing]


def human_decisions(version) -> list[decisions.Decision]:
    """Every current check of the version's triplets (a check of what has changed since does not count), one
    question per aspect: a pass accepts the aspect, a failure rejects the triplet."""
    found = []
    for item in triplets.version_triplet_items(version):
        images = _images(item)
        for check in reversed(list(item.checks.all())):  # oldest first: a later check wins a tie in time
            if check.aspect in ASPECTS and check.subject == subject(item, check.aspect, images):
                step = f"the validation of {aspect_name(check.aspect)}"
                found.append(decisions.from_check(check, check.aspect, step))
    return found


def refresh_stage(record: CurationRecord, state: TripletState, *, by=None) -> None:
    """A complete triplet is at stage `validated`; one that was and no longer is goes back to `explained`."""
    if state.validated:
        curation_stages.move(record, stages.VALIDATED, by=by, reason="every aspect passes its checks")
    elif record.stage == stages.VALIDATED:
        curation_stages.move(record, stages.EXPLAINED, by=by, reason="an aspect no longer passes its checks")


def _clean(verdicts: dict) -> dict[str, tuple[str, str]]:
    """{aspect: (verdict, note)} with notes stripped; errors by aspect."""
    cleaned, errors = {}, {}
    for aspect, (verdict, note) in verdicts.items():
        note = (note or "").strip()
        if aspect not in ASPECTS:
            errors[aspect] = f"Unknown aspect {aspect!r}: one of {', '.join(ASPECTS)}."
        elif verdict not in VERDICTS:
            errors[aspect] = f"The verdict on {aspect_name(aspect)} must be pass or fail (got {verdict!r})."
        elif verdict == ItemCheck.Verdict.FAIL and not note:
            errors[aspect] = f"Say in the note what is wrong with {aspect_name(aspect)}."
        else:
            cleaned[aspect] = (verdict, note)
    if errors:
        raise ValidationError(errors)
    if not cleaned:
        raise ValidationError("Give a verdict (pass or fail) on at least one aspect.")
    return cleaned


def _not_ready(state: TripletState, aspect: str) -> str:
    if aspect == PLAUSIBILITY:
        lacking = [f"the {triplets.SLOT_NAMES[slot]} image" for slot in SLOTS if slot not in state.images]
        if not has_explanation(state.item.payload):
            lacking.append("the explanation")
        return f"The plausibility cannot be judged yet: the triplet lacks {', '.join(lacking)}." if lacking else ""
    slot = aspect.removeprefix(IMAGE_PREFIX)
    return "" if slot in state.images else f"{aspect_name(aspect).capitalize()} cannot be judged: it has no image yet."


def record_checks(item_id: int, user, verdicts: dict, seen: dict | None = None) -> list[ItemCheck]:
    """Record `user`'s verdicts ({aspect: (verdict, note)}) on a triplet, all or none.

    `seen` ({aspect: fingerprint}, as the page showed it) refuses verdicts on what has changed since.
    Raises ValidationError (bad input, nothing to judge yet), SecondPersonRule (the user made or explained
    what they judge), ChangedMeanwhile and FrozenError."""
    cleaned = _clean(verdicts)
    with transaction.atomic():
        locked = BenchmarkItem.objects.select_for_update().get(pk=item_id)
        if locked.version.frozen:
            raise FrozenError(f"Version {locked.version} is frozen: its triplets can no longer be validated.")
        item = triplets.triplet_items().get(pk=locked.pk)
        state = triplet_state(item)
        problems = [message for aspect in cleaned if (message := _not_ready(state, aspect))]
        if problems:
            raise ValidationError(problems)
        own = [f"You {state.aspect(aspect).makers[user.pk]}, so {aspect_name(aspect)} needs another curator's check."
               for aspect in cleaned if user.pk in state.aspect(aspect).makers]
        if own:
            raise SecondPersonRule(own)
        changed = [f"{aspect_name(aspect).capitalize()} changed since you opened the page: look at it again."
                   for aspect in cleaned if seen and seen.get(aspect) not in (None, "")
                   and seen[aspect] != state.aspect(aspect).fingerprint]
        if changed:
            raise ChangedMeanwhile(changed)
        made = [ItemCheck.objects.create(item=item, aspect=aspect, verdict=verdict, note=note, checked_by=user,
                                         subject=state.aspect(aspect).subject)
                for aspect, (verdict, note) in cleaned.items()]
        record = CurationRecord.objects.filter(item=item).first() or curation_stages.start(
            item=item, stage=stages.EXPLAINED, by=user)
        refresh_stage(record, triplet_state(triplets.triplet_items().get(pk=item.pk)), by=user)
    return made
