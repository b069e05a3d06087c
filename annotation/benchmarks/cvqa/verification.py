"""C-VQA-Real two-person verification (seeds/001 §3.2; SPEC §2 "Verification") as a kind of crowd study.

Every counterfactual item (`counterfactuals`, stage `proposed` or `written`) is shown with its image, the
original question and answer, and the new question and answer, to at least two verifiers (`Study.
annotators_per_item`, never below `MIN_VERIFIERS`), who each answer:

1. `about_image`: is the new question still about the image? (yes / no)
2. `answer_right`: is the new answer right? (right / wrong / ambiguous: no single right answer), with
   `corrected_answer` when it is wrong: a whole number for numerical items, yes/no for boolean ones.

Once an item has its verifiers' answers (`resolve`, run after each submission and from the verification
page), their verdicts (`verdict_of`: keep, correct to X, remove as not about the image, remove as
ambiguous) decide it when they all agree: kept or corrected items reach stage `verified` (a correction
rewrites `new_answer`); removed ones leave the version. Any disagreement puts the item at stage
`adjudication`, where a curator who did not verify it keeps, corrects or removes it (`adjudicate`).

A removed item keeps its verdicts and reason: it moves to the companion version `<label>-removed`
(`removed_version`), which is never frozen, with its record at stage `removed`. The verifiers' verdicts,
the outcome and any adjudication are recorded in the item's `CurationRecord.working["verification"]`.

A verifier's answer can still come after the item is verified (a reviewer rejected an earlier answer, which
reopens its slot): when the answers that count then no longer agree on the verdict the verifiers had agreed
on, the item goes to adjudication (`resolve`). People's decisions on an item (`human_decisions`, the
benchmark's registry hook) are every verifier's verdict that counts and the curator's adjudication, on one
question: the latest counts, and a removal is a rejection, so a verified item whose latest verdict removes it
is not frozen.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from annotation import curation_stages, decisions
from annotation.benchmarks.cvqa import counterfactual_groups as groups
from annotation.benchmarks.cvqa import counterfactuals
from annotation.benchmarks.cvqa.source_reading import ROLE
from annotation.crowd import answers, assignment, forms, kinds, studies
from annotation.crowd.errors import CrowdError, InvalidSubmission
from annotation.crowd.kinds import StudySetup
from annotation.crowd.models import Claim, Study, StudyItem, Submission
from annotation.curation_models import CurationRecord
from annotation.models import BenchmarkItem, BenchmarkVersion
from config.roles import ADMIN, CURATOR, has_role

SLUG = counterfactuals.SLUG
STUDY_KIND = "cvqa_verification"
MIN_VERIFIERS = 2
WORKING_KEY = "verification"
ABOUT, ANSWER, CORRECTED, NOTES = "about_image", "answer_right", "corrected_answer", "notes"
YES, NO = "yes", "no"
RIGHT, WRONG, AMBIGUOUS = "right", "wrong", "ambiguous"
KEEP, CORRECT, REMOVE = "keep", "correct", "remove"
NOT_ABOUT_IMAGE, AMBIGUOUS_ANSWER, OTHER = "not_about_image", "ambiguous", "other"
REASONS = {NOT_ABOUT_IMAGE: "the new question is not about the image",
           AMBIGUOUS_ANSWER: "the new question has no single right answer (ambiguous)",
           OTHER: "another reason (see the note)"}
REMOVED_SUFFIX = "-removed"
MAX_NOTE = 1000
MAX_ANSWER = 20
WAITING, AGREED, DISAGREED = "waiting", "agreed", "disagreed"
QUESTION = "the counterfactual question"  # what verdicts and adjudications settle (`human_decisions`)
GROUP_NAMES = {groups.DIRECT: "numerical, direct", groups.INDIRECT: "numerical, indirect",
               groups.BOOLEAN: "boolean (yes/no)"}

FORM = {"fields": [
    {"name": ABOUT, "type": "single_choice", "label": "1. Is the new question still about the image?",
     "options": [{"id": YES, "text": "Yes"},
                 {"id": NO, "text": "No: it asks about something the image does not show"}]},
    {"name": ANSWER, "type": "single_choice", "label": "2. Is the new answer right?",
     "options": [{"id": RIGHT, "text": "Yes, it is right"},
                 {"id": WRONG, "text": "No: I give the right answer below"},
                 {"id": AMBIGUOUS, "text": "It cannot be told: the new question has no single right answer"}]},
    {"name": CORRECTED, "type": "free_text",
     "label": "The right answer, when the new answer is wrong (a whole number, or yes/no for a yes/no question)",
     "min_length": 0, "max_length": MAX_ANSWER},
    {"name": NOTES, "type": "free_text", "label": "Notes (optional)", "min_length": 0, "max_length": MAX_NOTE},
]}

INSTRUCTIONS = """Each item is a **counterfactual question** about an image: the original question with a
presupposition ("…if two more cars were parked?"), and the answer it should have. Look at the image, read the
original question and answer, then the new question and its answer, and say:

1. **Is the new question still about the image?** No when it asks about something the image does not show.
2. **Is the new answer right?** Work it out from the image and the presupposition. When it is wrong, give the
   right one (a whole number, or yes/no). When the question has no single right answer, choose "cannot be told".

A second person checks every item independently; disagreements go to a curator."""

SHOWN = (("group", "Kind of question"), ("query", "Original question"), ("answer", "Original answer"),
         ("new_query", "New question"), ("new_answer", "New answer"))


class VerificationError(CrowdError):
    """A verification step refused (the message says why; `status` for pages)."""


def is_verification(study) -> bool:
    return study.step_kind == STUDY_KIND


def item_rows(payload: dict) -> list[dict]:
    """The task page's rows: the kind of question, the original question and answer, the new ones."""
    shown = {**payload, "group": GROUP_NAMES.get(payload.get("type"), payload.get("type"))}
    return [{"key": key, "label": label, "kind": "text", "value": str(shown[key])}
            for key, label in SHOWN if shown.get(key) not in (None, "")]


# --- Answers -----------------------------------------------------------------------------------------

def normal_answer(group: str, value) -> str:
    """A corrected answer as stored: a whole number, or yes/no for the boolean group; ValueError otherwise."""
    value = str(value or "").strip()
    if group == groups.BOOLEAN:
        if value.lower() not in groups.YES_NO:
            raise ValueError(f"a yes/no question's answer is yes or no, not {value!r}")
        return value.lower()
    try:
        return groups.check_answers(group, "", value)
    except ValueError:
        raise ValueError(f"the answer is a whole number, not {value!r}") from None


def clean_answers(_schema: dict, payload: dict, data) -> dict:
    """The two checks, the corrected answer and the note, cleaned; InvalidSubmission (400) otherwise."""
    clean = forms.validate_questions(FORM, payload or {}, data, (ABOUT, ANSWER), "Answer both checks.")
    corrected = clean.get(CORRECTED, "").strip()
    if clean[ANSWER] != WRONG:
        if corrected:
            raise InvalidSubmission("Give a corrected answer only when the new answer is wrong.", details={
                CORRECTED: "leave this empty, or say that the new answer is wrong"})
        return {**clean, CORRECTED: ""}
    try:
        corrected = normal_answer((payload or {}).get("type"), corrected)
    except ValueError as exc:
        raise InvalidSubmission("Give the right answer.", details={CORRECTED: str(exc) if corrected else
                                "say what the right answer is"}) from None
    if corrected == str((payload or {}).get("new_answer", "")).strip().lower():
        raise InvalidSubmission("The corrected answer is the new answer.", details={
            CORRECTED: "this is the answer given: choose “Yes, it is right”, or give another answer"})
    return {**clean, CORRECTED: corrected}


def readable(_schema: dict, payload: dict, data: dict) -> list[dict]:
    return answers.format_answers(FORM, payload, data)


def verdict_of(data: dict) -> tuple[str, str]:
    """(keep | correct | remove, the corrected answer or the removal reason) of one verifier's answers."""
    if data.get(ABOUT) == NO:
        return REMOVE, NOT_ABOUT_IMAGE
    if data.get(ANSWER) == AMBIGUOUS:
        return REMOVE, AMBIGUOUS_ANSWER
    if data.get(ANSWER) == WRONG:
        return CORRECT, str(data.get(CORRECTED, ""))
    return KEEP, ""


def verdict_text(verdict: tuple[str, str]) -> str:
    action, value = verdict
    if action == CORRECT:
        return f"correct the answer to {value}"
    if action == REMOVE:
        return f"remove: {REASONS.get(value, value)}"
    return "keep as it is"


# --- Reading an item's verification ----------------------------------------------------------------------

@dataclass
class Verdict:
    worker_id: int
    worker: str
    data: dict
    verdict: tuple[str, str]
    submitted_at: object

    @property
    def text(self) -> str:
        return verdict_text(self.verdict)


@dataclass
class ItemState:
    item: BenchmarkItem
    stage: str
    verdicts: list[Verdict] = field(default_factory=list)
    needed: int = MIN_VERIFIERS

    @property
    def outcome(self) -> str:
        if len(self.verdicts) < self.needed:
            return WAITING
        return AGREED if len({verdict.verdict for verdict in self.verdicts}) == 1 else DISAGREED

    @property
    def verifier_ids(self) -> set[int]:
        return {verdict.worker_id for verdict in self.verdicts}


def _submissions(item_ids):
    return (Submission.objects.filter(claim__item__benchmark_item_id__in=list(item_ids),
                                      claim__study__step_kind=STUDY_KIND,
                                      claim__status__in=(Claim.Status.SUBMITTED, Claim.Status.APPROVED))
            .select_related("claim__worker", "claim__item").order_by("submitted_at", "id"))


def _needed(item_ids) -> dict[int, int]:
    found = (StudyItem.objects.filter(benchmark_item_id__in=list(item_ids), study__step_kind=STUDY_KIND)
             .values("benchmark_item_id").annotate(k=Max("study__annotators_per_item")))
    return {row["benchmark_item_id"]: max(MIN_VERIFIERS, row["k"]) for row in found}


def states(items) -> list[ItemState]:
    """Each item's stage, its verifiers' verdicts (submitted or approved, in order) and how many it needs."""
    items = list(items)
    ids = [item.pk for item in items]
    needed = _needed(ids)
    stages = dict(CurationRecord.objects.filter(item_id__in=ids).values_list("item_id", "stage"))
    found = {item.pk: ItemState(item, stages.get(item.pk, ""), needed=needed.get(item.pk, MIN_VERIFIERS))
             for item in items}
    for submission in _submissions(ids):
        data = submission.final_data or {}
        worker = submission.claim.worker
        found[submission.claim.item.benchmark_item_id].verdicts.append(Verdict(
            worker.pk, worker.get_username(), data, verdict_of(data), submission.submitted_at))
    return [found[item.pk] for item in items]


def state_of(item: BenchmarkItem) -> ItemState:
    return states([item])[0]


# --- Moving items on ------------------------------------------------------------------------------------

def _summary(state: ItemState) -> list[dict]:
    return [{"by": verdict.worker, "by_id": verdict.worker_id, ABOUT: verdict.data.get(ABOUT),
             ANSWER: verdict.data.get(ANSWER), CORRECTED: verdict.data.get(CORRECTED, ""),
             NOTES: verdict.data.get(NOTES, ""), "verdict": list(verdict.verdict)} for verdict in state.verdicts]


def _record(item_id: int) -> CurationRecord | None:
    return (CurationRecord.objects.select_for_update(of=("self",)).select_related("item__version__benchmark")
            .filter(item_id=item_id, item__version__benchmark__slug=SLUG).first())


def _write(record: CurationRecord, stage: str, **entries) -> None:
    working = dict(record.working or {})
    working[WORKING_KEY] = {**(working.get(WORKING_KEY) or {}), **entries}
    curation_stages.move(record, stage, working=working)


def _set_answer(record: CurationRecord, answer: str) -> dict:
    item = record.item
    before = item.payload["new_answer"]
    item.payload = {**item.payload, "new_answer": answer}
    item.save(update_fields=["payload"])
    return {"from": before, "to": answer}


def removed_version(version: BenchmarkVersion) -> BenchmarkVersion:
    """The never-frozen companion version of `version` that keeps its removed items (made when missing)."""
    label = version.label[:counterfactuals.LABEL_LENGTH - len(REMOVED_SUFFIX)] + REMOVED_SUFFIX
    found, _ = BenchmarkVersion.objects.get_or_create(
        benchmark=version.benchmark, label=label,
        defaults={"source": BenchmarkVersion.Source.CURATION,
                  "description": f"Counterfactual questions removed from {version.label} during verification, "
                                 "kept with their reasons (never frozen)."})
    return found


def _remove(record: CurationRecord, reason: str, note: str, by: str) -> None:
    item = record.item
    target = removed_version(item.version)
    external_id = item.external_id
    if target.items.filter(external_id=external_id).exists():
        external_id = f"{external_id}#{item.pk}"[:128]
    BenchmarkItem.objects.filter(pk=item.pk).update(version=target, external_id=external_id)
    _write(record, counterfactuals.REMOVED, removed={
        "reason": reason, "reason_text": REASONS.get(reason, reason), "note": note, "by": by,
        "from_version": item.version_id, "from_label": item.version.label, "at": timezone.now().isoformat()})


def resolve(item_id: int) -> str | None:
    """Move an item waiting for verification on once it has its verifiers' answers: agreed verdicts keep,
    correct or remove it, others put it up for adjudication. Returns the new stage, or None (still waiting,
    or no longer waiting)."""
    with transaction.atomic():
        record = _record(item_id)
        if record is None or record.item.version.frozen:
            return None
        if record.stage == counterfactuals.VERIFIED:
            return _recheck(record)
        if record.stage not in counterfactuals.UNVERIFIED:
            return None
        state = state_of(record.item)
        if state.outcome == WAITING:
            return None
        now = timezone.now().isoformat()
        verdicts = _summary(state)
        if state.outcome == DISAGREED:
            _write(record, counterfactuals.ADJUDICATION, verdicts=verdicts, outcome=DISAGREED, at=now)
            return counterfactuals.ADJUDICATION
        action, value = state.verdicts[0].verdict
        if action == REMOVE:
            _write(record, record.stage, verdicts=verdicts, outcome=AGREED, at=now)
            _remove(record, value, "", "the verifiers agreed")
            return counterfactuals.REMOVED
        entries = {"verdicts": verdicts, "outcome": AGREED, "at": now}
        if action == CORRECT:
            entries["corrected"] = _set_answer(record, value)
        _write(record, counterfactuals.VERIFIED, **entries)
        return counterfactuals.VERIFIED


def _recheck(record: CurationRecord) -> str | None:
    """A verified item whose verifiers agreed (no curator adjudicated it) goes to adjudication once the answers
    that count no longer all give the verdict they agreed on (a later answer, in a slot a rejection reopened)."""
    entry = (record.working or {}).get(WORKING_KEY) or {}
    if entry.get("outcome") != AGREED or "adjudication" in entry:
        return None
    agreed = {tuple(verdict.get("verdict") or ()) for verdict in entry.get("verdicts") or []}
    state = state_of(record.item)
    if not state.verdicts or {verdict.verdict for verdict in state.verdicts} == agreed:
        return None
    _write(record, counterfactuals.ADJUDICATION, verdicts=_summary(state), outcome=DISAGREED,
           at=timezone.now().isoformat())
    return counterfactuals.ADJUDICATION


def on_submitted(submission) -> None:
    if submission.claim.item.benchmark_item_id:
        resolve(submission.claim.item.benchmark_item_id)


def resolve_version(version: BenchmarkVersion) -> Counter:
    """Resolve every item of the version still waiting for verification; {new stage: count}."""
    ids = (CurationRecord.objects.filter(item__version=version, stage__in=counterfactuals.UNVERIFIED)
           .values_list("item_id", flat=True))
    moved = Counter(resolve(item_id) for item_id in list(ids))
    moved.pop(None, None)
    return moved


def adjudicate(user, item_id, decision: str, *, answer: str = "", reason: str = "", note: str = "") -> str:
    """A curator's decision on an item at stage `adjudication`: keep it, correct its answer, or remove it with
    a reason (a note is needed for `other`). The curator must not be one of its verifiers. Returns the new
    stage; VerificationError (nothing changed) for anything refused."""
    if user is None or not has_role(user, CURATOR, ADMIN):
        raise VerificationError("Only curators and admins adjudicate.", status=403)
    note = str(note or "").strip()
    with transaction.atomic():
        record = _record(item_id) if isinstance(item_id, int) else None
        if record is None or counterfactuals.WORKING_KEY not in (record.working or {}):
            raise VerificationError(f"There is no C-VQA counterfactual question #{item_id}.", status=404)
        if len(note) > MAX_NOTE:
            raise VerificationError(f"A note is at most {MAX_NOTE} characters.")
        if decision not in (KEEP, CORRECT, REMOVE):
            raise VerificationError(f"Decide keep, correct or remove, not {decision!r}.")
        if record.stage != counterfactuals.ADJUDICATION or record.item.version.frozen:
            raise VerificationError(f"{record.item.external_id} is at stage {record.stage!r}, not waiting for "
                                    "adjudication.", status=409)
        if user.pk in state_of(record.item).verifier_ids:
            raise VerificationError(f"You verified {record.item.external_id}: another curator adjudicates it.",
                                    status=403)
        decided = {"decision": decision, "by": user.get_username(), "by_id": user.pk, "note": note,
                   "at": timezone.now().isoformat()}
        if decision == REMOVE:
            if reason not in REASONS:
                raise VerificationError(f"Name the reason for removing it: one of {', '.join(REASONS)}.")
            if reason == OTHER and not note:
                raise VerificationError("Say in the note why it is removed.")
            _write(record, record.stage, adjudication={**decided, "reason": reason})
            _remove(record, reason, note, user.get_username())
            return counterfactuals.REMOVED
        if decision == CORRECT:
            try:
                answer = normal_answer(record.item.payload.get("type"), answer)
            except ValueError as exc:
                raise VerificationError(f"The corrected answer is not valid: {exc}.") from None
            if answer == str(record.item.payload["new_answer"]).lower():
                raise VerificationError("The corrected answer is the item's answer: keep it instead.")
            decided["corrected"] = _set_answer(record, answer)
        _write(record, counterfactuals.VERIFIED, adjudication=decided)
        return counterfactuals.VERIFIED


# --- People's decisions --------------------------------------------------------------------------------

def human_decisions(version: BenchmarkVersion) -> list[decisions.Decision]:
    """Every verifier's verdict that counts on the counterfactual items of `version` and the curators'
    adjudications (see the module docstring): keeping or correcting accepts an item, removing rejects it."""
    items = list(BenchmarkItem.objects.filter(version=version, curation__working__has_key=counterfactuals.WORKING_KEY)
                 .select_related("curation"))
    found = []
    for state in states(items):
        for verdict in state.verdicts:
            action, _value = verdict.verdict
            found.append(decisions.Decision(
                state.item.pk, QUESTION, decisions.REJECTED if action == REMOVE else decisions.ACCEPTED,
                "the C-VQA verification", verdict.submitted_at, by=verdict.worker, reason=verdict.text,
                action="removed" if action == REMOVE else ""))
        decided = ((state.item.curation.working or {}).get(WORKING_KEY) or {}).get("adjudication") or {}
        at = decisions.moment(decided.get("at"))
        if at is not None:
            removed = decided.get("decision") == REMOVE
            reason = REASONS.get(decided.get("reason"), "") if removed else ""
            found.append(decisions.Decision(
                state.item.pk, QUESTION, decisions.REJECTED if removed else decisions.ACCEPTED,
                "the C-VQA adjudication", at, by=decided.get("by", ""),
                reason="; ".join(text for text in (reason, decided.get("note", "")) if text),
                action="removed" if removed else ""))
    return found


# --- Studies -------------------------------------------------------------------------------------------

def _records():
    """The curation records of C-VQA counterfactual items."""
    return CurationRecord.objects.filter(item__version__benchmark__slug=SLUG,
                                         working__has_key=counterfactuals.WORKING_KEY)


def curation_version(ident) -> BenchmarkVersion:
    """The unfrozen C-VQA counterfactuals version `ident` (a version, its id or its label); VerificationError."""
    ident = getattr(ident, "pk", ident)
    found = BenchmarkVersion.objects.select_related("benchmark").filter(benchmark__slug=SLUG)
    if isinstance(ident, int) or str(ident).isdigit():
        version = found.filter(pk=int(ident)).first()
    else:
        version = found.filter(label=str(ident)).first()
    if version is None or not _records().filter(item__version=version).exists():
        raise VerificationError(f"There is no C-VQA counterfactuals version {ident!r}.", status=404)
    if version.frozen:
        raise VerificationError(f"Version {version} is frozen: its items are verified already.", status=409)
    if version.label.endswith(REMOVED_SUFFIX) and not _records().filter(
            item__version=version).exclude(stage=counterfactuals.REMOVED).exists():
        raise VerificationError(f"Version {version} keeps removed items: nothing in it is verified.")
    return version


def counterfactual_versions():
    """The unfrozen C-VQA versions holding counterfactual items under curation (not the removed ones)."""
    with_items = _records().exclude(stage=counterfactuals.REMOVED).values_list("item__version_id", flat=True)
    return BenchmarkVersion.objects.filter(pk__in=with_items, frozen=False).order_by("-created_at", "-pk")


def waiting_items(version: BenchmarkVersion, study: Study | None = None):
    """The version's items waiting for verification that no verification study holds (or not `study`)."""
    held = StudyItem.objects.filter(study__step_kind=STUDY_KIND, benchmark_item__isnull=False)
    if study is not None:
        held = held.filter(study=study)
    return (BenchmarkItem.objects.filter(version=version, curation__stage__in=counterfactuals.UNVERIFIED)
            .exclude(pk__in=held.values("benchmark_item_id")).prefetch_related("media__image").order_by("id"))


def item_row_of(item: BenchmarkItem) -> dict:
    image = next((use.image for use in item.media.all() if use.role == ROLE), None)
    payload = {key: item.payload[key] for key in ("query", "answer", "new_query", "new_answer", "type")}
    return {"external_id": item.external_id, "benchmark_item": item, "image": image, "payload": payload}


def _k(k) -> int:
    if not isinstance(k, int) or isinstance(k, bool) or k < MIN_VERIFIERS:
        raise VerificationError(f"Each item needs at least {MIN_VERIFIERS} verifiers.",
                                details={"annotators_per_item": f"at least {MIN_VERIFIERS}"})
    return k


def setup(created_by, settings: dict, *, with_rows: bool = True) -> StudySetup:
    """A new verification study: two verifiers per item, a rejected answer reopens its slot, no sampling
    for review, and (when it is given no items) the waiting items of its version (`output_version`)."""
    k = settings.get("annotators_per_item")
    made = {"annotators_per_item": _k(k) if k is not None else MIN_VERIFIERS, "count_accepted_only": True,
            "expert_share": 0.0, "expert_first": 0}
    if not with_rows:
        return StudySetup(settings=made)
    if settings.get("output_version") is None:
        raise VerificationError("Choose the C-VQA counterfactuals version to verify.",
                                details={"output_version": "required for a verification study"})
    version = curation_version(settings["output_version"])
    rows = [item_row_of(item) for item in waiting_items(version)]
    if not rows:
        raise VerificationError(f"No item of {version.label} waits for a verification study.", status=409)
    return StudySetup(settings=made, rows=rows)


def item_row(study: Study, row: dict) -> str | None:
    """Turn a row added to the study (`{"payload": {"counterfactual_item": <item id>}}`) into the item's row."""
    payload = row.get("payload") if isinstance(row.get("payload"), dict) else {}
    if set(payload) != {"counterfactual_item"} or row.get("video") is not None or row.get("image") is not None:
        return 'items of a verification study are counterfactual questions: {"payload": {"counterfactual_item": <id>}}'
    ident = payload["counterfactual_item"]
    item = (BenchmarkItem.objects.filter(pk=ident, version_id=study.output_version_id)
            .prefetch_related("media__image").first() if str(ident).isdigit() else None)
    if item is None or not hasattr(item, "curation") or item.curation.stage not in counterfactuals.UNVERIFIED:
        return f"item {ident} is not a counterfactual question of the study's version waiting for verification"
    if study.items.filter(benchmark_item=item).exists():
        return f"the study already has {item.external_id}"
    found = item_row_of(item)
    row.update(payload=found["payload"], benchmark_item=item, image=found["image"], external_id=item.external_id)
    return None


def create_verification_study(version, curator, *, k: int = MIN_VERIFIERS, name: str = "", slug: str | None = None,
                              open_now: bool = True, **study_fields) -> studies.NewStudy:
    """A verification study over the version's items waiting for verification that no study holds yet,
    `k` (≥ 2) verifiers each. Curators and admins only (403); VerificationError, creating nothing, otherwise."""
    if curator is None or not has_role(curator, CURATOR, ADMIN):
        raise VerificationError("Only curators and admins create verification studies.", status=403)
    version = curation_version(version)
    k = _k(k)
    rows = [item_row_of(item) for item in waiting_items(version)]
    if not rows:
        raise VerificationError(f"No item of {version.label} waits for a verification study (each is in one "
                                "already, or verified).", status=409)
    name = name or f"C-VQA verification: {version.label}, {len(rows)} question(s)"
    return studies.create_study(
        name=name[:studies.NAME_LENGTH], slug=slug, fallback_slug="cvqa-verification", created_by=curator,
        step_kind=STUDY_KIND, state=Study.State.OPEN if open_now else Study.State.DRAFT, annotators_per_item=k,
        instructions=study_fields.pop("instructions", INSTRUCTIONS), rows=rows, output_version=version,
        count_accepted_only=True, expert_share=0.0, expert_first=0, estimated_minutes=1, **study_fields)


def add_waiting(study: Study, user) -> list[StudyItem]:
    """Add to a verification study the items of its version that came since (proposed or written after it)."""
    if user is None or not has_role(user, CURATOR, ADMIN):
        raise VerificationError("Only curators and admins add items to verification studies.", status=403)
    if not is_verification(study) or study.output_version_id is None:
        raise VerificationError(f"{study.name} is not a C-VQA verification study.")
    rows = [item_row_of(item) for item in waiting_items(curation_version(study.output_version_id))]
    if not rows:
        raise VerificationError("No new item waits for verification.", status=409)
    return assignment.add_items(study, rows)


KIND = kinds.register(kinds.StudyKind(
    STUDY_KIND, readable, clean_answers, uses_form=False, fixed_form=FORM, setup=setup, output_benchmark=SLUG,
    item_rows=item_rows, item_row=item_row, on_submitted=on_submitted,
    pages=(("Verification and adjudication", "cvqa-verification-version-of-study"),)))
