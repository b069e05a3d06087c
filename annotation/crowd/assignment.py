"""Handing out work: claim the next item, release it, reclaim expired leases.

The cap of k claims per item is held by the database: a claim first takes a place with
`UPDATE study_item SET open_slots = open_slots - 1 WHERE id = … AND open_slots > 0`, which
succeeds for at most `open_slots` concurrent callers on any backend. On PostgreSQL the candidate
rows are also locked with SKIP LOCKED, so concurrent workers spread over different items instead
of queueing on the same one.
"""

import math
import time
from datetime import timedelta

from django.db import IntegrityError, connection, transaction
from django.db.models import F
from django.utils import timezone

from annotation.crowd import eligibility, forms, history
from annotation.crowd.errors import ClaimNotActive, NotYourClaim, StudyNotOpen
from annotation.crowd.models import Claim, Study, StudyItem

UNLIMITED_SLOTS = 2**31 - 1
CANDIDATES_PER_TRY = 8
BUSY_WAIT_SECONDS = 0.005  # all candidates locked by other requests: let them finish


def add_items(study: Study, rows: list[dict]) -> list[StudyItem]:
    """Create study items from dicts with external_id, payload and optional role/answer_key/media."""
    items = []
    with transaction.atomic():
        for row in rows:
            role = row.get("role", StudyItem.Role.REGULAR)
            slots = study.annotators_per_item if role == StudyItem.Role.REGULAR else UNLIMITED_SLOTS
            items.append(StudyItem.objects.create(
                study=study, external_id=str(row["external_id"]), payload=row.get("payload", {}), role=role,
                answer_key=row.get("answer_key", {}), open_slots=slots,
                benchmark_item=row.get("benchmark_item"), video=row.get("video"), image=row.get("image"),
            ))
    return items


def active_claim(study: Study, worker) -> Claim | None:
    return Claim.objects.filter(study=study, worker=worker, status=Claim.Status.ACTIVE).select_related("item").first()


def claim_next(study: Study, worker, *, now=None, platform_assignment_id: str = "") -> Claim | None:
    """Give the worker their current claim, or a new one; None when nothing is left for them."""
    now = now or timezone.now()
    study.refresh_from_db(fields=["state"])
    if study.state != Study.State.OPEN:
        raise StudyNotOpen(f"The study '{study.name}' is {study.get_state_display().lower()}.")
    eligibility.check(study, worker)
    expire_leases(study=study, now=now)
    current = active_claim(study, worker)
    if current is not None:
        return current
    for role in _roles_to_try(study, worker):
        claim = _claim_role(study, worker, role, now, platform_assignment_id)
        if claim is not None:
            return claim
    # a concurrent request of the same worker may have claimed meanwhile: that claim is theirs
    return active_claim(study, worker)


def _roles_to_try(study: Study, worker) -> list[str]:
    """Checks (gold and attention items) come silently at the study's share of a worker's items."""
    regular = [StudyItem.Role.REGULAR]
    if study.gold_share <= 0:
        return regular
    taken = Claim.objects.filter(study=study, worker=worker).count()
    due = math.floor((taken + 1) * study.gold_share) > math.floor(taken * study.gold_share)
    checks = [StudyItem.Role.GOLD, StudyItem.Role.ATTENTION]
    return checks + regular if due else regular


def _claim_role(study, worker, role, now, platform_assignment_id):
    for _attempt in range(100):
        with transaction.atomic():
            candidates = (
                StudyItem.objects.filter(study=study, role__in=_role_group(role), open_slots__gt=0)
                .exclude(claims__worker=worker)
                .order_by("completed_count", "id")
            )
            skip_locked = connection.features.has_select_for_update_skip_locked
            locked = candidates.select_for_update(skip_locked=True, of=("self",)) if skip_locked else candidates
            # whole rows, so the item taken needs no second read; open_slots, which taking changes,
            # is deferred (read again if anybody asks)
            items = list(locked.defer("open_slots")[:CANDIDATES_PER_TRY])
            # SKIP LOCKED hides the items other requests are taking right now: nothing is left
            # only if there is nothing even counting those
            if not items and not (skip_locked and candidates.exists()):
                return None
            for item in items:
                claim = _take(study, worker, item, now, platform_assignment_id)
                if claim is not None:
                    return claim
        # every candidate was taken, or being taken, by someone else meanwhile: look again
        if not items:
            time.sleep(BUSY_WAIT_SECONDS)
    return None


def _role_group(role):
    if role == StudyItem.Role.REGULAR:
        return [StudyItem.Role.REGULAR]
    return [StudyItem.Role.GOLD, StudyItem.Role.ATTENTION]


def _take(study, worker, item: StudyItem, now, platform_assignment_id) -> Claim | None:
    try:
        with transaction.atomic():
            took = StudyItem.objects.filter(pk=item.pk, open_slots__gt=0).update(open_slots=F("open_slots") - 1)
            if not took:
                return None
            claim = Claim.objects.create(
                study=study, item=item, worker=worker, status=Claim.Status.ACTIVE,
                lease_expires_at=now + timedelta(seconds=study.lease_seconds),
                platform_assignment_id=platform_assignment_id,
                presentation=forms.presentation_for(study.form_schema, item.payload, seed=f"{item.pk}:{worker.pk}"),
            )
            history.record("claim", claim.pk, "", Claim.Status.ACTIVE, actor=worker, study=study)
            claim.newly_claimed = True  # the API answers 201 for it without looking the old claim up again
            return claim
    except IntegrityError:
        # Another request of the same worker claimed meanwhile (one active claim per study and
        # worker), or this worker already had this item: the savepoint gave the place back.
        return active_claim(study, worker) if active_claim(study, worker) else None


def _free_slot(claim: Claim) -> None:
    StudyItem.objects.filter(pk=claim.item_id).update(open_slots=F("open_slots") + 1)


def release(claim: Claim, worker, reason: str = "returned by the worker") -> Claim:
    """The worker gives an item back; its place goes to someone else."""
    if claim.worker_id != worker.pk:
        raise NotYourClaim("This item is not assigned to you.")
    return _end(claim, Claim.Status.RETURNED, actor=worker, reason=reason)


def _end(claim: Claim, status: str, *, actor=None, reason: str = "") -> Claim:
    with transaction.atomic():
        ended = Claim.objects.filter(pk=claim.pk, status=Claim.Status.ACTIVE).update(
            status=status, finished_at=timezone.now()
        )
        if not ended:
            claim.refresh_from_db()
            raise ClaimNotActive(f"This item is already {claim.get_status_display().lower()}.")
        _free_slot(claim)
        history.record("claim", claim.pk, Claim.Status.ACTIVE, status, actor=actor, study=claim.study, reason=reason)
    claim.refresh_from_db()
    return claim


def expire_leases(*, study: Study | None = None, now=None) -> int:
    """Time out active claims whose lease has passed and free their places."""
    now = now or timezone.now()
    expired = Claim.objects.filter(status=Claim.Status.ACTIVE, lease_expires_at__lt=now)
    if study is not None:
        expired = expired.filter(study=study)
    # usually there are none: look for ids first, load the claims only when there are some
    ids = list(expired.values_list("pk", flat=True))
    if not ids:
        return 0
    count = 0
    for claim in expired.filter(pk__in=ids).select_related("study"):
        try:
            _end(claim, Claim.Status.EXPIRED, reason="lease expired")
        except ClaimNotActive:
            continue
        count += 1
    return count


def extend_lease(claim: Claim, *, now=None) -> None:
    """Activity (a draft save) keeps the lease alive."""
    now = now or timezone.now()
    Claim.objects.filter(pk=claim.pk, status=Claim.Status.ACTIVE).update(
        lease_expires_at=now + timedelta(seconds=claim.study.lease_seconds)
    )
