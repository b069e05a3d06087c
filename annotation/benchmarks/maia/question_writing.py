"""MAIA question writing as a kind of crowd study (seeds/004 §3.1; SPEC §5).

A study of kind `maia_questions` holds each library video once (`one_item_per_video`). Its worker
writes, per video, two open questions for each of the 12 reasoning categories: 24 questions, in the
form's fields named for the release category with its `_A`/`_B` suffix (`SLOTS`; the causal
category's two questions are its implicit and its explicit sub-type). The item shows the video and,
per category, its Italian and English name, definition and first example, copied from the
category rows (`categories.ensure_categories`) when the item is made, so the study records what its
workers read. The instructions and the item remind that questions are about what the images show,
never the audio.

The answers are checked on submit and on a reviewer's edit (`clean_answers`), field by field: every
question written, ending with "?", no two the same, and none a yes/no question (`yes_no.is_yes_no`,
refused with `YES_NO_MESSAGE` in the item's language, Italian by default). A worker who believes a
refused question is open ticks its "open question" box (`<slot>_open`): the submission is then
accepted, flagged, and the review queue shows the flag beside it (`review_extra`). A reviewer's edit
is never refused by the detector (its edit form ticks every box); a question the detector still reads
as yes/no is recorded as overridden by the reviewer.

An approval (`accept`) adds the 24 questions to the study's curation version (`Study.output_version`,
an unfrozen `maia` version; `CURATION_LABEL` by default) as `question_draft` items with the video as
their `video` media, external ids `<video key>-<slot>`, and a `CurationRecord` each (stage
`stages.QUESTION_WRITTEN`, author the worker, `working`: the submission, the study, the override with
who flagged and who approved it, when). A second approval for the same video is refused (409).
"""

from __future__ import annotations

import re

from django.core.exceptions import ValidationError
from django.db import IntegrityError
from django.utils.translation import gettext as _

from annotation import curation_stages
from annotation.benchmarks.maia import categories, stages
from annotation.benchmarks.maia.yes_no import YES_NO_MESSAGE, is_yes_no
from annotation.crowd import forms, kinds, studies
from annotation.crowd.errors import CrowdError, InvalidSubmission
from annotation.crowd.kinds import StudySetup
from annotation.crowd.models import Study, StudyItem
from annotation.models import BenchmarkItem, BenchmarkVersion, FrozenError, Video
from annotation.versions import add_item
from config.roles import ADMIN, CURATOR, has_role

STUDY_KIND = "maia_questions"
CURATION_LABEL = "curation"
DEFAULT_LANGUAGE = "it"
MIN_QUESTION, MAX_QUESTION = 8, 300
OPEN = "open"  # the value of a ticked "this is an open question" box
SUFFIXES = ("A", "B")
FLAGS_TEMPLATE = "maia/_question_flags.html"
EDIT_TEMPLATE = "maia/_question_edit.html"


def _slots() -> list[dict]:
    """One slot per question: its field name (the release category with its suffix), category key, label."""
    out = []
    for key, texts in categories.DEFAULTS.items():
        names = texts["release_names"]
        for index, suffix in enumerate(SUFFIXES):
            subtype = texts.get("subtypes") or []
            label = f"{texts['name_it']} · domanda {suffix}"
            if len(names) > 1 and len(subtype) > index:
                label = f"{texts['name_it']} ({subtype[index]['name']}) · domanda {suffix}"
            example = next(iter(texts.get("examples") or []), {}).get("question_it", "")
            out.append({"name": f"{names[min(index, len(names) - 1)]}_{suffix}", "key": key, "label": label,
                        "example": example})
    return out


SLOTS = _slots()
SLOT_NAMES = [slot["name"] for slot in SLOTS]
LABELS = {slot["name"]: slot["label"] for slot in SLOTS}


def override_field(slot: str) -> str:
    return f"{slot}_open"


FORM = {"fields": [field for slot in SLOTS for field in (
    {"name": slot["name"], "type": "free_text", "label": slot["label"],
     "help": "Una domanda aperta su ciò che si vede nel video (non sull'audio); niente domande sì/no."
             + (f" Esempio: «{slot['example']}»" if slot["example"] else ""),
     "min_length": 1, "max_length": MAX_QUESTION},
    {"name": override_field(slot["name"]), "type": "multi_select",
     "label": "Se il modulo la rifiuta come domanda sì/no", "shuffle": False,
     "options": [{"id": OPEN, "text": "È una domanda aperta: il controllo sì/no sbaglia (la verificherà un "
                                      "curatore)"}]},
)]}

INSTRUCTIONS = """Guarda tutto il video, poi scrivi **due domande aperte per ciascuna delle 12 categorie**
(24 domande per video).

- Accanto al video trovi, per ogni categoria, il nome, la definizione e un esempio: leggili prima
  di scrivere.
- Le domande devono riguardare **ciò che si vede nelle immagini**: **non sono ammesse domande
  sull'audio** (parole, musica, rumori).
- **Niente domande sì/no**: usa una parola interrogativa (chi, che cosa, quale, quanto, dove, quando,
  come, perché…). Il modulo rifiuta le domande che sembrano sì/no; se sei sicuro che la tua domanda
  sia aperta, spunta «È una domanda aperta» sotto di essa: un curatore la verificherà.
- Le due domande di una categoria devono essere diverse tra loro e da quelle delle altre categorie.

Un curatore rivede le domande prima che passino alla raccolta delle risposte."""

AUDIO_REMINDER = ("Le domande riguardano ciò che si vede nelle immagini del video: non sono ammesse domande "
                  "sull'audio.")


def is_question_writing(study: Study) -> bool:
    return study.step_kind == STUDY_KIND


def language(payload: dict) -> str:
    found = (payload or {}).get("language")
    return found if found in YES_NO_MESSAGE else DEFAULT_LANGUAGE


def _key(text: str) -> str:
    return re.sub(r"[\s.!?,;:¿¡'\"«»]+", " ", text.lower()).strip()


def _ticked(value) -> bool:
    return isinstance(value, list) and OPEN in value


def clean_answers(_schema: dict, payload: dict, data) -> dict:
    """The 24 questions, trimmed, and for each a ticked override only where the detector reads it as
    yes/no; InvalidSubmission (400) with a message per field otherwise."""
    if not isinstance(data, dict):
        raise InvalidSubmission(_("The answers must be a JSON object."))
    errors: dict = dict(forms.unknown_fields(FORM, data))
    clean: dict = {}
    for field in FORM["fields"]:  # field by field, so that one bad answer leaves the others checked
        try:
            clean.update(forms.validate({"fields": [field]}, payload or {}, {field["name"]: data.get(field["name"])}))
        except InvalidSubmission as exc:
            errors.update(exc.details if isinstance(exc.details, dict) else {field["name"]: exc.message})
    message = YES_NO_MESSAGE[language(payload)]
    seen: dict[str, str] = {}
    for slot in SLOT_NAMES:
        text = clean.get(slot, "")
        if slot in errors or not text:
            if not str(data.get(slot) or "").strip():
                errors[slot] = _("write this question")
            continue
        key = _key(text)
        if not text.endswith("?"):
            errors[slot] = _("write a question, ending with a question mark")
        elif len(text) < MIN_QUESTION:
            errors[slot] = _("write the question in full (at least %(n)d characters)") % {"n": MIN_QUESTION}
        elif key in seen:
            errors[slot] = _("the same as the question “%(other)s”: write a different question") % {
                "other": LABELS[seen[key]]}
        elif is_yes_no(text) and not _ticked(clean.get(override_field(slot))):
            errors[slot] = message
        seen.setdefault(key, slot)
        clean[override_field(slot)] = [OPEN] if is_yes_no(text) and _ticked(clean.get(override_field(slot))) else []
    if errors:
        raise InvalidSubmission(_("Some questions are missing or need changes."), details=errors)
    return clean


def overridden(data: dict) -> list[str]:
    """The slots whose question the worker (or a reviewer) kept although the detector reads it as yes/no."""
    data = data or {}
    return [slot for slot in SLOT_NAMES if _ticked(data.get(override_field(slot)))]


def readable(_schema: dict, _payload: dict, data: dict) -> list[dict]:
    """Category → question, the overridden ones marked."""
    data = data or {}
    flagged = set(overridden(data))
    return [{"label": LABELS[slot], "value": data.get(slot, ""),
             "extra": [_("the worker says this is an open question (yes/no check overridden)")]
             if slot in flagged else []} for slot in SLOT_NAMES]


def review_extra(_study, submissions: list) -> dict:
    """{submission id: the overridden questions} for the submissions that have any."""
    out = {}
    for submission in submissions:
        flags = [{"slot": slot, "label": LABELS[slot], "question": (submission.final_data or {}).get(slot, "")}
                 for slot in overridden(submission.final_data)]
        if flags:
            out[submission.pk] = {"template": FLAGS_TEMPLATE, "flags": flags}
    return out


def edit_form(schema: dict, payload: dict, data: dict) -> dict:
    """The reviewer's edit form: the 24 questions only; every override box is sent ticked, so the
    detector never refuses an edit (an edited yes/no question is recorded as the reviewer's override)."""
    data = data or {}
    fields = [{"name": slot, "label": LABELS[slot], "text": data.get(slot, ""), "max_length": MAX_QUESTION}
              for slot in SLOT_NAMES]
    return {"template": EDIT_TEMPLATE, "shape": "form", "questions": fields,
            "overrides": [override_field(slot) for slot in SLOT_NAMES]}


# --- Items -----------------------------------------------------------------------------------------

def video_key(video: Video) -> str:
    """The `video` of the video's questions, as the release names videos (`video<N>`, exported as
    `dataset/videos/<N>.mp4`): N is the library video's id, the same in every curation version."""
    return f"video{video.pk}"


def category_guides() -> list[dict]:
    """What the worker reads about each category, from the category rows as curators last saved them."""
    guides = []
    for row in categories.ensure_categories():
        instructions = row.instructions or {}
        example = next(iter(instructions.get("examples") or []), {})
        guides.append({"key": row.key, "name_it": instructions.get("name_it", ""), "name": row.name,
                       "definition": row.description,
                       "example": example.get("question_it", "")})
    return guides


def item_payload(video: Video, lang: str = DEFAULT_LANGUAGE) -> dict:
    return {"video": video_key(video), "language": lang if lang in YES_NO_MESSAGE else DEFAULT_LANGUAGE,
            "categories": category_guides()}


def item_rows(payload: dict) -> list[dict]:
    """The task page's rows: the video's key, the audio reminder, then each category's Italian name with its
    English name, definition and first example."""
    rows = [{"key": "video", "label": _("Video"), "kind": "text", "value": payload.get("video", "")},
            {"key": "reminder", "label": _("Reminder"), "kind": "text", "value": AUDIO_REMINDER}]
    for guide in payload.get("categories") or []:
        parts = [guide.get("name", ""), guide.get("definition", "")]
        if guide.get("example"):
            parts.append(_("Example: %(question)s") % {"question": guide["example"]})
        rows.append({"key": f"category-{guide.get('key', '')}", "label": guide.get("name_it", ""),
                     "kind": "list", "value": [part for part in parts if part]})
    return rows


def library_videos(ids) -> list[Video]:
    """The ready library videos `ids`, in that order; 404 naming the first that is missing or not ready."""
    ids = list(ids)
    if not all(isinstance(ident, int) and not isinstance(ident, bool) for ident in ids):
        raise CrowdError("A library video is named by its id, a whole number.")
    found = Video.objects.filter(pk__in=ids, status=Video.Status.READY).in_bulk()
    for ident in ids:
        if ident not in found:
            raise CrowdError(f"There is no ready library video #{ident}.", status=404)
    return [found[ident] for ident in ids]


def _study_language(settings: dict) -> str:
    """The language of the study's pages (`Study.language`), which its refusal messages use."""
    return settings.get("language") or DEFAULT_LANGUAGE


def video_rows(videos, lang: str = DEFAULT_LANGUAGE) -> list[dict]:
    """One study item row per library video."""
    rows = []
    for video in videos:
        if not isinstance(video, Video):
            raise CrowdError(_("Only videos of the media library can have questions written about them."))
        rows.append({"external_id": f"video-{video.pk}", "payload": item_payload(video, lang), "video": video})
    return rows


def item_row(study: Study, row: dict) -> str | None:
    """Turn a row added to a question-writing study (a library video chosen on the items page, or
    `{"payload": {"video_id": <id>}}` through the API) into its item row, in place; the row's problem
    otherwise."""
    payload = row.get("payload") if isinstance(row.get("payload"), dict) else {}
    video = row.get("video")
    if video is None and set(payload) == {"video_id"} and row.get("image") is None:
        try:
            video = library_videos([payload["video_id"]])[0]
        except CrowdError as exc:
            return exc.message
        if study.items.filter(video=video).exists():
            return f"video #{video.pk} is already in this study, which holds each video once"
        row["video"] = video
    if not isinstance(video, Video) or row.get("image") is not None:
        return ('items of a question-writing study are library videos: choose videos on the items page, or '
                'give {"payload": {"video_id": <id>}}')
    if row.get("role", StudyItem.Role.REGULAR) != StudyItem.Role.REGULAR:
        return "a question-writing study has no gold or attention items"
    row["payload"] = item_payload(video, _study_language({"language": study.language}))
    return None


# --- The curation version ---------------------------------------------------------------------------

def curation_version(user=None, label: str = CURATION_LABEL) -> BenchmarkVersion:
    """The unfrozen MAIA version `label` (made when missing); 409 when it is frozen."""
    version, _made = BenchmarkVersion.objects.get_or_create(
        benchmark=categories.benchmark(), label=label,
        defaults={"created_by": user, "source": BenchmarkVersion.Source.CURATION,
                  "description": "MAIA questions written in question-writing studies, collecting their answers."})
    if version.frozen:
        raise CrowdError(f"Version {version} is frozen: name an unfrozen MAIA version for the questions.",
                         status=409)
    return version


def setup(created_by, settings: dict, *, with_rows: bool = True) -> StudySetup:
    """A new question-writing study: the default curation version unless `settings` name one; no items
    (the curator adds videos on the items page)."""
    made = {} if settings.get("output_version") is not None else {"output_version": curation_version(created_by)}
    if not settings.get("language"):
        made["language"] = DEFAULT_LANGUAGE
    return StudySetup(settings=made)


def _target(study: Study) -> BenchmarkVersion:
    version = BenchmarkVersion.objects.select_related("benchmark").filter(pk=study.output_version_id).first() \
        if study.output_version_id else None
    if version is None:
        raise CrowdError("This study names no version for its questions: choose one in its settings.", status=409)
    if version.frozen:
        raise CrowdError(f"Version {version} is frozen: choose an unfrozen MAIA version for the questions in the "
                         "study's settings.", status=409)
    return version


def _overrides(submission, questions: dict) -> dict:
    """slot → who kept a question the detector reads as yes/no: the worker (approved as written) or the
    reviewer (who edited it), with the reviewer and when."""
    written = submission.data or {}
    at = submission.reviewed_at.isoformat() if submission.reviewed_at else None
    reviewer = getattr(submission.reviewed_by, "username", None)
    found = {}
    for slot in SLOT_NAMES:
        if not is_yes_no(questions[slot]):
            continue
        by_worker = written.get(slot, "").strip() == questions[slot] and _ticked(written.get(override_field(slot)))
        found[slot] = {"question": questions[slot],
                       "by": submission.claim.worker.username if by_worker else reviewer,
                       "role": "worker" if by_worker else "reviewer", "approved_by": reviewer, "at": at}
    return found


def accept(submission) -> list[BenchmarkItem]:
    """Add an approved submission's 24 questions to the study's curation version as `question_draft`
    items, each with its video and curation record (in the caller's transaction)."""
    claim = submission.claim
    questions = {slot: str((submission.final_data or {}).get(slot) or "").strip() for slot in SLOT_NAMES}
    missing = [slot for slot, text in questions.items() if not text]
    if missing:
        raise CrowdError(f"The submission lacks the questions {', '.join(missing)}.", status=400)
    video = claim.item.video
    if video is None:
        raise CrowdError("This study item has no video: its questions cannot be added.", status=409)
    version = _target(claim.study)
    key = (claim.item.payload or {}).get("video") or video_key(video)
    ids = {slot: f"{key}-{slot}" for slot in SLOT_NAMES}
    taken = sorted(BenchmarkItem.objects.filter(version=version, external_id__in=ids.values())
                   .values_list("external_id", flat=True))
    if taken:
        raise CrowdError(f"Version {version} already holds questions for video {key!r} ({', '.join(taken[:3])}"
                         f"{'…' if len(taken) > 3 else ''}): reject this submission, or remove those items first.",
                         status=409)
    overrides = _overrides(submission, questions)
    items = []
    for slot in SLOT_NAMES:
        payload = {"kind": "question_draft", "video": key, "category": slot, "question": questions[slot],
                   "answers": []}
        try:
            item = add_item(version, ids[slot], payload, {"video": video})
        except FrozenError as exc:
            raise CrowdError(" ".join(exc.messages), status=409) from None
        except ValidationError as exc:
            raise CrowdError("The question does not fit MAIA's items: " + "; ".join(exc.messages),
                             status=400) from None
        except IntegrityError:
            raise CrowdError(f"Version {version} already holds an item {ids[slot]!r}.", status=409) from None
        curation_stages.start(
            item=item, stage=stages.QUESTION_WRITTEN, author=claim.worker, by=claim.worker,
            working={"submission": submission.pk, "study": claim.study.slug, "yes_no_override": overrides.get(slot)})
        items.append(item)
    return items


def studies_of_kind():
    """Every question-writing study, newest first, with its curation version."""
    return Study.objects.filter(step_kind=STUDY_KIND).select_related("output_version").order_by("-created_at")


def create_question_study(curator, name: str, *, videos=(), slug: str = "", version=None, k: int = 1,
                          instructions: str = INSTRUCTIONS, open_now: bool = False, **fields) -> Study:
    """A question-writing study over library `videos` (`k` workers per video, one by default), its approved
    questions going to `version` (the default curation version when None). 403 for a user who is no
    curator. A draft unless `open_now`."""
    if not has_role(curator, CURATOR, ADMIN):
        raise CrowdError("Only curators create studies.", status=403)
    fields["annotators_per_item"] = k
    fields.setdefault("expert_share", 1.0)
    fields.setdefault("estimated_minutes", 30)
    fields.setdefault("language", DEFAULT_LANGUAGE)
    rows = video_rows(videos, _study_language(fields))
    return studies.create_study(
        name=name, slug=slug or None, fallback_slug="maia-questions", created_by=curator, step_kind=STUDY_KIND,
        rows=rows, form_schema=FORM, state=Study.State.OPEN if open_now else Study.State.DRAFT,
        output_version=version, instructions=instructions, history_reason="MAIA question-writing study",
        **fields).study


KIND = kinds.register(kinds.StudyKind(
    STUDY_KIND, readable, clean_answers, uses_form=False, one_item_per_video=True, edit_form=edit_form,
    fixed_form=FORM, setup=setup, output_benchmark=categories.SLUG, on_approved=accept,
    review_extra=review_extra, item_rows=item_rows, item_row=item_row))
