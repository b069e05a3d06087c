"""MAIA answer collection as a kind of crowd study (seeds/004 §3; SPEC §5).

Each written question of a MAIA curation version (a `question_draft` item at stage
`stages.QUESTION_WRITTEN`, see `stages`) is answered by 8 annotators (k = `N_ANSWERS`), and each
annotator answers at most 12 of a video's 24 questions (`PER_VIDEO`, the engine's per-worker,
per-video cap `Study.max_items_per_video`, which counts the study items' `StudyItem.video`: the
draft's video, its `ItemMedia` of role "video").

A study of kind `maia_answers` names the curation version in `Study.output_version`; its items are
that version's drafts still collecting answers (`setup` fills them; `item_row` turns a row
`{"payload": {"question_item": <item id>}}` added later into a draft's row). The worker sees the video
and the question with its category's definition, and writes one short open answer in Italian
(`clean_answers`: not empty, at most `MAX_WORDS` words and `MAX_ANSWER` characters, not a bare
yes/no). Every answer is reviewed (expert share 1).

On approval (`on_approved`, in the review's transaction) the answer is appended to the draft's
`answers` under a row lock, with its provenance (worker, submission, study) in
`CurationRecord.working["answers"]`; the 8th approved answer makes the draft a `question` in the
importer's shape at stage `stages.POOL_COMPLETE`. A 9th approval is refused (409), undoing the
decision. A rejected answer frees the worker's place (`count_accepted_only`).
"""

from __future__ import annotations

import re

from django.db import transaction
from django.utils import translation
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from annotation import curation_stages
from annotation.benchmarks.maia import categories, stages
from annotation.benchmarks.maia.payload import N_ANSWERS
from annotation.crowd import answers, forms, kinds, studies
from annotation.crowd.errors import CrowdError, InvalidSubmission
from annotation.crowd.kinds import StudySetup
from annotation.crowd.models import Study
from annotation.curation_models import CurationRecord
from annotation.models import BenchmarkItem, BenchmarkVersion, ItemMedia
from config.roles import ADMIN, CURATOR, has_role

SLUG = categories.SLUG
STUDY_KIND = "maia_answers"
DRAFT, QUESTION = "question_draft", "question"
PER_VIDEO = 12  # a worker answers at most 12 of a video's 24 questions
MAX_ANSWER, MAX_WORDS = 200, 25
YES_NO = {"sì", "si", "no", "yes", "forse", "certo", "esatto", "vero", "falso", "non so"}

FORM = {"fields": [
    {"name": "answer", "type": "free_text", "label": gettext_noop("Your answer (in Italian)"),
     "help": gettext_noop("A short answer in your own words: a few words or one sentence."),
     "min_length": 1, "max_length": MAX_ANSWER},
]}

INSTRUCTIONS = gettext_noop("""Watch the whole video, read the question and the definition of its category,
then **write one short answer in Italian**, in your own words: a few words or one sentence.

- Answer from what the video shows. The audio is not used: answer from the pictures only.
- Answer the question asked: not "sì" or "no", but what happens, where, why, …
- Eight people answer each question; you answer at most 12 questions of the same video.""")


def is_answer_collection(study: Study) -> bool:
    return study.step_kind == STUDY_KIND


# --- Answers -----------------------------------------------------------------------------------------

def clean_answers(_schema: dict, payload: dict, data) -> dict:
    """The answer, trimmed; InvalidSubmission (400) with a message otherwise."""
    text = data.get("answer") if isinstance(data, dict) else None
    text = " ".join(text.split()) if isinstance(text, str) else ""
    problem = None
    if not text:
        problem = _("Write your answer.")
    elif len(text) > MAX_ANSWER or len(text.split()) > MAX_WORDS:
        problem = _("Keep the answer short: at most %(words)d words and %(chars)d characters.") % {
            "words": MAX_WORDS, "chars": MAX_ANSWER}
    elif re.sub(r"[^\w\s]", "", text.lower()).strip() in YES_NO:
        problem = _("The question is open: answer with what the video shows, not with yes or no.")
    if problem:
        raise InvalidSubmission(problem, details={"answer": problem})
    return forms.validate(FORM, payload or {}, {**data, "answer": text})


def readable(_schema: dict, payload: dict, data: dict) -> list[dict]:
    return answers.format_answers(FORM, payload, data)


def item_rows(payload: dict) -> list[dict]:
    """The task page's rows: the question, its category and the category's definition."""
    shown = ((QUESTION, _("Question")), ("category_name", _("Category")),
             ("category_definition", _("What the category asks about")))
    return [{"key": key, "label": label, "kind": "text", "value": str(payload[key])}
            for key, label in shown if payload.get(key)]


# --- Items -------------------------------------------------------------------------------------------

def curation_version(ident) -> BenchmarkVersion:
    """The unfrozen MAIA version `ident` (a version or its id); CrowdError 404/409 otherwise."""
    ident = getattr(ident, "pk", ident)
    version = BenchmarkVersion.objects.select_related("benchmark").filter(
        pk=ident, benchmark__slug=SLUG).first() if str(ident).isdigit() else None
    if version is None:
        raise CrowdError(f"There is no MAIA version #{ident}.", status=404)
    if version.frozen:
        raise CrowdError(f"Version {version} is frozen: choose an unfrozen MAIA curation version.", status=409)
    return version


def drafts(version: BenchmarkVersion):
    """The version's questions still collecting answers."""
    return (BenchmarkItem.objects.filter(version=version, payload__kind=DRAFT, curation__stage=stages.QUESTION_WRITTEN)
            .order_by("id"))


def _video(item: BenchmarkItem):
    media = ItemMedia.objects.filter(item=item, role="video", video__isnull=False).select_related("video").first()
    return media.video if media else None


def item_row_of(item: BenchmarkItem) -> dict:
    """The study item row of a draft; CrowdError when it is no draft collecting answers or has no video."""
    if (item.payload or {}).get("kind") != DRAFT:
        raise CrowdError(f"Item {item.external_id} is not a question collecting answers.", status=409)
    video = _video(item)
    if video is None:
        raise CrowdError(f"Question {item.external_id} has no video.", status=409)
    payload = item.payload
    try:
        definition = categories.category(categories.category_key(payload["category"]))
        category_name, category_definition = definition.instructions.get("name_it") or definition.name, \
            definition.description
    except categories.CategoryError:
        category_name, category_definition = payload["category"], ""
    return {"external_id": item.external_id, "benchmark_item": item, "video": video,
            "payload": {QUESTION: payload["question"], "category": payload["category"],
                        "category_name": category_name, "category_definition": category_definition,
                        "video": payload["video"]}}


def setup(created_by, settings: dict, *, with_rows: bool = True) -> StudySetup:
    """A new answer-collection study: k = 8, at most 12 questions of a video per worker, every answer
    reviewed, and (when it is given no items) the drafts of its curation version (`output_version`)."""
    made = {"annotators_per_item": N_ANSWERS, "max_items_per_video": PER_VIDEO, "expert_share": 1.0,
            "count_accepted_only": True}
    if not with_rows:
        return StudySetup(settings=made)
    if settings.get("output_version") is None:
        raise CrowdError("Choose the MAIA curation version whose questions collect answers.",
                         details={"output_version": "required for an answer-collection study"})
    version = curation_version(settings["output_version"])
    rows = [item_row_of(item) for item in drafts(version) if len(item.payload.get("answers") or []) < N_ANSWERS]
    if not rows:
        raise CrowdError(f"No question of version {version} is collecting answers.", status=409)
    return StudySetup(settings=made, rows=rows)


def item_row(study: Study, row: dict) -> str | None:
    """Turn a row added to the study (`{"payload": {"question_item": <item id>}}`) into a draft's row, in
    place; the row's problem otherwise."""
    payload = row.get("payload") if isinstance(row.get("payload"), dict) else {}
    if set(payload) != {"question_item"} or row.get("video") is not None or row.get("image") is not None:
        return 'items of an answer-collection study are MAIA questions: {"payload": {"question_item": <item id>}}'
    ident = payload["question_item"]
    item = BenchmarkItem.objects.filter(pk=ident, version_id=study.output_version_id).first() \
        if str(ident).isdigit() else None
    if item is None:
        return f"item {ident} is not a question of the study's version"
    if study.items.filter(benchmark_item=item).exists():
        return f"the study already has question {item.external_id}"
    try:
        found = item_row_of(item)
    except CrowdError as exc:
        return exc.message
    row.update(payload=found["payload"], benchmark_item=item, video=found["video"])
    return None


# --- Approval ----------------------------------------------------------------------------------------

def accept(submission) -> BenchmarkItem:
    """Add an approved answer to its question's pool (in the review's transaction); the 8th makes the
    draft a `question` at stage POOL_COMPLETE. CrowdError (409) for a question that is complete."""
    claim = submission.claim
    answer = (submission.final_data or {}).get("answer", "")
    if not claim.item.benchmark_item_id:
        raise CrowdError("This study item names no MAIA question.", status=409)
    with transaction.atomic():
        item = BenchmarkItem.objects.select_for_update().select_related("version").get(pk=claim.item.benchmark_item_id)
        record = CurationRecord.objects.select_for_update().filter(item=item).first()
        payload = dict(item.payload)
        pool = list(payload.get("answers") or [])
        if payload.get("kind") != DRAFT or len(pool) >= N_ANSWERS:
            raise CrowdError(f"Question {item.external_id} already has its {N_ANSWERS} answers: this answer "
                             "cannot join its pool. Reject it instead.", status=409)
        if item.version.frozen:
            raise CrowdError(f"Version {item.version} is frozen.", status=409)
        pool.append(answer)
        complete = len(pool) == N_ANSWERS
        item.payload = ({"kind": QUESTION, "video": payload["video"], "category": payload["category"],
                         "question": payload["question"], "answers": pool} if complete
                        else {**payload, "answers": pool})
        item.save()
        if record is None:
            record = curation_stages.start(item=item, stage=stages.QUESTION_WRITTEN)
        curation_stages.move(record, stages.POOL_COMPLETE if complete else record.stage,
                             reason=f"{N_ANSWERS} answers collected" if complete else "", working={
            **(record.working or {}), "answers": [
                *(record.working or {}).get("answers", []),
                {"answer": answer, "worker": claim.worker_id, "submission": submission.pk,
                 "study": claim.study.slug}]})
    return item


def _in(language: str, text: str) -> str:
    """`text` translated into the study's language (what its workers read), whoever creates it."""
    with translation.override(language):
        return _(text)


LANGUAGE = "it"  # the paper's crowd answered in Italian: the study's pages are Italian by default


def create_answer_study(curator, version, name: str = "", *, slug: str = "", k: int = N_ANSWERS,
                        open_now: bool = False, instructions: str = "", **fields) -> Study:
    """An answer-collection study over the drafts of MAIA curation `version` (see the module
    docstring), `k` answers per question (8 by default). 403 for a user who is no curator, 404/409 for a bad
    version or one with no draft."""
    if not has_role(curator, CURATOR, ADMIN):
        raise CrowdError("Only curators create studies.", status=403)
    version = curation_version(version)
    fields = {"annotators_per_item": k, "max_items_per_video": PER_VIDEO, "expert_share": 1.0,
              "estimated_minutes": 2, "language": LANGUAGE, **fields}
    return studies.create_study(
        name=name or f"MAIA answers: {version}", slug=slug or None, fallback_slug="maia-answers", created_by=curator,
        step_kind=STUDY_KIND, state=Study.State.OPEN if open_now else Study.State.DRAFT, output_version=version,
        instructions=instructions or _in(fields["language"], INSTRUCTIONS),
        history_reason="MAIA answer-collection study", **fields).study


KIND = kinds.register(kinds.StudyKind(
    STUDY_KIND, readable, clean_answers, uses_form=False, fixed_form=FORM, setup=setup, output_benchmark=SLUG,
    on_approved=accept, item_rows=item_rows, item_row=item_row))
