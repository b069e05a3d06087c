"""Model proposals go to people: a review study of the crowd engine per set of proposals, and the
reviewers' answers recorded as decisions on the proposals (`generation.proposals.decide`).

- `create_review_study(proposals, user=..., name=...)`: curators and admins only. One study item
  per proposal, linked to it (`StudyItem.proposal`), for the proposals whose output parsed (status
  ok) and that nobody has decided or is reviewing in an unclosed study. Proposals whose output is
  malformed, empty or failed are **left out** of the study and returned with their reason: a
  reviewer never sees them as if they were valid. A curator corrects them (writes the fields by
  hand) or rejects them directly (`decide`, or the admin's "reject unparsed" action).
- The review form (`review_form`): `verdict` (accept / correct / reject) with its optional
  explanation `verdict_explanation`, which is the reason and is required to reject; and one
  free-text `corrected_<field>` per field of the task kind, empty to keep the proposed value and
  required (at least one) to correct. The item shows the inputs the task kind lets reviewers see
  (`input_<name>`) and the proposed fields (`proposed_<name>`); an input `video_id` or `image_id`
  shows that library media.
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
CORRECTED = "corrected_"
VERDICT_OPTIONS = [
    {"id": ProposalDecision.Verdict.ACCEPT, "text": "Accept: the proposal is right as it is"},
    {"id": ProposalDecision.Verdict.CORRECT, "text": "Correct: fill in the corrected fields below"},
    {"id": ProposalDecision.Verdict.REJECT, "text": "Reject: say why in the explanation"},
]


@dataclass
class ReviewStudy:
    study: Study
    items: list[StudyItem]
    excluded: dict[int, str] = field(default_factory=dict)  # proposal id -> why it is not in the study


def require_curator(user) -> None:
    if not has_role(user, CURATOR, ADMIN):
        raise PermissionDenied("Only curators and admins send proposals for review.")


def review_form(task: ProposalTask) -> dict:
    fields = [{"name": VERDICT, "type": "single_choice", "label": "Is the proposal right?",
               "options": VERDICT_OPTIONS, "explanation": "optional"}]
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
    return payload


def _media(proposal: Proposal) -> dict:
    media = {}
    for key, model, name in (("video_id", Video, "video"), ("image_id", Image, "image")):
        value = proposal.inputs.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            media[name] = model.objects.filter(pk=value).first()
    return media


def create_review_study(proposals, *, user, name: str, slug: str | None = None, reviewers_per_item: int = 1,
                        instructions: str = "", open_now: bool = True, **study_fields) -> ReviewStudy:
    """A review study over the proposals that are ready for review (see the module docstring)."""
    require_curator(user)
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
        name=name, slug=slug, fallback_slug="proposal-review", created_by=user, step_kind="form",
        form_schema=review_form(task), state=Study.State.OPEN if open_now else Study.State.DRAFT,
        annotators_per_item=reviewers_per_item, instructions=instructions or task.instructions,
        rows=[{"external_id": f"proposal-{proposal.pk}", "payload": item_payload(proposal, task),
               "proposal": proposal, **_media(proposal)} for proposal in ready],
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
    if verdict == ProposalDecision.Verdict.REJECT and not reason:
        raise ValueError("a rejection needs a reason")
    return verdict, None, reason


def apply_submission(submission: Submission) -> ProposalDecision:
    """The decision one submission of a review study makes (ProposalError or ValueError if none)."""
    claim = submission.claim
    proposal = claim.item.proposal
    if proposal is None:
        raise ProposalError("This study item reviews no proposal.")
    verdict, fields, reason = read_review(task_kind(proposal.task_kind), submission.final_data)
    return decide(proposal, claim.worker, verdict, fields=fields, reason=reason,
                  origin=ProposalDecision.Origin.REVIEW, decided_at=submission.submitted_at,
                  study_slug=claim.study.slug, submission_id=submission.pk)


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
