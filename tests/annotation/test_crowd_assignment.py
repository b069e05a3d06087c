"""Handing out work: the k cap, one item per worker once, one open claim per study, leases,
returned items, closed studies, eligibility; and the insert-only history every transition leaves.

The services are called directly where the rule lives in them; the API is used where the HTTP
answer is part of the rule (409 for a closed study, 403 with a message for an ineligible worker).
"""

from datetime import timedelta

import pytest
from django.db import DatabaseError, IntegrityError, connection, transaction
from django.db.models import ProtectedError
from django.utils import timezone

from annotation.crowd import assignment, quality, review, submissions
from annotation.crowd.errors import ClaimNotActive, NotEligible, NotYourClaim, StudyNotOpen
from annotation.crowd.models import (
    Claim,
    Draft,
    Qualification,
    Study,
    StudyExclusion,
    StudyItem,
    Submission,
    WorkerProfile,
    WorkerQualification,
)
from config import state
from config.models import StateChange
from config.roles import ANNOTATOR, CURATOR
from tests.conftest import create_study, logged_in_api, make_user

pytestmark = pytest.mark.django_db

FORM = {"fields": [{"name": "label", "type": "single_choice", "options": ["cat", "dog"]}]}
ANSWER = {"label": "cat"}


def make_study(slug: str = "study", *, items: int = 3, k: int = 1, state: str = Study.State.OPEN, **fields) -> Study:
    return create_study(slug, form=FORM, items=items, k=k, state=state, **fields)


def holding(item: StudyItem) -> int:
    return Claim.objects.filter(item=item, status__in=Claim.HOLDS_SLOT).count()


def work_until_done(study: Study, worker) -> list[Claim]:
    done = []
    while (claim := assignment.claim_next(study, worker)) is not None:
        submissions.submit(claim, worker, ANSWER)
        done.append(claim)
    return done


@pytest.fixture
def workers(db):
    return [make_user(f"worker{n}", ANNOTATOR) for n in range(6)]


# --- The k cap --------------------------------------------------------------------------------

def test_add_items_gives_regular_items_k_places_and_checks_unlimited_ones():
    study = make_study(items=2, k=3)
    gold, = assignment.add_items(study, [{"external_id": "g", "payload": {}, "role": StudyItem.Role.GOLD,
                                          "answer_key": {"fields": {"label": {"answer": "cat"}}}}])
    assert set(study.items.filter(role=StudyItem.Role.REGULAR).values_list("open_slots", flat=True)) == {3}
    assert gold.open_slots == assignment.UNLIMITED_SLOTS


def test_an_item_goes_to_at_most_k_workers(workers):
    study = make_study(items=1, k=2)
    item = study.items.get()
    first, second = assignment.claim_next(study, workers[0]), assignment.claim_next(study, workers[1])
    assert first.item == second.item == item
    assert assignment.claim_next(study, workers[2]) is None
    item.refresh_from_db()
    assert item.open_slots == 0 and holding(item) == 2
    # a submitted answer keeps its place: the third worker still gets nothing
    submissions.submit(first, workers[0], ANSWER)
    assert assignment.claim_next(study, workers[2]) is None
    # and the database refuses a place below zero whatever the code does
    with pytest.raises(IntegrityError), transaction.atomic():
        StudyItem.objects.filter(pk=item.pk).update(open_slots=-1)


def test_every_item_is_done_exactly_k_times_by_k_different_workers(workers):
    study = make_study(items=4, k=3)
    for worker in workers[:5]:
        work_until_done(study, worker)
    for item in study.items.all():
        assert item.completed_count == 3 and item.open_slots == 0
        assert Claim.objects.filter(item=item).values("worker").distinct().count() == 3
    assert Submission.objects.filter(claim__study=study).count() == 12


# --- One item per worker, once; one open claim per study --------------------------------------

def test_a_worker_never_gets_the_same_item_twice_even_after_returning_it(workers):
    study = make_study(items=2, k=2)
    worker = workers[0]
    first = assignment.claim_next(study, worker)
    assignment.release(first, worker)
    second = assignment.claim_next(study, worker)
    assert second.item != first.item
    submissions.submit(second, worker, ANSWER)
    assert assignment.claim_next(study, worker) is None  # the returned item is free, but not for them
    assert assignment.claim_next(study, workers[1]).item in (first.item, second.item)
    # the database holds the rule too
    with pytest.raises(IntegrityError), transaction.atomic():
        Claim.objects.create(study=study, item=first.item, worker=worker, status=Claim.Status.RETURNED,
                             lease_expires_at=timezone.now())


def test_at_most_one_open_claim_per_study_and_claim_next_returns_the_current_one(workers):
    study = make_study(items=3)
    other = make_study("other-study", items=1)
    worker = workers[0]
    claim = assignment.claim_next(study, worker)
    assert assignment.claim_next(study, worker).pk == claim.pk
    assert Claim.objects.filter(worker=worker, study=study).count() == 1
    assert sum(study.items.values_list("open_slots", flat=True)) == 2  # one place taken, once
    # another study is another queue
    assert assignment.claim_next(other, worker).study == other
    with pytest.raises(IntegrityError), transaction.atomic():
        Claim.objects.create(study=study, item=study.items.exclude(pk=claim.item_id).first(), worker=worker,
                             lease_expires_at=timezone.now() + timedelta(hours=1))


def test_the_claim_endpoint_answers_201_for_a_new_claim_and_200_for_the_current_one(workers):
    study = make_study(items=2)
    client = logged_in_api(workers[0])
    first = client.post(f"/api/studies/{study.slug}/claim/")
    again = client.post(f"/api/studies/{study.slug}/claim/")
    assert (first.status_code, again.status_code) == (201, 200)
    assert first.json()["id"] == again.json()["id"]


# --- Leases -----------------------------------------------------------------------------------

def test_an_expired_lease_frees_the_place_and_the_item_goes_to_someone_else(workers):
    study = make_study(items=1, lease_seconds=600)
    item = study.items.get()
    long_ago = timezone.now() - timedelta(hours=2)
    claim = assignment.claim_next(study, workers[0], now=long_ago)
    assert claim.lease_expires_at < timezone.now()
    assert assignment.expire_leases() == 1
    claim.refresh_from_db()
    item.refresh_from_db()
    assert claim.status == Claim.Status.EXPIRED and claim.finished_at is not None
    assert item.open_slots == 1
    assert StateChange.objects.of(Claim, claim.pk).filter(from_state="active",
                                       to_state="expired", reason="lease expired").exists()
    assert assignment.expire_leases() == 0  # nothing twice
    taken = assignment.claim_next(study, workers[1])
    assert taken.item == item
    assert assignment.claim_next(study, workers[0]) is None  # never the same item again
    with pytest.raises(ClaimNotActive):
        submissions.submit(claim, workers[0], ANSWER)


def test_the_next_claim_request_reclaims_expired_leases(workers):
    study = make_study(items=1, lease_seconds=600)
    claim = assignment.claim_next(study, workers[0])
    later = timezone.now() + timedelta(seconds=601)
    taken = assignment.claim_next(study, workers[1], now=later)
    assert taken is not None and taken.item_id == claim.item_id
    claim.refresh_from_db()
    assert claim.status == Claim.Status.EXPIRED
    item = study.items.get()
    assert item.open_slots == 0 and holding(item) == 1


def test_a_worker_whose_lease_expired_gets_a_new_item_with_201(workers):
    study = make_study(items=2, lease_seconds=600)
    old = assignment.claim_next(study, workers[0], now=timezone.now() - timedelta(hours=1))
    response = logged_in_api(workers[0]).post(f"/api/studies/{study.slug}/claim/")
    assert response.status_code == 201
    assert response.json()["id"] != old.pk and response.json()["item"]["external_id"] != old.item.external_id
    old.refresh_from_db()
    assert old.status == Claim.Status.EXPIRED


def test_saving_a_draft_keeps_the_lease_alive(workers):
    study = make_study(items=1, lease_seconds=600)
    claim = assignment.claim_next(study, workers[0], now=timezone.now() - timedelta(seconds=590))
    submissions.save_draft(claim, workers[0], {"label": "dog"})
    claim.refresh_from_db()
    assert claim.lease_expires_at > timezone.now() + timedelta(seconds=500)
    assert assignment.expire_leases(now=timezone.now() + timedelta(seconds=60)) == 0
    assert assignment.expire_leases(now=timezone.now() + timedelta(seconds=700)) == 1


# --- Returning an item ------------------------------------------------------------------------

def test_a_returned_claim_frees_its_place(workers):
    study = make_study(items=1)
    item = study.items.get()
    claim = assignment.claim_next(study, workers[0])
    assert assignment.claim_next(study, workers[1]) is None
    with pytest.raises(NotYourClaim):
        assignment.release(claim, workers[1])
    returned = assignment.release(claim, workers[0])
    assert returned.status == Claim.Status.RETURNED
    item.refresh_from_db()
    assert item.open_slots == 1
    with pytest.raises(ClaimNotActive):
        assignment.release(claim, workers[0])
    item.refresh_from_db()
    assert item.open_slots == 1  # returning twice frees nothing twice
    assert assignment.claim_next(study, workers[1]).item == item


def test_release_endpoint(workers):
    study = make_study(items=1)
    claim = assignment.claim_next(study, workers[0])
    # another worker's claim does not exist for them
    assert logged_in_api(workers[1]).post(f"/api/claims/{claim.pk}/release/").status_code == 404
    response = logged_in_api(workers[0]).post(f"/api/claims/{claim.pk}/release/")
    assert response.status_code == 200 and response.json() == {"id": claim.pk, "status": "returned"}
    again = logged_in_api(workers[0]).post(f"/api/claims/{claim.pk}/release/")
    assert again.status_code == 409 and "returned" in again.json()["error"]
    assert study.items.get().open_slots == 1


# --- Closed, paused and draft studies ---------------------------------------------------------

@pytest.mark.parametrize("state", [Study.State.CLOSED, Study.State.PAUSED, Study.State.DRAFT])
def test_a_study_that_is_not_open_hands_out_nothing(workers, state):
    study = make_study(items=2, state=state)
    with pytest.raises(StudyNotOpen):
        assignment.claim_next(study, workers[0])
    response = logged_in_api(workers[0]).post(f"/api/studies/{study.slug}/claim/")
    assert response.status_code == 409
    assert response.json()["error"] == f"The study '{study.name}' is {state}."
    assert not Claim.objects.exists() and not StateChange.objects.exists()
    assert set(study.items.values_list("open_slots", flat=True)) == {1}


def test_pausing_a_study_stops_new_claims_but_not_the_state_check_of_a_stale_object(workers):
    study = make_study(items=3)
    assignment.claim_next(study, workers[0])
    Study.objects.filter(pk=study.pk).update(state=Study.State.PAUSED)
    # the in-memory object still says "open": claim_next reads the state from the database
    with pytest.raises(StudyNotOpen):
        assignment.claim_next(study, workers[1])


# --- Eligibility ------------------------------------------------------------------------------

def _setup_rule(rule: str, study: Study, worker, other):
    if rule == "qualification":
        study.required_qualification = Qualification.objects.create(name="italian-native")
        study.save()
        return "This study needs the qualification 'italian-native'."
    if rule == "attribute_missing":
        study.required_attributes = {"native_language": "it"}
        study.save()
        return "This study needs workers with native language it."
    if rule == "attribute_wrong":
        study.required_attributes = {"native_language": "it"}
        study.save()
        WorkerProfile.objects.create(user=worker, attributes={"native_language": "en"})
        return "This study needs workers with native language it."
    if rule == "attribute_list":
        study.required_attributes = {"native_language": "it", "country_of_upbringing": ["IT", "CH"]}
        study.save()
        WorkerProfile.objects.create(user=worker, attributes={"native_language": "it", "country_of_upbringing": "FR"})
        return "This study needs workers with country of upbringing IT or CH."
    if rule == "include_list":
        study.include_workers.add(other)
        return "This study is open to invited workers only."
    if rule == "exclude_list":
        study.exclude_workers.add(worker)
        return "This study is not open to your account."
    if rule == "study_exclusion":
        StudyExclusion.objects.create(study=study, worker=worker, reason="low agreement")
        return "You are no longer part of this study's pool. Thank you for your work."
    raise AssertionError(rule)


@pytest.mark.parametrize("rule", ["qualification", "attribute_missing", "attribute_wrong", "attribute_list",
                                  "include_list", "exclude_list", "study_exclusion"])
def test_an_ineligible_worker_gets_403_with_the_reason_and_nothing_is_written(workers, rule):
    study = make_study(items=2)
    worker = workers[0]
    message = _setup_rule(rule, study, worker, workers[1])
    before = (WorkerProfile.objects.count(), WorkerQualification.objects.count(), StudyExclusion.objects.count())
    with pytest.raises(NotEligible, match="^" + message.replace("(", r"\(").replace(".", r"\.") + "$"):
        assignment.claim_next(study, worker)
    response = logged_in_api(worker).post(f"/api/studies/{study.slug}/claim/")
    assert response.status_code == 403
    assert response.json() == {"error": message}
    assert not Claim.objects.exists() and not StateChange.objects.exists()
    assert set(study.items.values_list("open_slots", flat=True)) == {1}
    assert (WorkerProfile.objects.count(), WorkerQualification.objects.count(),
            StudyExclusion.objects.count()) == before


@pytest.mark.parametrize("attributes", [{"native_language": "it", "country_of_upbringing": "IT"},
                                        {"native_language": "it", "country_of_upbringing": "CH", "age": 30}])
def test_a_worker_who_meets_the_required_attributes_may_claim(workers, attributes):
    study = make_study(items=1, required_attributes={"native_language": "it",
                                                     "country_of_upbringing": ["IT", "CH"]})
    WorkerProfile.objects.create(user=workers[0], attributes=attributes)
    assert logged_in_api(workers[0]).post(f"/api/studies/{study.slug}/claim/").status_code == 201


def test_an_invited_worker_may_claim_and_the_others_may_not(workers):
    study = make_study(items=2)
    study.include_workers.add(workers[0])
    assert logged_in_api(workers[0]).post(f"/api/studies/{study.slug}/claim/").status_code == 201
    assert logged_in_api(workers[1]).post(f"/api/studies/{study.slug}/claim/").status_code == 403


def test_a_qualified_worker_may_claim(workers):
    qualification = Qualification.objects.create(name="video-experts")
    study = make_study(items=1, required_qualification=qualification)
    profile = WorkerProfile.objects.create(user=workers[0])
    WorkerQualification.objects.create(profile=profile, qualification=qualification, source="manual")
    assert logged_in_api(workers[0]).post(f"/api/studies/{study.slug}/claim/").status_code == 201


# --- History ----------------------------------------------------------------------------------

def _transitions(model, entity_id: int) -> list[tuple]:
    return [(h.from_state, h.to_state, h.actor.username if h.actor else None)
            for h in StateChange.objects.of(model, entity_id).order_by("created_at", "id")]


def test_every_transition_leaves_a_history_entry(workers):
    curator = make_user("curator", CURATOR)
    study = make_study(items=6, k=1, lease_seconds=600, expert_first=10)
    approved_claim = assignment.claim_next(study, workers[0])
    approved, _, _ = submissions.submit(approved_claim, workers[0], ANSWER)
    review.approve(approved, curator)
    rejected_claim = assignment.claim_next(study, workers[0])
    rejected, _, _ = submissions.submit(rejected_claim, workers[0], ANSWER)
    review.reject(rejected, curator, reason="the label is wrong")
    returned = assignment.release(assignment.claim_next(study, workers[0]), workers[0])
    expired = assignment.claim_next(study, workers[0], now=timezone.now() - timedelta(hours=1))
    assignment.expire_leases()
    excluded_claim = assignment.claim_next(study, workers[1])
    quality.exclude(study, workers[1], "spam", actor=curator)

    assert _transitions(Claim, approved_claim.pk) == [
        ("", "active", "worker0"), ("active", "submitted", "worker0"), ("submitted", "approved", "curator")]
    assert _transitions(Submission, approved.pk) == [("", "pending", "worker0"), ("pending", "approved", "curator")]
    assert _transitions(Claim, rejected_claim.pk) == [
        ("", "active", "worker0"), ("active", "submitted", "worker0"), ("submitted", "rejected", "curator")]
    assert _transitions(Submission, rejected.pk) == [("", "pending", "worker0"), ("pending", "rejected", "curator")]
    assert StateChange.objects.of(Submission, rejected.pk).get(to_state="rejected").reason == (
        "the label is wrong")
    assert _transitions(Claim, returned.pk) == [("", "active", "worker0"), ("active", "returned", "worker0")]
    assert _transitions(Claim, expired.pk) == [("", "active", "worker0"), ("active", "expired", None)]
    assert _transitions(Claim, excluded_claim.pk) == [("", "active", "worker1"), ("active", "returned", "curator")]
    assert _transitions(type(workers[1]), workers[1].pk) == [("in_pool", "excluded", "curator")]
    assert StateChange.objects.within(study).count() == StateChange.objects.count() == 17


def test_history_entries_cannot_be_changed_or_deleted(workers):
    study = make_study(items=1)
    assignment.claim_next(study, workers[0])
    entry = StateChange.objects.get()
    entry.reason = "rewritten"
    with pytest.raises(PermissionError):
        entry.save()
    with pytest.raises(PermissionError):
        entry.delete()
    with pytest.raises(PermissionError):
        StateChange.objects.filter(pk=entry.pk).update(reason="rewritten")
    with pytest.raises(PermissionError):
        StateChange.objects.all().delete()
    with pytest.raises(PermissionError):
        StateChange.objects.filter(pk=entry.pk).delete()
    with pytest.raises(PermissionError), transaction.atomic():  # bulk_update opens no savepoint of its own
        StateChange.objects.bulk_update([entry], ["reason"])
    with pytest.raises(PermissionError):
        StateChange.objects.update_or_create(pk=entry.pk, defaults={"reason": "rewritten"})
    # nor do they go away with the study they belong to
    with pytest.raises(ProtectedError):
        study.delete()
    fresh = StateChange.objects.get()
    assert (fresh.reason, fresh.to_state) == ("", "active")
    # adding is what history is for
    state.record(Claim, 1, "", "active")
    assert StateChange.objects.count() == 2


def test_the_database_itself_refuses_to_rewrite_history(workers):
    """Raw SQL bypasses the model layer; a trigger stops it (updates everywhere, deletes on PostgreSQL)."""
    study = make_study(items=1)
    assignment.claim_next(study, workers[0])
    entry = StateChange.objects.get()
    table = StateChange._meta.db_table
    with pytest.raises(DatabaseError, match="insert-only"), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"UPDATE {table} SET reason = 'rewritten' WHERE id = %s", [entry.pk])
    if connection.vendor == "postgresql":
        with pytest.raises(DatabaseError, match="insert-only"), transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(f"DELETE FROM {table} WHERE id = %s", [entry.pk])
    assert StateChange.objects.get().reason == ""


def test_a_draft_is_not_a_transition_and_writes_no_history(workers):
    study = make_study(items=1)
    claim = assignment.claim_next(study, workers[0])
    submissions.save_draft(claim, workers[0], {"label": "dog"})
    assert Draft.objects.filter(claim=claim).exists()
    assert StateChange.objects.count() == 1


def test_rows_read_back_by_hand_written_sql_equal_the_orms(db):
    """The crowd loop's SQL path builds model instances the rest of the code cannot tell apart."""
    from decimal import Decimal

    from annotation.crowd import rows

    study = create_study("raw-rows", form=FORM, pay_per_item=Decimal("0.35"), gold_share=0.25)
    raw = rows.fetch_one(Study, "t.id = %s", [study.pk])
    orm = Study.objects.get(pk=study.pk)
    for field in Study._meta.concrete_fields:
        assert getattr(raw, field.attname) == getattr(orm, field.attname), field.name
    assert isinstance(raw.pay_per_item, Decimal) and raw.created_at.tzinfo is not None
