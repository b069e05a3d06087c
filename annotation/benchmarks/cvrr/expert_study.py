"""CVRR-ES expert assessment of QA pairs as a kind of crowd study (seeds/003 §3.2 "Quality of QA pairs";
SPEC §4 Curation 5).

An expert watches the video of one QA pair, reads its dimension (name and description), the question and
the ground-truth answer, and answers the paper's three questions:

1. `represents_dimension`: does the QA pair correctly represent the evaluation dimension it falls under?
   (yes / no)
2. `answerable_from_video`: the question can be correctly answered given only the video content
   (agree / disagree)
3. `answer_correct`: is the paired ground-truth answer correct? (yes / no)

with a note, required when the answer is said to be wrong (the pair goes back to filtration with it). The
form is the kind's own (`FORM`), checked on submit and on a reviewer's edit (`clean_answers`).

Experts are a qualification-gated group (`expert_group`): a study of this kind requires the qualification
`cvrr-expert`. Creating a study grants nothing, and a worker without it is refused an item with the
qualification's name.

`create_expert_study` makes a study over a sample of a QA pool (`expert_sample`: every video at least
once, drawn with a seed recorded in the study's history); each item is one pair with its library video
and its pool item (`StudyItem.benchmark_item`), and shows the dimension, the question and the answer
(`item_rows`). Experts' answers are not sampled for review. Nothing happens on a submission: a curator
finalises the report (`expert_report.finalise`), which moves the pairs on.
"""

from __future__ import annotations

import json

from annotation.benchmarks.cvrr import expert_group, expert_sample
from annotation.benchmarks.cvrr.expert_sample import STUDY_KIND
from annotation.crowd import answers, forms, history, kinds, studies
from annotation.crowd.errors import CrowdError, InvalidSubmission
from annotation.crowd.models import Study
from config.roles import ADMIN, CURATOR, has_role

HISTORY_KEY = "cvrr_expert_sample"
DIMENSION, VIDEO_ONLY, ANSWER, NOTES = "represents_dimension", "answerable_from_video", "answer_correct", "notes"
QUESTIONS = (DIMENSION, VIDEO_ONLY, ANSWER)
YES, NO, AGREE, DISAGREE = "yes", "no", "agree", "disagree"
# the answer of each question that counts in its rate (the paper's "Yes", "Agree", "Yes")
POSITIVE = {DIMENSION: YES, VIDEO_ONLY: AGREE, ANSWER: YES}
NEGATIVE = {DIMENSION: NO, VIDEO_ONLY: DISAGREE, ANSWER: NO}
QUESTION_NAMES = {DIMENSION: "represents its dimension", VIDEO_ONLY: "answerable from the video alone",
                  ANSWER: "ground-truth answer correct"}
MAX_NOTE = 2000

FORM = {"fields": [
    {"name": DIMENSION, "type": "single_choice",
     "label": "1. Does the QA pair correctly represent the evaluation dimension it falls under?",
     "options": [{"id": YES, "text": "Yes"}, {"id": NO, "text": "No"}]},
    {"name": VIDEO_ONLY, "type": "single_choice",
     "label": "2. The question can be correctly answered given only the video content.",
     "options": [{"id": AGREE, "text": "Agree"}, {"id": DISAGREE, "text": "Disagree"}]},
    {"name": ANSWER, "type": "single_choice",
     "label": "3. Is the ground-truth answer correct? (It is the reference the evaluation uses.)",
     "options": [{"id": YES, "text": "Yes"}, {"id": NO, "text": "No"}]},
    {"name": NOTES, "type": "free_text", "label": "Notes (required when the answer is wrong: say what is wrong)",
     "min_length": 0, "max_length": MAX_NOTE},
]}

INSTRUCTIONS = """Each item is one **question–answer pair** about a video, written for one evaluation dimension of
CVRR-ES. Watch the whole video, read the dimension, the question and its ground-truth answer, then answer:

1. **Does the pair represent its dimension?** Yes when the question tests what the dimension describes.
2. **Can it be answered from the video alone?** Agree when someone who only watched the video can answer it
   correctly. Some questions are misleading on purpose (robustness questions about actions that do not
   happen): they are answerable when the video shows that the premise is wrong.
3. **Is the ground-truth answer correct?** Yes when it is right given the video.

When the answer is wrong, say in the notes what is wrong: the pair goes back to filtration with your note."""

SHOWN = (("dimension_name", "Dimension"), ("dimension_description", "What the dimension covers"),
         ("question", "Question"), ("answer", "Ground-truth answer"), ("question_kind", "Kind of question"))


def is_assessment(study) -> bool:
    return study.step_kind == STUDY_KIND


def item_rows(payload: dict) -> list[dict]:
    """The task page's rows: the dimension, the question and the answer, in that order."""
    return [{"key": key, "label": label, "kind": "text", "value": str(payload[key])}
            for key, label in SHOWN if payload.get(key)]


# --- Answers -----------------------------------------------------------------------------------------

def clean_answers(_schema: dict, payload: dict, data) -> dict:
    """The three answers and the note, cleaned; InvalidSubmission (400) with a message per field otherwise."""
    clean = forms.validate_questions(FORM, payload or {}, data, QUESTIONS, "Answer the three questions.")
    if clean[ANSWER] == NO and not clean[NOTES]:
        raise InvalidSubmission("Say what is wrong with the answer.", details={
            NOTES: "say what is wrong with the ground-truth answer: the pair goes back to filtration with your note"})
    return clean


def readable(_schema: dict, payload: dict, data: dict) -> list[dict]:
    return answers.format_answers(FORM, payload, data)


# --- Creating a study ----------------------------------------------------------------------------------

def create_expert_study(pool, curator, *, seed: int, size: int | None = None, share=None, k: int = 1,
                        name: str = "", slug: str | None = None, open_now: bool = True,
                        **study_fields) -> studies.NewStudy:
    """An expert assessment study over a sample of the QA pool `pool` (`expert_sample`): `size` pairs or a
    `share` of the pool, drawn with `seed`, covering every video, `k` experts per pair, requiring the
    expert qualification. The sample is recorded in the study's first history entry (JSON under
    `HISTORY_KEY`). Curators and admins only (403); CrowdError, creating nothing, for a bad pool, size,
    share, seed or k."""
    if not has_role(curator, CURATOR, ADMIN):
        raise CrowdError("Only curators and admins create expert assessment studies.", status=403)
    if pool.benchmark.slug != expert_sample.SLUG or pool.frozen:
        raise CrowdError(f"Version {pool} is not an unfrozen CVRR-ES QA pool.", status=409 if pool.frozen else 400)
    k = expert_sample.whole(k, "The number of experts per pair (k)", 1)
    found = expert_sample.population(pool)
    size = expert_sample.resolve_size(found, size=size, share=share)
    pairs = expert_sample.draw(found, size, seed)
    sample = expert_sample.description(found, pairs, seed=seed, size=size, share=share, k=k)
    study_fields = {"expert_share": 0.0, "expert_first": 0, "gold_share": 0.0, "estimated_minutes": 2,
                    "required_qualification": expert_group.qualification(), **study_fields}
    name = name or f"CVRR-ES expert assessment: {pool}, {size} pairs, seed {seed}"
    return studies.create_study(
        name=name[:studies.NAME_LENGTH], slug=slug, fallback_slug="cvrr-experts", created_by=curator,
        step_kind=STUDY_KIND, state=Study.State.OPEN if open_now else Study.State.DRAFT, annotators_per_item=k,
        instructions=study_fields.pop("instructions", INSTRUCTIONS), rows=expert_sample.study_rows(pairs),
        history_reason=json.dumps({HISTORY_KEY: sample}, sort_keys=True), **study_fields)


def recorded_sample(study: Study) -> dict | None:
    """The sample as recorded when the study was created (None for a study made on the studies page)."""
    for entry in history.for_object(Study, study.pk).filter(from_state="").order_by("id"):
        try:
            found = json.loads(entry.reason)
        except ValueError:
            continue
        if isinstance(found, dict) and isinstance(found.get(HISTORY_KEY), dict):
            return found[HISTORY_KEY]
    return None


KIND = kinds.register(kinds.StudyKind(
    STUDY_KIND, readable, clean_answers, uses_form=False, fixed_form=FORM, setup=expert_sample.setup,
    item_rows=item_rows,
    pages=(("Expert assessment report", "cvrr-expert-report"),)))
