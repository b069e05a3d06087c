"""One way to make a crowd study (`annotation.crowd.studies`): settings checked, items in bulk, a
unique slug that two creations at the same moment never share, all in one transaction; and every
service that opens a study goes through it."""

import ast
import threading
from pathlib import Path

import pytest
from django.db import IntegrityError, connection
from django.test.utils import CaptureQueriesContext

from annotation.benchmarks.blackswan import quality_study, staged
from annotation.crowd import proposal_review, studies
from annotation.crowd.errors import CrowdError
from annotation.crowd.models import Study, StudyItem
from annotation.crowd.study_settings import SettingsError
from config.models import StateChange
from config.roles import CURATOR
from evaluation import human_eval
from evaluation.benchmarks.nleye import explanation_votes
from tests.annotation.test_crowd_concurrency import run_in_threads
from tests.benchmarks.blackswan.test_quality_study import version  # noqa: F401  (a fixture)
from tests.benchmarks.blackswan.test_staged import split  # noqa: F401  (a fixture)
from tests.conftest import logged_in_api, make_user
from tests.evaluation.test_human_eval import blackswan, nleye_runs, nleye_version, workers  # noqa: F401  (fixtures)
from tests.generation.test_proposals import generated, scripted  # noqa: F401  (fixtures)

ROOT = Path(__file__).resolve().parents[2]
FORM = {"fields": [{"name": "label", "type": "single_choice", "options": ["cat", "dog"]}]}
ROWS = [{"external_id": "a", "payload": {"n": 1}},
        {"external_id": "b", "payload": {"n": 2}},
        {"external_id": "gold", "payload": {"n": 3}, "role": StudyItem.Role.GOLD,
         "answer_key": {"fields": {"label": "cat"}}}]


def nothing_written() -> bool:
    return not (Study.objects.exists() or StudyItem.objects.exists() or StateChange.objects.exists())


def make(name="Pets", **options):
    return studies.create_study(**{"name": name, "created_by": None, "form_schema": FORM, **options})


# --- The service ---------------------------------------------------------------------------------

@pytest.mark.django_db
def test_a_study_is_made_with_its_items_in_bulk_and_its_first_history_entry(curator):
    with CaptureQueriesContext(connection) as queries:
        made = studies.create_study(name="Pets: cats & dogs", created_by=curator, form_schema=FORM, rows=ROWS,
                                    annotators_per_item=2, state=Study.State.OPEN, history_reason="made for a test")
    study = made.study
    assert (study.slug, study.state, study.annotators_per_item, study.created_by) == (
        "pets-cats-dogs", "open", 2, curator)
    assert [(i.pk is not None, i.external_id, i.open_slots) for i in made.items] == [
        (True, "a", 2), (True, "b", 2), (True, "gold", 2**31 - 1)]
    assert list(study.items.order_by("pk").values_list("external_id", flat=True)) == ["a", "b", "gold"]
    item_inserts = [q for q in queries.captured_queries if q["sql"].startswith('INSERT INTO "annotation_studyitem"')]
    assert len(item_inserts) == 1  # all items in one statement
    entry = StateChange.objects.of(study).get()
    assert (entry.from_state, entry.to_state, entry.actor, entry.reason) == ("", "open", curator, "made for a test")
    assert not StateChange.objects.of(make("Quiet").study).exists()


@pytest.mark.django_db
@pytest.mark.parametrize(("values", "field"), [
    ({"annotators_per_item": 0}, "annotators_per_item"),
    ({"gold_share": 1.5}, "gold_share"),
    ({"lease_seconds": 5}, "lease_seconds"),
    ({"step_kind": "no-such-kind"}, "step_kind"),
    ({"form_schema": {"fields": []}}, "form_schema"),
    ({"recruitment_platform": "prolific"}, "platform_study_id"),
])
def test_settings_are_checked_before_anything_is_written(values, field):
    with pytest.raises(SettingsError) as refused:
        make(rows=ROWS, history_reason="never", **values)
    assert refused.value.status == 400 and field in refused.value.details
    assert nothing_written()


@pytest.mark.django_db
def test_a_study_whose_items_fail_leaves_nothing_behind():
    with pytest.raises(IntegrityError):
        make(rows=[{"external_id": "same"}, {"external_id": "same"}], history_reason="never")
    assert nothing_written()


@pytest.mark.django_db
def test_slugs_from_the_same_name_get_the_next_number():
    slugs = [make("Same title").study.slug for _ in range(4)]
    assert slugs == ["same-title", "same-title-2", "same-title-3", "same-title-4"]
    Study.objects.filter(slug="same-title-2").delete()
    assert make("Same title").study.slug == "same-title-2"  # a freed slug is free again
    assert make("Same title!").study.slug == "same-title-5"
    assert make("Same title 2").study.slug == "same-title-2-2"


@pytest.mark.django_db
def test_long_names_fallbacks_and_names_that_make_no_slug():
    long = make("A" * 200)
    again = make("A" * 200)
    assert long.study.slug == "a" * studies.SLUG_BASE_LENGTH and again.study.slug == "a" * 56 + "-2"
    assert len(again.study.slug) <= Study._meta.get_field("slug").max_length
    assert make("!!!", fallback_slug="human-eval").study.slug == "human-eval"
    assert make("???", fallback_slug="human-eval").study.slug == "human-eval-2"
    assert make("???").study.slug == "study"
    with pytest.raises(CrowdError) as refused:
        make("???", fallback_slug=None)
    assert refused.value.status == 400 and "needs a name" in refused.value.message
    for name in ("A" * 201, "", "   "):
        with pytest.raises(CrowdError) as refused:
            make(name, rows=ROWS)
        assert refused.value.status == 400 and "name" in refused.value.details
    assert Study.objects.count() == 5 and StudyItem.objects.count() == 0


@pytest.mark.django_db
def test_a_slug_asked_for_is_kept_or_refused_when_taken_or_malformed():
    assert make("One", slug="my-study").study.slug == "my-study"
    for slug, status in (("my-study", 409), ("not a slug!", 400), ("x" * 65, 400)):
        with pytest.raises(CrowdError) as refused:
            make("Two", slug=slug, rows=ROWS, history_reason="never")
        assert refused.value.status == status, slug
    assert Study.objects.count() == 1 and not StudyItem.objects.exists() and not StateChange.objects.exists()


@pytest.mark.django_db
def test_a_slug_taken_between_the_look_and_the_insert_is_skipped(monkeypatch):
    """Another creation may take the free slug after this one looked: the database's unique index
    refuses the insert (in a savepoint) and the next number is tried."""
    inserted = studies._inserted
    raced = []

    def raced_insert(study, slug):
        if not raced:
            raced.append(slug)
            Study.objects.create(name="Elsewhere", slug=slug)  # a concurrent creation wins this slug
        return inserted(study, slug)

    monkeypatch.setattr(studies, "_inserted", raced_insert)
    made = make("Race", rows=ROWS, history_reason="made")
    assert raced == ["race"] and made.study.slug == "race-2"
    assert made.study.items.count() == 3 and set(Study.objects.values_list("slug", flat=True)) == {"race", "race-2"}


@pytest.mark.django_db
def test_another_integrity_error_is_not_taken_for_a_slug_clash(monkeypatch):
    def refuse(*args, **kwargs):
        raise IntegrityError("some other constraint")

    monkeypatch.setattr(Study, "save", refuse)
    with pytest.raises(IntegrityError, match="some other constraint"):
        make("Other")


def _create_concurrently(count: int, **options) -> tuple[list, list[str]]:
    made, refused = [], []
    lock = threading.Lock()

    def create():
        try:
            study = make("Same title at once", rows=[{"external_id": "x"}], history_reason="made", **options).study
        except studies.SlugTaken:
            with lock:
                refused.append("taken")
            return
        with lock:
            made.append(study.slug)

    errors = run_in_threads([create] * count, timeout=120)
    assert not errors, errors[0]
    return made, refused


@pytest.mark.postgres
def test_concurrent_creations_with_the_same_name_never_collide_postgres(transactional_db):
    assert connection.vendor == "postgresql"
    count = 16
    slugs, refused = _create_concurrently(count)
    assert not refused and len(slugs) == count
    assert sorted(slugs) == sorted(["same-title-at-once", *(f"same-title-at-once-{n}" for n in range(2, count + 1))])
    assert Study.objects.count() == count and StudyItem.objects.count() == count
    assert StateChange.objects.about(Study).count() == count
    # the same slug asked for at once: one study gets it, every other creation is refused (409)
    slugs, refused = _create_concurrently(8, slug="asked-for")
    assert slugs == ["asked-for"] and len(refused) == 7
    assert Study.objects.count() == count + 1


# --- Every service that opens a study goes through it ----------------------------------------------

@pytest.fixture
def spy(monkeypatch):
    """The studies made through `studies.create_study`, by slug."""
    made = {}
    create = studies.create_study

    def recording(**options):
        result = create(**options)
        made[result.study.slug] = options
        return result

    monkeypatch.setattr(studies, "create_study", recording)
    return made


def test_a_proposal_review_study_is_made_by_the_service(spy, generated, curator):  # noqa: F811
    made = proposal_review.create_review_study(generated.proposals.all(), curator=curator, name="QA review")
    options = spy[made.study.slug]
    assert options["fallback_slug"] == "proposal-review" and options["history_reason"].startswith("review of 3")
    assert {item.proposal_id for item in made.items} == set(
        generated.proposals.filter(status="ok").values_list("pk", flat=True))


def test_a_blackswan_quality_study_is_made_by_the_service(spy, version, curator):  # noqa: F811
    made = quality_study.create_quality_study(version, 2, 7, curator, k=2)
    assert made.study.slug in spy and spy[made.study.slug]["annotators_per_item"] == 2
    assert quality_study.recorded_sample(made.study) == made.sample


def test_a_staged_study_is_made_by_the_service(spy, split, curator):  # noqa: F811
    study = staged.create_staged_study([split], "Black swans", curator)
    again = staged.create_staged_study([split], "Black swans", curator)  # the same name: the next slug
    assert (study.slug, again.slug) == ("black-swans", "black-swans-2") and set(spy) == {study.slug, again.slug}
    assert spy[study.slug]["step_kind"] == staged.STUDY_KIND and spy[study.slug]["fallback_slug"] is None
    with pytest.raises(studies.SlugTaken):
        staged.create_staged_study([split], "Black swans", curator, slug="black-swans")


def test_human_evaluation_studies_are_made_by_the_service(spy, blackswan, nleye_runs, curator, workers):  # noqa: F811
    _, run_a, _ = blackswan
    rating = human_eval.create_rating_study(run_a, curator=curator, variants=("forecaster_gen",))
    baseline_study = human_eval.create_human_baseline_study(nleye_runs[0].version, ("triplet",), curator=curator)
    votes = explanation_votes.create_explanation_vote_study(list(nleye_runs[:2]), curator=curator)
    for made, kind in ((rating, human_eval.RATING), (baseline_study, human_eval.BASELINE), (votes, human_eval.VOTE)):
        options = spy[made.study.slug]
        assert options["fallback_slug"] == "human-eval" and options["form_schema"][human_eval.META]["kind"] == kind
        assert len(made.items) == len(options["rows"])


@pytest.mark.django_db
def test_a_study_made_through_the_api_is_made_by_the_service(spy):
    api = logged_in_api(make_user("carol", CURATOR))
    made = api.post("/api/studies/", {"name": "By API", "slug": "by-api", "form_schema": FORM}, format="json")
    assert made.status_code == 201, made.content
    assert spy["by-api"]["created_by"].username == "carol"
    taken = api.post("/api/studies/", {"name": "Again", "slug": "by-api", "form_schema": FORM}, format="json")
    assert taken.status_code == 400 and Study.objects.count() == 1


SOURCE_DIRS = ("annotation", "evaluation", "generation", "config")
CREATES = {"create", "get_or_create", "update_or_create", "bulk_create"}


def _makes_study(node: ast.Call) -> bool:
    """`Study.objects.create(...)` and friends, or `Study(...)` with field values (a bare `Study()`
    only reads the defaults)."""
    func = node.func
    if isinstance(func, ast.Name):
        return func.id == "Study" and bool(node.args or node.keywords)
    return (isinstance(func, ast.Attribute) and func.attr in CREATES and isinstance(func.value, ast.Attribute)
            and func.value.attr == "objects" and isinstance(func.value.value, ast.Name)
            and func.value.value.id == "Study")


def _study_rows_made(path: Path) -> list[str]:
    """Where a module makes Study rows itself."""
    return [f"{path.relative_to(ROOT)}:{node.lineno}" for node in ast.walk(ast.parse(path.read_text(), str(path)))
            if isinstance(node, ast.Call) and _makes_study(node)]


def test_no_module_but_the_service_makes_study_rows():
    makers = [where for folder in SOURCE_DIRS for path in sorted((ROOT / folder).rglob("*.py"))
              if "migrations" not in path.parts for where in _study_rows_made(path)]
    assert makers and all(where.startswith("annotation/crowd/studies.py:") for where in makers), makers
