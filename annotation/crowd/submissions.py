"""Drafts and submissions of one claim."""

from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from annotation.crowd import assignment, forms, history, quality
from annotation.crowd.errors import ClaimNotActive, InvalidSubmission, NotYourClaim
from annotation.crowd.models import Claim, Draft, StudyItem, Submission

MAX_ACTIVE_SECONDS_PER_SAVE = 3600


def _own(claim: Claim, worker) -> None:
    if claim.worker_id != worker.pk:
        raise NotYourClaim("This item is not assigned to you.")


def save_draft(claim: Claim, worker, data: dict, *, active_seconds: float = 0) -> Draft:
    """Store the form as it stands; a later save wins. Keeps the lease alive."""
    _own(claim, worker)
    if claim.status != Claim.Status.ACTIVE:
        raise ClaimNotActive(f"This item is {claim.get_status_display().lower()}; it can no longer change.")
    if not isinstance(data, dict):
        raise InvalidSubmission("A draft must be a JSON object.")
    active = max(0.0, min(float(active_seconds or 0), MAX_ACTIVE_SECONDS_PER_SAVE))
    with transaction.atomic():
        draft, _ = Draft.objects.get_or_create(claim=claim)
        Draft.objects.filter(pk=draft.pk).update(
            data=data, revision=F("revision") + 1, active_seconds=F("active_seconds") + active,
            updated_at=timezone.now(),
        )
        assignment.extend_lease(claim)
    draft.refresh_from_db()
    return draft


def submit(claim: Claim, worker, data: dict, *, active_seconds: float = 0) -> tuple[Submission, bool, dict]:
    """Final submission. Returns (submission, created, feedback); a repeated submit returns the first."""
    _own(claim, worker)
    existing = Submission.objects.filter(claim=claim).first()
    if existing is not None:
        return existing, False, {}
    claim.refresh_from_db()
    if claim.status != Claim.Status.ACTIVE:
        raise ClaimNotActive(f"This item is {claim.get_status_display().lower()}; it can no longer be submitted.")
    clean = forms.validate(claim.study.form_schema, claim.item.payload, data)
    draft = Draft.objects.filter(claim=claim).first()
    active = (draft.active_seconds if draft else 0.0) + max(0.0, min(float(active_seconds or 0),
                                                                      MAX_ACTIVE_SECONDS_PER_SAVE))
    now = timezone.now()
    try:
        with transaction.atomic():
            moved = Claim.objects.filter(pk=claim.pk, status=Claim.Status.ACTIVE).update(
                status=Claim.Status.SUBMITTED, finished_at=now
            )
            if not moved:
                raise ClaimNotActive("This item can no longer be submitted.")
            claim.status, claim.finished_at = Claim.Status.SUBMITTED, now
            submission = Submission.objects.create(
                claim=claim, data=clean, active_seconds=active,
                wall_seconds=(now - claim.claimed_at).total_seconds(),
            )
            StudyItem.objects.filter(pk=claim.item_id).update(completed_count=F("completed_count") + 1)
            history.record("claim", claim.pk, Claim.Status.ACTIVE, Claim.Status.SUBMITTED, actor=worker,
                           study=claim.study)
            history.record("submission", submission.pk, "", submission.review_state, actor=worker, study=claim.study)
            feedback = quality.after_submission(submission)
    except IntegrityError:
        # a concurrent identical submit won the race
        return Submission.objects.get(claim=claim), False, {}
    return submission, True, feedback
