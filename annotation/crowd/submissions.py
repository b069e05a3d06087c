"""Drafts and submissions of one claim."""

from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from annotation.crowd import assignment, forms, history, quality
from annotation.crowd.errors import ClaimNotActive, InvalidSubmission, NotYourClaim
from annotation.crowd.models import Claim, Draft, StudyItem, Submission

MAX_ACTIVE_SECONDS_PER_SAVE = 3600
CLAIM_COLUMNS = [f.attname for f in Claim._meta.concrete_fields if not f.is_relation and not f.primary_key]


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
        # the first save inserts the draft as revision 1; later ones update it
        draft, created = Draft.objects.get_or_create(
            claim=claim, defaults={"data": data, "revision": 1, "active_seconds": active})
        if not created:
            Draft.objects.filter(pk=draft.pk).update(
                data=data, revision=F("revision") + 1, active_seconds=F("active_seconds") + active,
                updated_at=timezone.now(),
            )
        assignment.extend_lease(claim)
    if not created:
        draft.refresh_from_db()
    return draft


def submit(claim: Claim, worker, data: dict, *, active_seconds: float = 0) -> tuple[Submission, bool, dict]:
    """Final submission. Returns (submission, created, feedback); a repeated submit returns the first."""
    _own(claim, worker)
    # the claim's own columns only: its study, item and worker never change, and stay loaded
    claim.refresh_from_db(fields=CLAIM_COLUMNS)
    if claim.status != Claim.Status.ACTIVE:
        # the submission is made in the transaction that ends the claim: only an ended claim can have one
        existing = Submission.objects.filter(claim=claim).first()
        if existing is not None:
            return existing, False, {}
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
                # A concurrent submit of the same claim got there first: answer as a repeat would.
                first = Submission.objects.filter(claim=claim).first()
                if first is not None:
                    return first, False, {}
                raise ClaimNotActive("This item can no longer be submitted.")
            claim.status, claim.finished_at = Claim.Status.SUBMITTED, now
            submission = Submission.objects.create(
                claim=claim, data=clean, active_seconds=active,
                wall_seconds=(now - claim.claimed_at).total_seconds(),
            )
            StudyItem.objects.filter(pk=claim.item_id).update(completed_count=F("completed_count") + 1)
            history.record("claim", claim.pk, Claim.Status.ACTIVE, Claim.Status.SUBMITTED, actor=worker,
                           study=claim.study)
            if not Claim.worker.is_cached(claim):
                claim.worker = worker  # the same account (checked above), so the checks need not load it
            feedback = quality.after_submission(submission)
            # recorded after the checks, which may have sent it to a review queue (state "pending")
            history.record("submission", submission.pk, "", submission.review_state, actor=worker, study=claim.study)
    except IntegrityError:
        # a concurrent identical submit won the race
        return Submission.objects.get(claim=claim), False, {}
    return submission, True, feedback
