"""Drafts and submissions of one claim.

Both run on every answer a worker gives, so they speak SQL through `rows`: a draft save is two
statements (lease, upsert), a submission four (claim, submission, item count, history) after
one read for expert sampling.
"""

import json
from datetime import timedelta
from functools import cache

from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation.crowd import assignment, forms, history, kinds, quality, rows
from annotation.crowd.errors import CrowdError, InvalidSubmission, NotYourClaim
from annotation.crowd.models import Claim, Draft, Study, StudyItem, Submission

MAX_ACTIVE_SECONDS_PER_SAVE = 3600
MAX_DRAFT_BYTES = 64 * 1024  # a form's answers as JSON; free-text fields hold 2,000 characters by default


def _own(claim: Claim, worker) -> None:
    if claim.worker_id != worker.pk:
        raise NotYourClaim(_("This item is not assigned to you."))


def _active_seconds(value) -> float:
    return max(0.0, min(float(value or 0), MAX_ACTIVE_SECONDS_PER_SAVE))


@cache
def _load_claim_sql() -> str:
    c, s, i, d = (rows.select_list(Claim, "c"), rows.select_list(Study, "s"), rows.select_list(StudyItem, "i"),
                  rows.select_list(Draft, "d"))
    return (f"SELECT {c}, {s}, {i}, {d} FROM {rows.table(Claim)} c"
            f" JOIN {rows.table(Study)} s ON s.id = c.study_id JOIN {rows.table(StudyItem)} i ON i.id = c.item_id"
            f" LEFT JOIN {rows.table(Draft)} d ON d.claim_id = c.id WHERE c.id = %s")


def load_claim(pk) -> Claim | None:
    """A claim with its study, item and draft (None when there is none yet), in one read."""
    found = rows.execute(_load_claim_sql(), [pk])
    if not found:
        return None
    claim, study, item, draft = rows.build_many(found[0], Claim, Study, StudyItem, Draft)
    claim.study, claim.item = study, item
    Claim.draft.related.set_cached_value(claim, draft)
    return claim


def _draft_problems(schema: dict, data) -> None:
    if not isinstance(data, dict):
        raise InvalidSubmission(_("A draft must be a JSON object."))
    size = len(json.dumps(data, ensure_ascii=False).encode())
    if size > MAX_DRAFT_BYTES:
        raise CrowdError(_("This draft is too large (%(size)s KB); a draft holds at most %(limit)s KB.")
                         % {"size": size // 1024 + 1, "limit": MAX_DRAFT_BYTES // 1024}, status=413)
    unknown = forms.unknown_fields(schema, data)
    if unknown:
        raise InvalidSubmission(_("This draft has fields the form does not have."), details=unknown)


def save_draft(claim: Claim, worker, data: dict, *, active_seconds: float = 0) -> Draft:
    """Store the form as it stands; a later save wins. Keeps the lease alive while it lasts: a draft
    on a claim whose lease ran out is refused (409) and renews nothing."""
    _own(claim, worker)
    _draft_problems(claim.study.form_schema, data)
    now = timezone.now()
    if claim.status != Claim.Status.ACTIVE or assignment.lease_ran_out(claim, now):
        raise assignment.refusal(claim, assignment.CHANGE, now=now)
    active = _active_seconds(active_seconds)
    draft_table = rows.table(Draft)
    with transaction.atomic():
        extended = _extend_lease(claim, now)
        if extended:
            # the first save inserts the draft as revision 1; later ones update it
            revision, updated_at, total = rows.execute(
                f"INSERT INTO {draft_table} (claim_id, data, revision, active_seconds, updated_at)"
                f" VALUES (%s, %s, 1, %s, %s) ON CONFLICT (claim_id) DO UPDATE SET data = excluded.data,"
                f" revision = {draft_table}.revision + 1,"
                f" active_seconds = {draft_table}.active_seconds + excluded.active_seconds,"
                f" updated_at = excluded.updated_at RETURNING revision, updated_at, active_seconds",
                [claim.pk, rows.adapt_json(data), active, rows.adapt_time(now)])[0]
    if not extended:
        raise assignment.refusal(claim, assignment.CHANGE, now=now)
    return Draft(claim=claim, data=data, revision=revision, active_seconds=total,
                 updated_at=rows.convert_one(Draft, "updated_at", updated_at))


def _extend_lease(claim: Claim, now) -> bool:
    """Renew the lease of a claim that is active and whose lease still runs, in one statement."""
    return bool(rows.execute_count(
        f"UPDATE {rows.table(Claim)} SET lease_expires_at = %s"
        f" WHERE id = %s AND status = %s AND lease_expires_at > %s",
        [rows.adapt_time(now + timedelta(seconds=claim.study.lease_seconds)), claim.pk, Claim.Status.ACTIVE,
         rows.adapt_time(now)]))


def submit(claim: Claim, worker, data: dict, *, active_seconds: float = 0) -> tuple[Submission, bool, dict]:
    """Final submission. Returns (submission, created, feedback); a repeated submit returns the first.
    A claim whose lease ran out is refused (409)."""
    _own(claim, worker)
    if claim.status != Claim.Status.ACTIVE:
        # the submission is made in the transaction that ends the claim: only an ended claim can have one
        return _repeat(claim, "be submitted")
    now = timezone.now()
    if assignment.lease_ran_out(claim, now):
        raise assignment.refusal(claim, assignment.SUBMIT, now=now)
    clean = kinds.of(claim.study).validate(claim.study.form_schema, claim.item.payload, data)
    verdict = quality.assess(claim.study, claim.item, worker, clean)
    submission = Submission(claim=claim, data=clean, review_state=verdict.review_state,
                            review_queue=verdict.review_queue, check_passed=verdict.check_passed,
                            wall_seconds=(now - claim.claimed_at).total_seconds(), submitted_at=now)
    try:
        with transaction.atomic():
            finished = _finish_claim(claim, now)
            if finished:
                submission.pk, submission.active_seconds = _insert_submission(
                    submission, _active_seconds(active_seconds))
                rows.execute_count(
                    f"UPDATE {rows.table(StudyItem)} SET completed_count = completed_count + 1 WHERE id = %s",
                    [claim.item_id])
                history.record_many([(Claim, claim.pk, Claim.STATES.source(Claim.Status.SUBMITTED),
                                      Claim.Status.SUBMITTED),
                                     (Submission, submission.pk, "", submission.review_state)],
                                    actor=worker, study=claim.study, now=now)
    except IntegrityError:
        # a concurrent identical submit won the race
        return Submission.objects.get(claim=claim), False, {}
    if not finished:
        # a concurrent submit of the same claim got there first, or the lease ran out
        return _repeat(claim, assignment.SUBMIT, now=now)
    claim.status, claim.finished_at = Claim.Status.SUBMITTED, now
    kind = kinds.of(claim.study)
    if kind.on_submitted is not None:
        submission.claim = claim
        kind.on_submitted(submission)
    return submission, True, quality.feedback(claim.study, claim.item, worker, verdict)


def _repeat(claim: Claim, doing: str, *, now=None) -> tuple[Submission, bool, dict]:
    existing = Submission.objects.filter(claim=claim).first()
    if existing is not None:
        return existing, False, {}
    raise assignment.refusal(claim, doing, now=now)


def _finish_claim(claim: Claim, now) -> bool:
    """End an active claim whose lease still runs, in one statement (the move checked against
    `Claim.STATES`: only a claim in the state that may become submitted is changed)."""
    return bool(rows.execute_count(
        f"UPDATE {rows.table(Claim)} SET status = %s, finished_at = %s"
        f" WHERE id = %s AND status = %s AND lease_expires_at > %s",
        [Claim.Status.SUBMITTED, rows.adapt_time(now), claim.pk, Claim.STATES.source(Claim.Status.SUBMITTED),
         rows.adapt_time(now)]))


def _insert_submission(submission: Submission, active_seconds: float) -> tuple[int, float]:
    """Insert the submission with the draft's active time added; return (id, active seconds)."""
    names = ["claim", "data", "active_seconds", "wall_seconds", "submitted_at", "review_state", "review_queue",
             "check_passed", "review_reason"]
    columns = ", ".join(rows.column(Submission, name) for name in names)
    drafted = f"COALESCE((SELECT active_seconds FROM {rows.table(Draft)} WHERE claim_id = %s), 0) + %s"
    values = [submission.claim_id, rows.adapt_json(submission.data), submission.claim_id, active_seconds,
              submission.wall_seconds, rows.adapt_time(submission.submitted_at), submission.review_state,
              submission.review_queue, submission.check_passed, ""]
    return tuple(rows.execute(
        f"INSERT INTO {rows.table(Submission)} ({columns}) VALUES (%s, %s, {drafted}, %s, %s, %s, %s, %s, %s)"
        f" RETURNING id, active_seconds", values)[0])
