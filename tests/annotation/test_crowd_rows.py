"""The crowd loop's hand-written SQL hands back the ORM's own instances: every field of every
instance the claim, draft and submit paths and the token check build equals what the ORM reads,
with the same types (Decimal, aware datetimes, JSON, booleans), on SQLite and on PostgreSQL. The
values are decoded by Django's converters and `Model.from_db` / `Manager.raw`, never by hand."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from django.db import connection, models
from django.utils import timezone
from rest_framework.authtoken.models import Token

from annotation.crowd import assignment, eligibility, rows, submissions
from annotation.crowd.models import Claim, Draft, Study, StudyItem, WorkerProfile
from config.authentication import USER_FIELDS, TokenAuthentication
from config.roles import ANNOTATOR, CURATOR
from tests.conftest import create_study, make_user

pytestmark = pytest.mark.django_db

FORM = {"fields": [{"name": "label", "type": "single_choice", "options": ["cat", "dog"]}]}


def same_as_orm(built, *, fields=None) -> None:
    """Every concrete field (or the named ones) of `built` equals the ORM's, value and type."""
    model = type(built)
    orm = model._default_manager.get(pk=built.pk)
    for field in model._meta.concrete_fields:
        if fields is not None and field.attname not in fields:
            continue
        ours, theirs = getattr(built, field.attname), getattr(orm, field.attname)
        assert ours == theirs, field.name
        assert type(ours) is type(theirs), (field.name, type(ours), type(theirs))


@pytest.fixture
def study(db):
    return create_study("rows", form=FORM, items=3, k=2, pay_per_item=Decimal("0.35"), gold_share=0.0,
                        estimated_minutes=Decimal("2.50"), lease_seconds=900,
                        payload=lambda n: {"n": n, "nested": {"ok": True, "x": [1.5, None]}})


def test_the_study_read_with_a_workers_standing_is_the_orms(study):
    Study.objects.filter(pk=study.pk).update(required_attributes={"native_language": ["it", "en"]})
    worker = make_user("w", ANNOTATOR)
    WorkerProfile.objects.create(user=worker, attributes={"native_language": "it", "age": 31})
    found, standing = eligibility.study_and_standing(study.slug, worker)
    same_as_orm(found)
    assert isinstance(found.pay_per_item, Decimal) and found.created_at.tzinfo is not None
    assert found.required_attributes == {"native_language": ["it", "en"]}
    assert standing.attributes == {"native_language": "it", "age": 31}
    assert standing.state == Study.State.OPEN and standing.qualified is True and standing.excluded is False


def test_the_item_a_claim_takes_is_the_orms(study):
    worker = make_user("w", ANNOTATOR)
    claim = assignment.claim_next(study, worker)
    same_as_orm(claim.item)  # built from UPDATE … RETURNING by Manager.raw, open_slots already taken
    assert claim.item.open_slots == 1 and claim.item.payload["nested"] == {"ok": True, "x": [1.5, None]}


def test_the_claim_its_study_item_and_draft_read_in_one_statement_are_the_orms(study):
    worker = make_user("w", ANNOTATOR)
    claim = assignment.claim_next(study, worker)
    assert Claim.draft.related.get_cached_value(submissions.load_claim(claim.pk)) is None  # no draft yet
    draft = submissions.save_draft(claim, worker, {"label": "dog"}, active_seconds=3)
    assert draft.updated_at == Draft.objects.get(claim=claim).updated_at and draft.updated_at.tzinfo is not None
    loaded = submissions.load_claim(claim.pk)
    for built in (loaded, loaded.study, loaded.item, loaded.draft):
        same_as_orm(built)
    assert loaded.draft.data == {"label": "dog"} and loaded.draft.active_seconds == 3.0
    assert submissions.load_claim(claim.pk + 1000) is None


def test_expired_leases_read_by_hand_written_sql_compare_as_datetimes(study):
    """The claim request reads the worker's claim and the study's expired leases in one statement:
    its lease times are aware datetimes, so an expired lease is timed out and a running one kept."""
    late, worker = make_user("late", ANNOTATOR), make_user("w", ANNOTATOR)
    stale = assignment.claim_next(study, late)
    Claim.objects.filter(pk=stale.pk).update(lease_expires_at=timezone.now() - timedelta(seconds=5))
    mine = assignment.claim_next(study, worker)
    assert assignment.claim_next(study, worker).pk == mine.pk  # the running claim is found again
    stale.refresh_from_db()
    assert stale.status == Claim.Status.EXPIRED
    found = rows.raw(Claim, assignment._current_claims_sql(),
                     [study.pk, Claim.Status.ACTIVE, worker.pk, rows.adapt_time(timezone.now())])
    assert [claim.pk for claim in found] == [mine.pk]
    same_as_orm(found[0], fields={"id", "worker_id", "lease_expires_at"})
    assert found[0].get_deferred_fields() >= {"status", "presentation"}


def test_the_token_users_row_is_the_orms_with_its_roles(db):
    user = make_user("cur", CURATOR, ANNOTATOR)
    key = Token.objects.create(user=user).key
    found, got_key = TokenAuthentication().authenticate_credentials(key)
    assert got_key == key
    same_as_orm(found, fields=set(USER_FIELDS))
    assert found.get_deferred_fields() >= {"password", "email"}  # only what the check needs is read
    assert found._platform_roles == {CURATOR, ANNOTATOR}
    get_user_model().objects.filter(pk=user.pk).update(is_superuser=True)
    assert TokenAuthentication().authenticate_credentials(key)[0].is_superuser is True


def test_any_field_type_is_decoded_by_djangos_converters(study):
    """Not only the types the crowd's models use today: a duration column comes back as the ORM
    reads it (on SQLite a count of microseconds, which a hand-written decoder left as an int)."""
    duration = models.DurationField()
    duration.set_attributes_from_name("lasts")
    duration.model = Study
    stored = duration.get_db_prep_value(timedelta(minutes=3, microseconds=7), connection)
    with connection.cursor() as cursor:
        cursor.execute("SELECT %s", [stored])
        raw = cursor.fetchone()[0]
    assert rows.convert([duration], [raw]) == [timedelta(minutes=3, microseconds=7)]
    assert rows.convert_one(StudyItem, "payload", rows.execute(
        f"SELECT payload FROM {rows.table(StudyItem)} WHERE study_id = %s ORDER BY id LIMIT 1",
        [study.pk])[0][0]) == {"n": 0, "nested": {"ok": True, "x": [1.5, None]}}
    assert not hasattr(rows, "decode")  # no hand-written decoder is left to drift from Django's
