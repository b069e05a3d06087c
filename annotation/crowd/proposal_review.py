"""Model proposals go to people: a review study of the crowd engine per set of proposals, and the
reviewers' answers recorded as decisions on the proposals (`generation.proposals.decide`).

- `create_review_study(proposals, curator=..., name=...)`: curators and admins only. One study item
  per proposal, linked to it (`StudyItem.proposal`), for the proposals whose output parsed (status
  ok) and that nobody has decided or is reviewing in an unclosed study. Proposals whose output is
  malformed, empty or failed are **left out** of the study and returned with their reason: a
  reviewer never sees them as if they were valid. A curator corrects them (writes the fields by
  hand) or rejects them directly (`decide`, or the admin's "reject unparsed" action).
- The review form (`review_form`): `verdict` (accept / correct / reject, worded by the kind's
  `verdict_labels`) with its optional explanation `verdict_explanation`, which is the reason and is
  required to reject; for a kind with `rejection_reasons`, an optional choice `reason` among them
  (required to reject, allowed with a correction); and one free-text `corrected_<field>` per field
  of the task kind, empty to keep the proposed value and required (at least one) to correct. The
  item shows the inputs the task kind lets reviewers see (`input_<name>`), the proposed fields
  (`proposed_<name>`) and the kind's automatic flags (`flags`, when there are any); an input
  `video_id` or `image_id` shows that library media.
- A study may use a registered study kind (`step_kind`) that checks the answers on submit
  (`check_answers` does the checks `apply_submission` does, without deciding). `review_rows` makes
  the items of proposals for a study made elsewhere (e.g. one that reviews settled proposals again).
- `apply_review_submissions(study)`: each submission becomes one decision by its worker at the time
  it was submitted, exactly once (decisions are unique per submission). Submissions waiting for an
  expert's review wait; rejected ones are skipped. A submission whose answers do not make a valid
  decision (a rejection without a reason, a correction that changes nothing or is not valid for the
  kind) is reported and left undecided: a curator rejects that submission in the study's review
  queue, which frees its place for another reviewer.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.core.exceptions import PermissionDenied
from django.db import IntegrityError

from annotation.crowd import studies
from annotation.crowd.errors import CrowdError
from annotation.crowd.models import Claim, Study, StudyItem, Submission
from annotation.models import Image, Video
from config.roles import ADMIN, CURATOR, has_role
from generation.models import Proposal, ProposalDecision
from generation.proposals import ProposalError, ProposalTask, decide, task_kind

VERDICT = "verdict"
REASON = f"{VERDICT}_explanation"
CRITERION = "reason"
CORRECTED = "corrected_"
VERDICT_HINTS = {
    ProposalDecision.Verdict.ACCEPT: "the proposal is right as it is",
    ProposalDecision.Verdict.CORRECT: "fill in the corrected fields below",
    ProposalDecision.Verdict.REJECT: "say why in the explanation",
}
VERDICT_OPTIONS = [{"id": verdict, "text": f"{verdict.label}: {hint}"} for verdict, hint in VERDICT_HINTS.items()]


@dataclass
class ReviewStudy:
    study: Study
    items: list[StudyItem]
    excluded: dict[int, str] = field(default_factory=dict)  # proposal id -> why it is not in the study


def require_curator(user) -> None:
    if not has_role(user, CURATOR, ADMIN):
        raise PermissionDenied("Only curators and admins send proposals for review.")


def _verdict_options(task: ProposalTask) -> list[dict]:
    if not task.verdict_labels:
        return VERDICT_OPTIONS
    hints = {**VERDICT_HINTS, ProposalDecision.Verdict.REJECT: "name the reason below"} \
        if task.rejection_reasons else VERDICT_HINTS
    return [{"id": verdict, "text": f"{task.verdict_label(verdict)}: {hint}"} for verdict, hint in hints.items()]


def review_form(task: ProposalTask) -> dict:
    fields = [{"name": VERDICT, "type": "single_choice", "label": "Is the proposal right?",
               "options": _verdict_options(task), "explanation": "optional"}]
    if task.rejection_reasons:
        reject, correct = (task.verdict_label(v).lower() for v in (ProposalDecision.Verdict.REJECT,
                                                                  ProposalDecision.Verdict.CORRECT))
        fields.append({"name": CRITERION, "type": "single_choice", "required": False,
                       "label": f"Reason (required to {reject}; to {correct}, optional: what you fixed)",
                       "options": [{"id": value, "text": label} for value, label in task.rejection_reasons]})
    for spec in task.fields:
        hint = f" (one of: {', '.join(spec.choices)})" if spec.type == "choice" else (
            " (true or false)" if spec.type == "boolean" else " (a whole number)" if spec.type == "integer" else "")
        fields.append({"name": f"{CORRECTED}{spec.name}", "type": "free_text", "min_length": 0,
                       "max_length": spec.max_length,
                       "label": f"Corrected {spec.title}{hint}: leave empty to keep the proposed value"})
    return {"fields": fields}


def item_payload(proposal: Proposal, task: ProposalTask) -> dict:
    payload = {"task": task.label}
    payload.update({f"input_{key}": value for key, value in task.shown_inputs(proposal.inputs).items()})
    payload.update({f"proposed_{name}": proposal.fields.get(name) for name in task.field_names})
    flags = task.flags_for(proposal.fields, proposal.inputs)
    if flags:
        payload["flags"] = flags
    return payload


def _media(proposal: Proposal) -> dict:
    media = {}
    for key, model, name in (("video_id", Video, "video"), ("image_id", Image, "image")):
        value = proposal.inputs.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            media[name] = model.objects.filter(pk=value).first()
    return media


def review_rows(proposals) -> list[dict]:
    """Study item rows, one per proposal (all of one task kind), as `assignment.add_items` takes them."""
    rows = []
    for proposal in proposals:
        task = task_kind(proposal.task_kind)
        rows.append({"external_id": f"proposal-{proposal.pk}", "payload": item_payload(proposal, task),
                     "proposal": proposal, **_media(proposal)})
    return rows


def create_review_study(proposals, *, curator, name: str, slug: str | None = None, k: int = 1,
                        instructions: str = "", open_now: bool = True, step_kind: str = "form",
                        **study_fields) -> ReviewStudy:
    """A review study over the proposals that are ready for review (see the module docstring), `k` reviewers
    per proposal."""
    require_curator(curator)
    proposals = list(proposals)
    kinds = {proposal.task_kind for proposal in proposals}
    if len(kinds) != 1:
        raise CrowdError("A review study covers proposals of one task kind: "
                         f"got {', '.join(sorted(kinds)) or 'none'}.")
    task = task_kind(kinds.pop())
    reviewing = dict(StudyItem.objects.filter(proposal__in=proposals).exclude(study__state=Study.State.CLOSED)
                     .values_list("proposal_id", "study__slug"))
    ready, excluded = [], {}
    for proposal in proposals:
        if proposal.status != Proposal.Status.OK:
            excluded[proposal.pk] = f"output {proposal.status}: {proposal.parse_error}".rstrip(": ")
        elif proposal.outcome != Proposal.Outcome.UNDECIDED:
            excluded[proposal.pk] = f"already {proposal.outcome}"
        elif proposal.pk in reviewing:
            excluded[proposal.pk] = f"already under review in {reviewing[proposal.pk]}"
        else:
            ready.append(proposal)
    if not ready:
        raise CrowdError("None of these proposals is ready for review.", details=excluded)
    study_fields = {"expert_share": 0.0, "expert_first": 0, "gold_share": 0.0, **study_fields}
    made = studies.create_study(
        name=name, slug=slug, fallback_slug="proposal-review", created_by=curator, step_kind=step_kind,
        form_schema=review_form(task), state=Study.State.OPEN if open_now else Study.State.DRAFT,
        annotators_per_item=k, instructions=instructions or task.instructions,
        rows=review_rows(ready),
        history_reason=f"review of {len(ready)} {task.name} proposal(s); {len(excluded)} left out",
        **study_fields)
    return ReviewStudy(study=made.study, items=made.items, excluded=excluded)


def read_review(task: ProposalTask, data: dict) -> tuple[str, dict | None, str]:
    """(verdict, corrected fields or None, reason) from a reviewer's answers; ValueError if they
    do not make a decision."""
    verdict = data.get(VERDICT)
    if verdict not in ProposalDecision.Verdict.values:
        raise ValueError(f"unknown verdict {verdict!r}")
    reason = str(data.get(REASON) or "").strip()
    corrections = {}
    for spec in task.fields:
        text = str(data.get(f"{CORRECTED}{spec.name}") or "").strip()
        if text:
            corrections[spec.name] = spec.from_text(text)
    if verdict == ProposalDecision.Verdict.CORRECT:
        if not corrections:
            raise ValueError("the verdict is 'correct' but no corrected field was filled in")
        return verdict, corrections, reason
    if corrections:
        raise ValueError(f"corrected fields were filled in, but the verdict is {verdict!r}")
    if verdict == ProposalDecision.Verdict.REJECT and not reason and not task.rejection_reasons:
        raise ValueError("a rejection needs a reason")
    return verdict, None, reason


def read_criterion(task: ProposalTask, verdict: str, data: dict) -> str:
    """The reason a reviewer named (see `ProposalTask.check_criterion`); ValueError if it is missing
    where the kind needs one, or not one of the kind's."""
    try:
        return task.check_criterion(verdict, str(data.get(CRITERION) or ""))
    except ProposalError as exc:
        raise ValueError(str(exc)) from None


def check_answers(task: ProposalTask, data: dict) -> None:
    """ValueError when a reviewer's answers do not make a decision of this kind (without deciding)."""
    verdict, _fields, _reason = read_review(task, data)
    read_criterion(task, verdict, data)


def apply_submission(submission: Submission) -> ProposalDecision:
    """The decision one submission of a review study makes (ProposalError or ValueError if none)."""
    claim = submission.claim
    proposal = claim.item.proposal
    if proposal is None:
        raise ProposalError("This study item reviews no proposal.")
    task = task_kind(proposal.task_kind)
    verdict, fields, reason = read_review(task, submission.final_data)
    criterion = read_criterion(task, verdict, submission.final_data)
    return decide(proposal, claim.worker, verdict, fields=fields, reason=reason, criterion=criterion,
                  origin=ProposalDecision.Origin.REVIEW, decided_at=submission.submitted_at,
                  study_slug=claim.study.slug, submission_id=submission.pk, review_item_id=claim.item_id)


def apply_review_submissions(study: Study, *, user=None) -> dict:
    """Record every new submission of a review study as a decision (see the module docstring).

    Returns {"applied": [decision ids], "already": n, "waiting": [submission ids],
    "skipped": [submission ids rejected in review], "invalid": {submission id: why}}.
    """
    if user is not None:
        require_curator(user)
    submissions = (Submission.objects.filter(claim__study=study, claim__item__proposal__isnull=False)
                   .select_related("claim__item__proposal", "claim__worker", "claim__study")
                   .order_by("submitted_at", "pk"))
    decided = set(ProposalDecision.objects.filter(submission_id__in=submissions.values("pk"))
                  .values_list("submission_id", flat=True))
    report = {"applied": [], "already": 0, "waiting": [], "skipped": [], "invalid": {}}
    for submission in submissions:
        if submission.pk in decided:
            report["already"] += 1
        elif submission.claim.status == Claim.Status.REJECTED:
            report["skipped"].append(submission.pk)
        elif submission.review_state == Submission.Review.PENDING:
            report["waiting"].append(submission.pk)
        else:
            try:
                report["applied"].append(apply_submission(submission).pk)
            except IntegrityError:
                report["already"] += 1  # applied by a concurrent call meanwhile
            except ValueError as exc:  # ProposalError included
                report["invalid"][submission.pk] = str(exc)
    return report
