"""NL-EYE scene writing as a kind of crowd study (SPEC §3 "Curation" 1 and 4, seeds/002 §3).

A study of kind `nleye_scenes` asks each author for a triplet of short textual scenes: a premise, a
plausible hypothesis and an implausible one, with the reasoning category, temporal direction and
duration and the domain the author proposes. The form is the kind's own (`FORM`, the study's
`form_schema`), so the generic task page, drafts and the REST API serve it; the answers are checked
here on submit and on a reviewer's edit (`clean_answers`): the vocabularies, non-empty scenes within
the length limits, three different scenes, and a parallel scene being short.

Its items are writing slots: briefs (payload kind `brief`) in their own unfrozen version
(`scene_pool.BRIEFS_LABEL`), each suggesting a category, a time shift and a domain so that the
pool gets variety. Curators filter the written triplets in the study's review queue: a rejection
names the criterion it fails (`CRITERIA`: premise necessity, visual relevance, uniqueness) with an
optional note; an approval adds the triplet to the pool version the study names
(`Study.output_version`) with its curation record (`scene_pool.accept`). The queue shows the closest
existing triplets beside each one (`near_duplicates`) and the pool's spread has its own page
(`spread`).
"""

from __future__ import annotations

import re

from annotation.benchmarks.nleye import near_duplicates, scene_pool
from annotation.benchmarks.nleye.scene_pool import STUDY_KIND
from annotation.benchmarks.nleye.vocabulary import CATEGORIES, DIRECTIONS, DOMAINS, DURATIONS, PARALLEL, SHORT
from annotation.crowd import answers, forms, kinds, studies
from annotation.crowd.errors import CrowdError, InvalidSubmission
from annotation.crowd.models import Study
from config.roles import ADMIN, CURATOR, has_role

MIN_SCENE, MAX_SCENE = 8, 300
SCENES = (("premise", "Premise scene"), ("plausible", "Plausible hypothesis scene"),
          ("implausible", "Implausible hypothesis scene"))
CRITERIA = (("premise_necessity", "premise necessity"), ("visual_relevance", "visual relevance"),
            ("uniqueness", "uniqueness"))
CRITERIA_HELP = {
    "premise_necessity": "the premise is not needed to tell which hypothesis is more plausible",
    "visual_relevance": "the scenes cannot be told apart in pictures",
    "uniqueness": "it repeats an existing triplet or its logical pattern",
}


def _choices(vocabulary) -> list[dict]:
    return [{"id": value, "text": label} for value, label in vocabulary]


def _scene_field(name: str, label: str, hint: str) -> dict:
    return {"name": name, "type": "free_text", "label": label, "help": hint, "min_length": MIN_SCENE,
            "max_length": MAX_SCENE}


FORM = {"fields": [
    _scene_field("premise", "Premise scene", "What the first picture shows, in a sentence or two."),
    _scene_field("plausible", "Plausible hypothesis scene",
                 "A scene that the premise makes more plausible."),
    _scene_field("implausible", "Implausible hypothesis scene",
                 "A scene that differs from the plausible one only a little, yet is less plausible given the "
                 "premise."),
    {"name": "reasoning_category", "type": "single_choice", "label": "Reasoning category",
     "options": _choices(CATEGORIES)},
    {"name": "time_direction", "type": "single_choice", "label": "Temporal direction",
     "options": _choices(DIRECTIONS)},
    {"name": "time_duration", "type": "single_choice", "label": "Duration (a parallel scene is short)",
     "options": _choices(DURATIONS)},
    {"name": "domain", "type": "single_choice", "label": "Domain", "options": _choices(DOMAINS)},
]}

INSTRUCTIONS = """Write a **triplet of short scenes** that could each be drawn as one picture:

1. a **premise**: what the first picture shows;
2. a **plausible hypothesis**: a scene that the premise makes likely (what happened before, what
   happens next, or what happens at the same time);
3. an **implausible hypothesis**: a scene close to the plausible one, yet less plausible given the premise.

Then say which kind of reasoning tells them apart, the direction and length of the time shift, and the
domain. The item shows a suggestion to aim for: follow it when you can, choose what fits your idea
otherwise.

Curators keep a triplet only when the premise is needed to choose, the scenes can be shown in
pictures, and it does not repeat an existing example or its logic."""


def is_scenes(study: Study) -> bool:
    return study.step_kind == STUDY_KIND


def _key(text: str) -> str:
    return re.sub(r"[\s.!?,;:]+", " ", text.lower()).strip()


def clean_answers(_schema: dict, payload: dict, data) -> dict:
    """The written triplet, cleaned; InvalidSubmission (400) with a message per field otherwise."""
    errors: dict = {}
    try:
        clean = forms.validate(FORM, payload or {}, data)
    except InvalidSubmission as exc:
        if not isinstance(exc.details, dict):
            raise
        errors.update(exc.details)
        clean = {}
        for name, _label in SCENES:
            value = data.get(name) if isinstance(data, dict) else None
            if name in errors and not (isinstance(value, str) and value.strip()):
                errors[name] = "this scene is required"
    seen: dict[str, str] = {}
    for name, label in SCENES:
        key = _key(clean.get(name, ""))
        if key and key in seen and name not in errors:
            errors[name] = f"the same as the {seen[key].lower()}: write a different scene"
        elif key:
            seen.setdefault(key, label)
    if clean.get("time_direction") == PARALLEL and clean.get("time_duration", SHORT) != SHORT \
            and "time_duration" not in errors:
        errors["time_duration"] = "a parallel scene happens at the same time as the premise: its duration is short"
    if errors:
        raise InvalidSubmission("Some parts of the triplet are missing or invalid.", details=errors)
    return clean


def readable(schema: dict, payload: dict, data: dict) -> list[dict]:
    return answers.format_answers(FORM, payload, data)


def create_scene_study(curator, name: str, *, pool=None, slug: str = "", k: int = 3,
                       instructions: str = INSTRUCTIONS, open_now: bool = False, **fields) -> Study:
    """A scene-writing study over the writing slots (briefs), its approved triplets going to `pool`
    (an unfrozen NL-EYE version; the default pool version when None). Every submission is reviewed
    (the filter is the curators' decision). A draft unless `open_now`."""
    if not has_role(curator, CURATOR, ADMIN):
        raise CrowdError("Only curators create studies.", status=403)
    fields.setdefault("expert_share", 1.0)
    fields.setdefault("estimated_minutes", 5)
    return studies.create_study(
        name=name, slug=slug or None, fallback_slug="scene-writing", created_by=curator, step_kind=STUDY_KIND,
        form_schema=FORM, state=Study.State.OPEN if open_now else Study.State.DRAFT, output_version=pool,
        annotators_per_item=k, instructions=instructions,
        history_reason="NL-EYE scene-writing study", **fields).study


KIND = kinds.register(kinds.StudyKind(
    STUDY_KIND, readable, clean_answers, uses_form=False, fixed_form=FORM, setup=scene_pool.setup,
    output_benchmark=scene_pool.SLUG, rejection_criteria=CRITERIA, on_approved=scene_pool.accept,
    review_extra=near_duplicates.review_extra,
    pages=(("Spread of the pool", "scene-spread"),)))

__all__ = ["CRITERIA", "FORM", "KIND", "STUDY_KIND", "clean_answers", "create_scene_study", "is_scenes"]
