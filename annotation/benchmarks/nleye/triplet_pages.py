"""What the NL-EYE explanation, validation and validation-state pages show, and how the validation form's
fields are read: a triplet's three slots (image, scene, the prompt and designer of the final image, the
latest check and its history), its label, explanation and categorization, and who wrote them."""

from __future__ import annotations

from datetime import datetime

from annotation.benchmarks.nleye import triplets, validation, vocabulary
from annotation.crowd import review_media
from annotation.curation_models import ItemCheck


def _prompts(item) -> dict:
    """The augmented prompts the curation record holds per slot (`working["prompts"][slot]`), if any."""
    record = validation.curation_record(item)
    prompts = record.working.get("prompts") if record is not None and isinstance(record.working, dict) else None
    return prompts if isinstance(prompts, dict) else {}


def _moment(value) -> datetime | None:
    try:
        return datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        return None


LABELS = {name: dict(pairs) for name, _heading, pairs in vocabulary.DIMENSIONS}


def _label(name: str, value) -> str:
    return LABELS.get(name, {}).get(value, value) if isinstance(value, str) and value else "—"


def triplet_view(state: validation.TripletState, user=None, posted=None) -> dict:
    """A triplet as the pages show it; with `user`, which aspects they may not judge and why; with `posted`
    (a refused validation form), the verdicts and notes as they were given."""
    item = state.item
    payload = item.payload
    prompts = _prompts(item)
    people = triplets.users_by_id(validation.explanation_authors(item))
    record = validation.curation_record(item)
    working = record.working if record is not None and isinstance(record.working, dict) else {}
    slots = []
    for slot in validation.SLOTS:
        image = state.images.get(slot)
        attempt = state.chosen.get(slot)
        aspect = state.aspect(validation.IMAGE_PREFIX + slot)
        slots.append({
            "slot": slot, "name": triplets.SLOT_NAMES[slot], "scene": payload.get(slot, ""),
            "plausible": slot != "premise" and payload.get("label") == int(slot[-1]),
            "image": review_media.image_entry(image, triplets.SLOT_NAMES[slot]) if image else None,
            "prompt": prompts.get(slot) if isinstance(prompts.get(slot), str) else "",
            "attempt": attempt, "aspect": aspect_view(aspect, user, posted),
        })
    explained_by = people.get(working.get("explained_by"))
    return {
        "item": item, "version": item.version, "slots": slots, "label": payload.get("label"),
        "explanation": payload.get("explanation", ""),
        "categories": [(validation.FIELD_NAMES[name].capitalize(), _label(name, payload.get(name)))
                       for name in validation.CATEGORY_FIELDS],
        "explained_by": explained_by, "explained_at": _moment(working.get("explained_at")),
        "explanation_authors": [people[pk] for pk in sorted(people)],
        "plausibility": aspect_view(state.aspect(validation.PLAUSIBILITY), user, posted),
        "state": state, "missing": state.missing,
    }


def state_row(state: validation.TripletState) -> dict:
    """One row of a version's validation state: the triplet, each aspect's status and what is missing."""
    return {"item": state.item, "explained": validation.has_explanation(state.item.payload),
            "images": [slot for slot in validation.SLOTS if slot in state.images],
            "aspects": [aspect_view(aspect) for aspect in state.aspects], "missing": state.missing,
            "validated": state.validated}


def aspect_view(aspect: validation.AspectState, user=None, posted=None) -> dict:
    posted = posted or {}
    refusal = ""
    if user is not None and user.pk in aspect.makers:
        refusal = f"You {aspect.makers[user.pk]}: {aspect.name} needs another curator's check."
    return {"aspect": aspect.aspect, "name": aspect.name, "status": aspect.status, "problem": aspect.problem,
            "latest": aspect.latest, "history": aspect.history, "fingerprint": aspect.fingerprint,
            "refusal": refusal, "posted_verdict": posted.get(f"verdict-{aspect.aspect}", ""),
            "posted_note": posted.get(f"note-{aspect.aspect}", "")}


def verdicts_from_form(data) -> tuple[dict, dict]:
    """({aspect: (verdict, note)} for the aspects given a verdict, {aspect: fingerprint seen}) from the
    validation form's fields `verdict-<aspect>`, `note-<aspect>` and `seen-<aspect>`."""
    verdicts, seen = {}, {}
    for aspect in validation.ASPECTS:
        verdict = (data.get(f"verdict-{aspect}") or "").strip()
        note = data.get(f"note-{aspect}") or ""
        if verdict or note.strip():
            verdicts[aspect] = (verdict, note)
        seen[aspect] = (data.get(f"seen-{aspect}") or "").strip()
    return verdicts, seen


VERDICT_CHOICES = ItemCheck.Verdict.choices
