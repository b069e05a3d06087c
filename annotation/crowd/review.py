"""Curators' decisions on submitted work."""

from django.db import transaction
from django.db.models import Count, F, Q
from django.utils import timezone

from annotation.crowd import kinds, quality
from annotation.crowd.errors import CrowdError
from annotation.crowd.models import Claim, Study, StudyItem, Submission
from config import state

# each review queue: the submissions' `review_queue` values it holds (None: every submission)
QUEUE_MEMBERS = {"expert_sample": ("expert_sample",), "gold": ("gold", "attention"), "all": None}
QUEUES = {name: Q(review_queue__in=members) if members else Q() for name, members in QUEUE_MEMBERS.items()}
STATES = {"pending": Q(claim__status=Claim.Status.SUBMITTED), "approved": Q(claim__status=Claim.Status.APPROVED),
          "rejected": Q(claim__status=Claim.Status.REJECTED)}


def queue(study: Study, name: str = "all", state: str = "pending"):
    if name not in QUEUES or (state and state not in STATES):
        raise CrowdError(f"Unknown queue {name!r} or state {state!r}.")
    submissions = Submission.objects.filter(claim__study=study).filter(QUEUES[name])
    if state:
        submissions = submissions.filter(STATES[state])
    return submissions.select_related("claim__item", "claim__worker", "reviewed_by").order_by("submitted_at")


def queues_of(submission: Submission) -> list[str]:
    """The review queues a submission is listed in."""
    return [name for name, members in QUEUE_MEMBERS.items() if members is None or submission.review_queue in members]


def queue_counts(study: Study) -> dict:
    base = Submission.objects.filter(claim__study=study)
    counts = {}
    for name, condition in QUEUES.items():
        counts[name] = base.filter(condition).aggregate(**{
            state: Count("pk", filter=cond) for state, cond in STATES.items()
        })
    return counts


def rejection_problem(study: Study, approve: bool, reason: str = "", criterion: str = "") -> str | None:
    """What is wrong with deciding so on the study's work, or None. A kind that names its rejection
    criteria (`StudyKind.rejection_criteria`) needs one of them for each rejection (the reason is then
    an optional note); other kinds need a reason and take no criterion."""
    kind = kinds.of(study)
    criterion = (criterion or "").strip()
    if approve:
        return "Only a rejection names a criterion." if criterion else None
    if kind.rejection_criteria:
        known = [value for value, _label in kind.rejection_criteria]
        labels = ", ".join(label for _value, label in kind.rejection_criteria)
        if not criterion:
            return f"A rejection in this study names the criterion it fails: one of {labels}."
        if criterion not in known:
            return f"Unknown criterion {criterion!r}; choose one of {', '.join(known)}."
        return None
    if criterion:
        return "Rejections in this study name no criterion; give a reason."
    return None if reason.strip() else "A rejection needs a reason."


def _history_reason(study: Study, reason: str, criterion: str, edited: bool) -> str:
    if criterion:
        label = kinds.of(study).criterion_label(criterion)
        return f"{label}: {reason}" if reason.strip() else label
    return reason or ("edited and approved" if edited else "")


def _decide(submission: Submission, reviewer, approve: bool, reason: str = "", edited: dict | None = None,
            criterion: str = ""):
    claim = Claim.objects.select_related("study", "item", "worker").get(pk=submission.claim_id)
    if claim.status != Claim.Status.SUBMITTED:
        raise CrowdError(f"This submission was already {claim.get_status_display().lower()}.", status=409)
    study = claim.study
    criterion = (criterion or "").strip()
    problem = rejection_problem(study, approve, reason, criterion)
    if problem:
        raise CrowdError(problem)
    kind = kinds.of(study)
    new_status = Claim.Status.APPROVED if approve else Claim.Status.REJECTED
    history_reason = _history_reason(study, reason, criterion, edited is not None)
    with transaction.atomic():
        try:
            state.transition(claim, new_status, reviewer, history_reason, scope=study)
        except state.TransitionRefused:
            raise CrowdError("This submission was decided meanwhile.", status=409) from None
        reviewed_data = (kind.validate(study.form_schema, claim.item.payload, edited)
                         if edited is not None else submission.reviewed_data)
        state.transition(submission, Submission.Review.APPROVED if approve else Submission.Review.REJECTED,
                         reviewer, history_reason if criterion else reason, scope=study, reviewed_data=reviewed_data,
                         reviewed_by=reviewer, reviewed_at=timezone.now(), review_reason=reason,
                         review_criterion=criterion)
        if approve and kind.on_approved is not None:
            submission.claim = claim
            kind.on_approved(submission)
        if not approve and study.count_accepted_only:
            StudyItem.objects.filter(pk=claim.item_id).update(
                open_slots=F("open_slots") + 1, completed_count=F("completed_count") - 1)
    if submission.review_queue == "expert_sample":
        quality.apply_expert_threshold(study, claim.worker, actor=reviewer)
    return submission


def approve(submission: Submission, reviewer, *, edited: dict | None = None, reason: str = "") -> Submission:
    return _decide(submission, reviewer, True, reason=reason, edited=edited)


def reject(submission: Submission, reviewer, *, reason: str = "", criterion: str = "") -> Submission:
    return _decide(submission, reviewer, False, reason=reason, criterion=criterion)


def bulk(submissions, reviewer, *, action: str, reason: str = "", criterion: str = "") -> dict:
    """Approve or reject many (a rejection with the same reason and criterion for all); each decision
    stands alone, failures are reported, not fatal."""
    done, failed = [], {}
    for submission in submissions:
        try:
            if action == "approve":
                approve(submission, reviewer, reason=reason)
            elif action == "reject":
                reject(submission, reviewer, reason=reason, criterion=criterion)
            else:
                raise CrowdError(f"Unknown action {action!r}.")
            done.append(submission.pk)
        except CrowdError as exc:
            failed[submission.pk] = exc.message
    return {"done": done, "failed": failed}
