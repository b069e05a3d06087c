"""Handing out work: claim the next item, release it, reclaim expired leases.

The cap of k claims per item is held by the database: a claim first takes a place with
`UPDATE study_item SET open_slots = open_slots - 1 WHERE id = … AND open_slots > 0`, which
succeeds for at most `open_slots` concurrent callers on any backend. On PostgreSQL the candidate
rows are also locked with SKIP LOCKED, so concurrent workers spread over different items instead
of queueing on the same one.

A study may also cap the items of one video a worker gets (`Study.max_items_per_video`, 0 for no
cap): the same statement skips an item whose video (`StudyItem.video`) the worker already has that
many claims on in the study, counting every claim but those returned or timed out
(`Claim.COUNTS_FOR_VIDEO_CAP`). Items without a video are not capped.

That statement reads the worker's claims as they were when it began, and another request of the same
worker may claim an item, and even hand it in, before this claim is recorded. So the statement also
takes a lock of the worker in the study (on PostgreSQL; SQLite runs one write transaction at a time),
held until the claim is committed, and the insert of the claim, whose reading begins after that lock
is held and so sees every earlier claim of the worker in the study, checks again in the same statement
that the worker has no active claim there, never had the item and is still under the video's cap.
When not, the transaction gives the place back and the request answers with the worker's current
claim or looks again. Checked before the row is written, this also keeps a claim from waiting, on the
unique indexes, for a submit of its own worker while it holds a place of an item: that submit may be
waiting for the same item (a deadlock).

An item the worker may not have (`claim_checks.refusal`: its media is withheld from them, or a workflow's
own check refuses it) is passed over the same way: the place goes back and the next item is taken. When
nothing else is left for the worker, the claim is refused with 409 and the first such reason
(`ItemWithheld`).
"""

import math
import time
from datetime import timedelta
from functools import cache

from django.db import IntegrityError, transaction
from django.db.models import Count, F
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation.crowd import claim_checks, consent, eligibility, forms, history, rows
from annotation.crowd.errors import ClaimNotActive, ItemWithheld, NotEligible, NotYourClaim, StudyNotOpen
from annotation.crowd.models import Claim, Study, StudyItem

UNLIMITED_SLOTS = 2**31 - 1
CHECK_ROLES = (StudyItem.Role.GOLD, StudyItem.Role.ATTENTION)
BUSY_WAIT_SECONDS = 0.005  # all candidates locked by other requests: let them finish


def initial_slots(study: Study, role: str) -> int:
    """The places a new item opens with: k for a regular item, no limit for gold and attention checks."""
    return study.annotators_per_item if role == StudyItem.Role.REGULAR else UNLIMITED_SLOTS


def add_items(study: Study, rows: list[dict]) -> list[StudyItem]:
    """Create study items, in bulk, from dicts with external_id, payload and optional
    role/answer_key/media (benchmark_item, video, image) and the proposal an item reviews."""
    items = []
    for row in rows:
        role = row.get("role", StudyItem.Role.REGULAR)
        items.append(StudyItem(
            study=study, external_id=str(row["external_id"]), payload=row.get("payload", {}), role=role,
            answer_key=row.get("answer_key", {}),
            open_slots=initial_slots(study, role),
            benchmark_item=row.get("benchmark_item"), video=row.get("video"), image=row.get("image"),
            proposal=row.get("proposal"),
        ))
    with transaction.atomic():
        return StudyItem.objects.bulk_create(items)


def active_claim(study: Study, worker) -> Claim | None:
    return Claim.objects.filter(study=study, worker=worker, status=Claim.Status.ACTIVE).select_related("item").first()


def current_claim(study: Study, worker, *, now=None) -> Claim | None:
    """The worker's active claim in the study whose lease still runs; reads only (claims and times out nothing)."""
    return (Claim.objects.select_related("item", "draft")
            .filter(study=study, worker=worker, status=Claim.Status.ACTIVE, lease_expires_at__gt=now or timezone.now())
            .first())


def claim_next(study: Study, worker, *, now=None, platform_assignment_id: str = "",
               facts: eligibility.Standing | None = None) -> Claim | None:
    """Give the worker their current claim, or a new one; None when nothing is left for them.

    ItemWithheld (409) when the only items left are ones the worker may not have (`claim_checks`).
    `facts`: the worker's standing, when the caller has just read it with the study
    (`eligibility.study_and_standing`); otherwise it is read here, so a stale `study` object cannot
    let anyone claim from a study that has closed meanwhile."""
    now = now or timezone.now()
    facts = facts or eligibility.standing(study, worker)
    check_may_claim(study, facts)
    current = _current_claim(study, worker, now)
    if current is not None:
        return current
    if consent.asks_consent(study):  # no statement for a study without a consent page
        consent.check_before_claim(study, worker)
    passed: dict[int, str] = {}  # items the worker may not have: id → why
    for roles in _roles_to_try(study, worker):
        claim = _claim_from(study, worker, roles, now, platform_assignment_id, passed)
        if claim is not None:
            return claim
    # a concurrent request of the same worker may have claimed meanwhile: that claim is theirs
    current = active_claim(study, worker)
    if current is None and passed:
        raise ItemWithheld(next(iter(passed.values())))
    return current


def check_may_claim(study: Study, facts: eligibility.Standing) -> None:
    """StudyNotOpen (409) or NotEligible (403) unless the worker of `facts` may claim in the study now."""
    if facts.state != Study.State.OPEN:
        raise StudyNotOpen(_("The study '%(name)s' is %(state)s.")
                           % {"name": study.name, "state": Study.State(facts.state).label.lower()})
    reason = eligibility.refusal(study, facts)
    if reason:
        raise NotEligible(reason)


@cache
def _current_claims_sql() -> str:
    """The worker's active claims and every expired lease of a study (id, worker and lease only)."""
    columns = ", ".join(rows.column(Claim, name) for name in ("id", "worker", "lease_expires_at"))
    return (f"SELECT {columns} FROM {rows.table(Claim)}"
            " WHERE study_id = %s AND status = %s AND (worker_id = %s OR lease_expires_at < %s)")


def _current_claim(study: Study, worker, now) -> Claim | None:
    """The worker's active claim, after timing out every expired lease of the study (one read)."""
    found = rows.raw(Claim, _current_claims_sql(), [study.pk, Claim.Status.ACTIVE, worker.pk, rows.adapt_time(now)])
    expired = [claim.pk for claim in found if claim.lease_expires_at < now]
    if expired:
        expire_leases(study=study, now=now, ids=expired)
    mine = [claim.pk for claim in found if claim.worker_id == worker.pk and claim.pk not in expired]
    if not mine:
        return None
    return Claim.objects.select_related("item", "draft").filter(pk=mine[0], status=Claim.Status.ACTIVE).first()


def _roles_to_try(study: Study, worker) -> list[tuple[str, ...]]:
    """Checks (gold and attention items) come silently at the study's share of a worker's items."""
    regular = (StudyItem.Role.REGULAR,)
    if study.gold_share <= 0:
        return [regular]
    taken = Claim.objects.filter(study=study, worker=worker).count()
    due = math.floor((taken + 1) * study.gold_share) > math.floor(taken * study.gold_share)
    return [CHECK_ROLES, regular] if due else [regular]


@cache
def _take_sql(roles: tuple[str, ...], capped: bool = False, passed: int = 0) -> str:
    """Take one place of the least-done item the worker never had, in one statement.

    The candidate is chosen and locked (SKIP LOCKED on PostgreSQL, so concurrent claims spread
    over different items) and its `open_slots` decremented only while still positive: the cap
    holds on any database. `capped`: the candidate's video must also be one the worker has fewer
    claims on than the study's `max_items_per_video` (parameters: study, roles, worker, then study,
    worker and the cap). `passed`: the number of items passed over for this worker, which the
    candidate is none of (parameters last: their ids). On PostgreSQL the statement also takes the
    worker's lock on the study (`rows.pair_lock`; parameters first: study, worker), held until the
    claim is recorded.
    """
    item, claim = rows.table(StudyItem), rows.table(Claim)
    marks = ", ".join(["%s"] * len(roles))
    returned = ", ".join(rows.column(StudyItem, f.name) for f in StudyItem._meta.concrete_fields)
    video_cap = f"""
            AND (i.video_id IS NULL OR {_video_claims_sql("i.video_id")} < %s)""" if capped else ""
    passed_over = f"""
            AND i.id NOT IN ({", ".join(["%s"] * passed)})""" if passed else ""
    lock, locked = rows.pair_lock()
    return f"""{lock}
        UPDATE {item} SET open_slots = open_slots - 1
        WHERE id = (
          SELECT i.id FROM {item} i
          WHERE i.study_id = %s AND i.role IN ({marks}) AND i.open_slots > 0
            AND NOT EXISTS (SELECT 1 FROM {claim} c WHERE c.item_id = i.id AND c.worker_id = %s){video_cap}{passed_over}
          ORDER BY i.completed_count, i.id LIMIT 1{rows.skip_locked()}
        ) AND open_slots > 0{locked}
        RETURNING {returned}"""


def _video_claims_sql(video: str) -> str:
    """The worker's claims on a video that count towards the cap (parameters: study, worker)."""
    item, claim = rows.table(StudyItem), rows.table(Claim)
    counted = ", ".join(f"'{status}'" for status in Claim.COUNTS_FOR_VIDEO_CAP)
    return (f"(SELECT COUNT(*) FROM {claim} vc JOIN {item} vi ON vi.id = vc.item_id"
            f" WHERE vc.study_id = %s AND vc.worker_id = %s AND vc.status IN ({counted}) AND vi.video_id = {video})")


@cache
def _still_free_sql(capped: bool) -> str:
    """What the claim's insert checks again (parameters: study, worker, the active status, item,
    worker; then study, worker, video and the cap when `capped`)."""
    claim = rows.table(Claim)
    sql = (f"NOT EXISTS (SELECT 1 FROM {claim} a WHERE a.study_id = %s AND a.worker_id = %s AND a.status = %s)"
           f" AND NOT EXISTS (SELECT 1 FROM {claim} h WHERE h.item_id = %s AND h.worker_id = %s)")
    return f"{sql} AND {_video_claims_sql('%s')} < %s" if capped else sql


def _take_params(study: Study, worker, roles: tuple[str, ...], passed: list[int]) -> list:
    params = [study.pk, *roles, worker.pk]
    if rows.pair_lock()[0]:
        params = [study.pk % 2**31, worker.pk % 2**31, *params]
    if study.max_items_per_video:
        params += [study.pk, worker.pk, study.max_items_per_video]
    return [*params, *passed]


def videos_at_cap(study: Study, worker):
    """The videos the worker has reached the study's per-video cap on (a subquery of video ids)."""
    return (Claim.objects.filter(study=study, worker=worker, status__in=Claim.COUNTS_FOR_VIDEO_CAP,
                                 item__video__isnull=False)
            .values("item__video").annotate(n=Count("pk")).filter(n__gte=study.max_items_per_video)
            .values("item__video"))


def _any_left(study: Study, worker, roles: tuple[str, ...], passed: list[int]) -> bool:
    """Whether any item is left for the worker, counting those other requests are taking right now
    (and none of the items `passed` over for them)."""
    left = StudyItem.objects.filter(study=study, role__in=roles, open_slots__gt=0).exclude(claims__worker=worker)
    if passed:
        left = left.exclude(pk__in=passed)
    if study.max_items_per_video:
        left = left.exclude(video__in=videos_at_cap(study, worker))
    return left.exists()


def _claim_from(study, worker, roles, now, platform_assignment_id, passed: dict[int, str]) -> Claim | None:
    """A new claim of an item of `roles`, or None. An item the worker may not have gives its place back
    and is added to `passed` (id → why), which the next attempts skip."""
    for _attempt in range(100):
        try:
            with transaction.atomic():
                taken = rows.raw(StudyItem, _take_sql(roles, bool(study.max_items_per_video), len(passed)),
                                 _take_params(study, worker, roles, list(passed)))
                if taken:
                    reason = claim_checks.refusal(study, taken[0], worker)
                    if reason:
                        raise PassedOver(taken[0].pk, reason)
                    return _record_claim(study, worker, taken[0], now, platform_assignment_id)
        except PassedOver as exc:  # the transaction gave the place back
            passed[exc.item_id] = exc.reason
            continue
        except (IntegrityError, Overtaken):
            # Another request of the same worker claimed meanwhile (one active claim per study and
            # worker), or claimed and handed in: the transaction gave the place back. An active claim
            # is theirs; otherwise look again, now counting the claim handed in.
            current = active_claim(study, worker)
            if current is not None:
                return current
            continue
        # nothing taken: either nothing is left, or every candidate is being taken right now
        if not _any_left(study, worker, roles, list(passed)):
            return None
        time.sleep(BUSY_WAIT_SECONDS)
    return None


class Overtaken(Exception):
    """Another request of the worker claimed, or claimed and handed in, since the place was taken."""


class PassedOver(Exception):
    """The item taken may not go to this worker (`claim_checks.refusal`): give its place back."""

    def __init__(self, item_id: int, reason: str):
        super().__init__(reason)
        self.item_id, self.reason = item_id, reason


def _record_claim(study, worker, item: StudyItem, now, platform_assignment_id) -> Claim:
    claim = Claim(study=study, item=item, worker=worker, status=Claim.Status.ACTIVE, claimed_at=now,
                  lease_expires_at=now + timedelta(seconds=study.lease_seconds),
                  platform_assignment_id=platform_assignment_id,
                  presentation=forms.presentation_for(study.form_schema, item.payload, seed=f"{item.pk}:{worker.pk}"))
    names = ["study", "item", "worker", "status", "lease_expires_at", "platform_assignment_id", "presentation",
             "step", "claimed_at"]
    values = [study.pk, item.pk, worker.pk, claim.status, rows.adapt_time(claim.lease_expires_at),
              platform_assignment_id, rows.adapt_json(claim.presentation), "", rows.adapt_time(now)]
    capped = bool(study.max_items_per_video) and item.video_id is not None
    again = [study.pk, worker.pk, Claim.Status.ACTIVE, item.pk, worker.pk]
    if capped:
        again += [study.pk, worker.pk, item.video_id, study.max_items_per_video]
    claim.pk = rows.insert_if(Claim, names, values, _still_free_sql(capped), again)
    if claim.pk is None:
        raise Overtaken
    history.record_many([(Claim, claim.pk, "", claim.status)], actor=worker, study=study, now=now)
    claim.newly_claimed = True  # the API answers 201 for it without looking the old claim up again
    Claim.draft.related.set_cached_value(claim, None)  # a claim made just now has no draft yet
    return claim


def _free_slot(claim: Claim) -> None:
    StudyItem.objects.filter(pk=claim.item_id).update(open_slots=F("open_slots") + 1)


def release(claim: Claim, worker, reason: str = "returned by the worker") -> Claim:
    """The worker gives an item back; its place goes to someone else."""
    if claim.worker_id != worker.pk:
        raise NotYourClaim(_("This item is not assigned to you."))
    return _end(claim, Claim.Status.RETURNED, actor=worker, reason=reason)


def give_back(claim: Claim, curator, reason: str = "returned by a curator") -> Claim:
    """A curator takes an active claim back from its worker; its place goes to someone else."""
    return _end(claim, Claim.Status.RETURNED, actor=curator, reason=reason)


def _end(claim: Claim, status: str, *, actor=None, reason: str = "") -> Claim:
    with transaction.atomic():
        source = Claim.STATES.source(status)
        ended = Claim.objects.filter(pk=claim.pk, status=source).update(status=status, finished_at=timezone.now())
        if not ended:
            claim.refresh_from_db()
            raise ClaimNotActive(_("This item is already %(status)s.") % {"status": claim.get_status_display().lower()})
        _free_slot(claim)
        history.record(Claim, claim.pk, source, status, actor=actor, study=claim.study, reason=reason)
    claim.refresh_from_db()
    return claim


def expire_leases(*, study: Study | None = None, now=None, ids: list[int] | None = None) -> int:
    """Time out active claims whose lease has passed and free their places."""
    now = now or timezone.now()
    expired = Claim.objects.filter(status=Claim.Status.ACTIVE, lease_expires_at__lte=now)
    if study is not None:
        expired = expired.filter(study=study)
    # usually there are none: look for ids first, load the claims only when there are some
    if ids is None:
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


def lease_ran_out(claim: Claim, now) -> bool:
    return claim.status == Claim.Status.ACTIVE and claim.lease_expires_at <= now


# what a refused request wanted to do with the claim (`refusal`)
CHANGE, SUBMIT = "change", "be submitted"


def refusal(claim: Claim, doing: str, *, now=None) -> ClaimNotActive:
    """Why the claim takes no more answers (409): it has ended, or its lease ran out. A claim whose
    lease ran out is timed out on the spot (its place goes back to the pool); the lease is never
    renewed. Call it outside the transaction that was refused, so the time-out is kept."""
    now = now or timezone.now()
    claim.refresh_from_db(fields=["status", "finished_at", "lease_expires_at"])
    if lease_ran_out(claim, now):
        expire_leases(now=now, ids=[claim.pk])
        expired_at = f"{claim.lease_expires_at:%Y-%m-%d %H:%M:%S %Z}"
        if doing == SUBMIT:
            return ClaimNotActive(_("Your time for this item ran out (its lease expired at %(time)s); it can no "
                                    "longer be submitted. Ask for a new item.") % {"time": expired_at})
        if doing == CHANGE:
            return ClaimNotActive(_("Your time for this item ran out (its lease expired at %(time)s); it can no "
                                    "longer change. Ask for a new item.") % {"time": expired_at})
        return ClaimNotActive(_("Your time for this item ran out (its lease expired at %(time)s); it can no "
                                "longer %(doing)s. Ask for a new item.") % {"time": expired_at, "doing": doing})
    status = claim.get_status_display().lower()
    if doing == SUBMIT:
        return ClaimNotActive(_("This item is %(status)s; it can no longer be submitted.") % {"status": status})
    if doing == CHANGE:
        return ClaimNotActive(_("This item is %(status)s; it can no longer change.") % {"status": status})
    return ClaimNotActive(_("This item is %(status)s; it can no longer %(doing)s.")
                          % {"status": status, "doing": doing})
