"""The CVRR-ES filtration study (seeds/003 §3.2 Stage 3; SPEC §4 "Curation" 4): people keep, fix or
remove each proposed QA pair.

A filtration study is a proposal review study (`annotation.crowd.proposal_review`) of kind
`cvrr_filtration` (`FILTRATION`) over `cvrr_qa` proposals: one item per pair, showing the video,
the caption, the dimension with its description, the pair and the automatic flag (the question
contains its answer). Its form is the kind's own (`FORM`, the review form of the `cvrr_qa` kind):
keep / fix / remove, the reason (one of `qa_generation.REASONS`: required to remove, optional with a
fix) and the corrected question, answer and question kind. The kind checks the answers on submit (`clean_answers`): a
removal without its reason, a fix that changes nothing or a keep that carries changes is refused
with 400 and a message per field.

- `create_filtration_study(proposals, curator=…)`: curators and admins; pairs whose output parsed and
  that nobody decided or is reviewing (the others are left out, with the reason).
- `record_decisions(study, user=…)`: each new submission becomes the worker's decision on the
  proposal (`proposal_review.apply_review_submissions`); kept or fixed pairs join the QA pool and
  removed ones leave it (`qa_pool.apply_outcome`).
- `return_to_filtration(item, reason, by)`: a kept pair sent back (by experts who found its answer
  wrong) goes to stage `stages.RETURNED` and becomes reviewable again, as a new item for its
  proposal in the open study of returned pairs (`RETURNS_NAME`, made when there is none); that
  study's decisions settle the pair again (the latest review round counts).
"""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from annotation.benchmarks.cvrr import qa_generation, qa_pool, stages
from annotation.crowd import answers, assignment, forms, kinds, proposal_review
from annotation.crowd.errors import CrowdError, InvalidSubmission
from annotation.crowd.models import Study, StudyItem
from annotation.crowd.studies import create_study
from annotation.models import BenchmarkItem
from config.roles import ADMIN, CURATOR, has_role
from generation.models import Proposal

STUDY_KIND = "cvrr_filtration"
RETURNS_NAME = "CVRR-ES filtration: pairs sent back"
TASK = qa_generation.QA_TASK
FIELDS = tuple(spec.name for spec in TASK.fields)


def clean_answers(schema: dict, payload: dict, data) -> dict:
    """The answers, cleaned; InvalidSubmission (400) with a message per field when they do not make a
    keep, a fix or a removal with its reason."""
    clean = forms.validate(schema, payload, data)
    verdict = clean.get(proposal_review.VERDICT)
    try:
        _verdict, fields, _reason = proposal_review.read_review(TASK, clean)
    except ValueError as exc:
        raise InvalidSubmission("These answers make no decision.", details={proposal_review.VERDICT: str(exc)}) \
            from None
    try:
        proposal_review.read_criterion(TASK, verdict, clean)
    except ValueError as exc:
        raise InvalidSubmission(str(exc), details={proposal_review.CRITERION: str(exc)}) from None
    if fields is not None and all(fields[name] == (payload or {}).get(f"proposed_{name}") for name in fields):
        message = "the fix changes nothing: keep the pair instead, or change its text"
        raise InvalidSubmission("The fix changes nothing.", details={proposal_review.VERDICT: message})
    return clean


FORM = proposal_review.review_form(TASK)
FILTRATION = kinds.register(kinds.StudyKind(STUDY_KIND, answers.format_answers, clean_answers, uses_form=False,
                                            fixed_form=FORM))


def require_curator(user) -> None:
    if user is None or not has_role(user, CURATOR, ADMIN):
        raise CrowdError("Only curators and admins manage the filtration.", status=403)


def create_filtration_study(proposals, *, curator, name: str = "", slug: str | None = None, k: int = 1,
                            open_now: bool = True, **study_fields) -> proposal_review.ReviewStudy:
    """A filtration study over these `cvrr_qa` proposals (see the module docstring), `k` reviewers per pair."""
    require_curator(curator)
    proposals = list(proposals)
    other = sorted({p.task_kind for p in proposals} - {TASK.name})
    if other:
        raise CrowdError(f"A filtration study holds CVRR-ES QA pairs only, not {', '.join(other)}.")
    return proposal_review.create_review_study(
        proposals, curator=curator, name=name or "CVRR-ES QA filtration", slug=slug, k=k,
        open_now=open_now, step_kind=STUDY_KIND, **study_fields)


def is_filtration(study: Study) -> bool:
    return study.step_kind == STUDY_KIND


def record_decisions(study: Study, *, user) -> dict:
    """Every new submission of a filtration study recorded as a decision (`apply_review_submissions`)."""
    require_curator(user)
    if not is_filtration(study):
        raise CrowdError(f"Study {study.slug} is not a CVRR-ES filtration study.")
    return proposal_review.apply_review_submissions(study, user=user)


def studies():
    return Study.objects.filter(step_kind=STUDY_KIND).order_by("-created_at")


# --- Pairs sent back --------------------------------------------------------------------------------

def _under_review(proposal: Proposal) -> bool:
    """Whether an unclosed study still has a place for a new review of this proposal."""
    return StudyItem.objects.filter(proposal=proposal, open_slots__gt=0).exclude(
        study__state=Study.State.CLOSED).exists()


def _return_row(proposal: Proposal, record, reason: str, number: int) -> dict:
    [row] = proposal_review.review_rows([proposal])
    payload = dict(row["payload"])
    kept = {name: (record.item.payload or {}).get(name) for name in FIELDS}
    for name in FIELDS:
        if kept[name] != proposal.fields.get(name):
            payload[f"kept_{name}"] = kept[name]
    payload["sent_back_because"] = reason
    return {**row, "external_id": f"proposal-{proposal.pk}-return-{number}", "payload": payload}


def return_to_filtration(item: BenchmarkItem, reason: str, by) -> StudyItem | None:
    """Send a kept pair back to the filtration queue (see the module docstring): its stage becomes
    `stages.RETURNED` and a new item of the returned-pairs study reviews its proposal again. Returns that
    study item (None when the proposal already waits for a review in an open study). CrowdError for an
    item that is no kept pair, a frozen version or a missing reason; the caller checks who may send back."""
    reason = (reason or "").strip()
    if not reason:
        raise CrowdError("Say why the pair goes back to filtration.", details={"reason": "required"})
    if by is None or not by.pk:
        raise CrowdError("Sending a pair back needs the person who does it.")
    with transaction.atomic():
        record = qa_pool.record_of_item(item.pk, lock=True)
        if record is None:
            raise CrowdError(f"Item #{item.pk} is no CVRR-ES QA pair kept in filtration.", status=404)
        if record.item.version.frozen:
            raise CrowdError(f"Version {record.item.version} is frozen: its pairs cannot go back to filtration.",
                             status=409)
        proposal = Proposal.objects.filter(pk=(record.working.get("source") or {}).get("proposal")).first()
        if proposal is None:
            raise CrowdError(f"Item #{item.pk} came from no proposal that can be reviewed again.", status=409)
        qa_pool.mark_returned(record, reason, by, timezone.now())
        if _under_review(proposal):
            return None
        row = _return_row(proposal, record, reason, StudyItem.objects.filter(proposal=proposal).count() + 1)
        study = returns_study()
        if study is not None:
            [added] = assignment.add_items(study, [row])
            return added
        made = create_study(name=RETURNS_NAME, fallback_slug="cvrr-filtration-returned", created_by=by,
                            step_kind=STUDY_KIND, form_schema=FORM,
                            state=Study.State.OPEN, instructions=TASK.instructions, annotators_per_item=1,
                            expert_share=0.0, expert_first=0, gold_share=0.0, rows=[row],
                            history_reason="CVRR-ES pairs sent back to filtration")
        return made.items[0]


def returns_study() -> Study | None:
    """The open (or draft, or paused) study of pairs sent back to filtration, if any."""
    return studies().filter(name=RETURNS_NAME).exclude(state=Study.State.CLOSED).first()


def returned_pairs():
    """The curation records of pairs sent back to filtration and not settled again yet."""
    return qa_pool.records().filter(stage=stages.RETURNED)
