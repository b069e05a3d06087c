"""NL-EYE scene writing (SPEC §3 "Curation" 1 and 4): authors write premise / plausible / implausible
scene triplets in a study of kind `nleye_scenes`; curators filter them in the review queue, naming the
criterion of each rejection; an accepted triplet joins the pool version with its curation record.
Also: the near-duplicate finder, the pool's spread, the study-creation page and the permissions."""

import pytest
from django.core.management import call_command
from django.urls import reverse

from annotation.benchmarks.nleye import near_duplicates, scene_pool, scenes, spread
from annotation.benchmarks.nleye.near_duplicates import Triplet
from annotation.benchmarks.nleye.vocabulary import CATEGORY_VALUES
from annotation.crowd import assignment, kinds, review, study_copy, study_settings, submissions
from annotation.crowd.errors import CrowdError, InvalidSubmission
from annotation.crowd.models import Claim, Study, Submission
from annotation.curation_models import CurationRecord
from annotation.models import BenchmarkItem, BenchmarkVersion
from annotation.payloads import validate_payload
from annotation.versions import add_item
from config.roles import ANNOTATOR, CURATOR
from generation.tiny_models import build_tiny_model
from tests.conftest import create_study, logged_in_api, logged_in_client, make_user

pytestmark = pytest.mark.django_db

TRIPLET = {
    "premise": "A teacher opens the classroom door in the morning.",
    "plausible": "Children sit at their desks with open notebooks.",
    "implausible": "Children sleep in beds under blankets.",
    "reasoning_category": "logical", "time_direction": "forward", "time_duration": "short",
    "domain": "education",
}
OTHER = {
    "premise": "A man holds an umbrella dripping with water.",
    "plausible": "Rain falls on a busy street.",
    "implausible": "The sun shines on a dry desert.",
    "reasoning_category": "physical", "time_direction": "backward", "time_duration": "short",
    "domain": "daily life & hospitality",
}


@pytest.fixture
def scene_study(curator):
    return scenes.create_scene_study(curator, "Write NL-EYE scenes", k=2, open_now=True)


def _submit(study, worker, data):
    claim = assignment.claim_next(study, worker)
    claim = submissions.load_claim(claim.pk)
    submission, created, _ = submissions.submit(claim, worker, data)
    assert created
    return submission


# --- The study and its writing slots ------------------------------------------------------------

def test_a_scene_study_gets_its_form_its_briefs_and_an_unfrozen_pool(scene_study):
    assert scene_study.step_kind == scenes.STUDY_KIND and scene_study.form_schema == scenes.FORM
    pool = scene_study.output_version
    assert pool.label == scene_pool.POOL_LABEL and not pool.frozen and pool.benchmark.slug == scene_pool.SLUG
    items = list(scene_study.items.select_related("benchmark_item__version"))
    # 6 categories × 5 time shifts (forward/backward × short/long, parallel short)
    assert len(items) == 30
    assert {item.benchmark_item.version.label for item in items} == {scene_pool.BRIEFS_LABEL}
    assert {item.payload["suggested_category"] for item in items} == set(CATEGORY_VALUES)
    assert not any(i.payload["suggested_direction"] == "parallel" and i.payload["suggested_duration"] == "long"
                   for i in items)
    for item in items:
        validate_payload(scene_pool.SLUG, item.payload)  # briefs are NL-EYE payloads of kind "brief"
    # a second study reuses the same briefs and pool
    again = scenes.create_scene_study(scene_study.created_by, "Second round")
    assert again.output_version_id == pool.pk and again.state == Study.State.DRAFT
    assert BenchmarkItem.objects.filter(version__label=scene_pool.BRIEFS_LABEL).count() == 30


def test_only_curators_create_scene_studies(annotator):
    with pytest.raises(CrowdError) as refused:
        scenes.create_scene_study(annotator, "Mine")
    assert refused.value.status == 403 and not Study.objects.exists()


@pytest.mark.parametrize("command", ["nleye_scene_writing_study", "scene_writing_study"])  # the old name: an alias
def test_the_command_creates_a_scene_study_into_a_named_pool(command, curator, capsys):
    call_command(command, "--name", "Scenes by command", "--curator", curator.username,
                 "--pool", "round-2", "--k", "3", "--open")
    study = Study.objects.get(name="Scenes by command")
    assert study.output_version.label == "round-2" and study.annotators_per_item == 3
    assert study.state == Study.State.OPEN and study.items.count() == 30
    assert study.slug in capsys.readouterr().out


def test_the_study_page_creates_a_scene_study_and_links_its_spread(curator, curator_client):
    response = curator_client.post(reverse("crowd-study-new"), {
        "name": "Scenes from the page", "step_kind": scenes.STUDY_KIND, "form_schema": "{}",
        "annotators_per_item": 1, "count_accepted_only": "on", "lease_seconds": 1800, "estimated_minutes": 5,
        "pay_per_item": "0", "currency": "USD", "gold_share": 0, "expert_share": 1, "expert_first": 0,
        "min_accept_rate": 0, "min_reviews_for_exclusion": 3, "recruitment_platform": "none",
        "required_submissions": 1})
    assert response.status_code == 302, response.content.decode()[:2000]
    study = Study.objects.get(name="Scenes from the page")
    assert study.form_schema == scenes.FORM and study.items.count() == 30
    assert study.output_version.label == scene_pool.POOL_LABEL
    page = curator_client.get(reverse("crowd-study-detail", args=[study.slug])).content.decode()
    assert reverse("scene-spread", args=[study.slug]) in page


def test_the_study_page_refuses_a_frozen_or_foreign_output_version(curator, curator_client, scene_study):
    frozen = BenchmarkVersion.objects.create(benchmark=scene_study.output_version.benchmark, label="old",
                                             frozen=True, checksum="x")
    form = {"name": "Bad pool", "step_kind": scenes.STUDY_KIND, "form_schema": "{}", "output_version": frozen.pk,
            "annotators_per_item": 1, "lease_seconds": 1800, "estimated_minutes": 5, "pay_per_item": "0",
            "currency": "USD", "gold_share": 0, "expert_share": 1, "expert_first": 0, "min_accept_rate": 0,
            "min_reviews_for_exclusion": 3, "recruitment_platform": "none", "required_submissions": 1}
    response = curator_client.post(reverse("crowd-study-new"), form)
    assert response.status_code == 400 and not Study.objects.filter(name="Bad pool").exists()
    # an ordinary form study names no output version
    problems = study_settings.problems({"step_kind": "form", "form_schema": {"fields": [
        {"name": "x", "type": "free_text"}]}, "output_version": scene_study.output_version_id})
    assert "output_version" in problems


# --- Validation of the written triplet ----------------------------------------------------------

@pytest.mark.parametrize("change, field, phrase", [
    ({"premise": ""}, "premise", "required"),
    ({"premise": "   "}, "premise", "required"),
    ({"plausible": "short"}, "plausible", "at least"),
    ({"implausible": "x" * 301}, "implausible", "at most"),
    ({"implausible": "Children sit at their desks, with open notebooks!"}, "implausible", "same as the plausible"),
    ({"plausible": "a teacher opens the classroom door in the morning"}, "plausible", "same as the premise"),
    ({"reasoning_category": "magical"}, "reasoning_category", "choose one"),
    ({"time_direction": "sideways"}, "time_direction", "choose one"),
    ({"time_duration": None}, "time_duration", "choose one"),
    ({"domain": "space travel"}, "domain", "choose one"),
    ({"time_direction": "parallel", "time_duration": "long"}, "time_duration", "parallel"),
    ({"surprise": "extra"}, "surprise", "unknown field"),
])
def test_a_written_triplet_is_checked_on_the_server(change, field, phrase):
    data = {**TRIPLET, **change}
    with pytest.raises(InvalidSubmission) as refused:
        scenes.clean_answers(scenes.FORM, {}, data)
    assert phrase in refused.value.details[field], refused.value.details


def test_a_good_triplet_is_cleaned_and_a_parallel_short_one_passes():
    clean = scenes.clean_answers(scenes.FORM, {}, {**TRIPLET, "premise": f"  {TRIPLET['premise']}  "})
    assert clean["premise"] == TRIPLET["premise"] and clean["domain"] == "education"
    assert scenes.clean_answers(scenes.FORM, {}, {**TRIPLET, "time_direction": "parallel"})["time_duration"] == "short"


def test_submitting_through_the_api_gives_clear_400s_and_saves_nothing(scene_study, annotator):
    api = logged_in_api(annotator)
    claim = api.post(f"/api/studies/{scene_study.slug}/claim/").json()
    assert [f["name"] for f in claim["fields"]][:3] == ["premise", "plausible", "implausible"]
    assert claim["item"]["payload"]["kind"] == "brief"
    bad = api.post(f"/api/claims/{claim['id']}/submit/",
                   {"data": {**TRIPLET, "implausible": TRIPLET["plausible"]}}, format="json")
    assert bad.status_code == 400 and "implausible" in bad.json()["details"]
    assert not Submission.objects.exists()
    not_json = api.post(f"/api/claims/{claim['id']}/submit/", {"data": ["premise"]}, format="json")
    assert not_json.status_code == 400
    draft = api.put(f"/api/claims/{claim['id']}/draft/", {"data": {"premise": "half written"}}, format="json")
    assert draft.status_code == 200
    good = api.post(f"/api/claims/{claim['id']}/submit/", {"data": TRIPLET}, format="json")
    assert good.status_code == 201
    assert Submission.objects.get().data == TRIPLET


# --- The filter queue -----------------------------------------------------------------------------

def test_accepting_a_triplet_adds_the_pool_item_and_its_curation_record(scene_study, annotator, curator):
    submission = _submit(scene_study, annotator, TRIPLET)
    review.approve(submission, curator)
    pool = scene_study.output_version
    item = BenchmarkItem.objects.get(version=pool)
    sample_id = f"scene-{submission.pk}"
    assert item.external_id == sample_id
    payload = item.payload
    assert payload["kind"] == "triplet" and payload["sample_id"] == sample_id
    assert payload["label"] == scene_pool.plausible_label(sample_id)
    assert payload[f"hypothesis{payload['label']}"] == TRIPLET["plausible"]
    assert payload[f"hypothesis{3 - payload['label']}"] == TRIPLET["implausible"]
    assert {k: payload[k] for k in scene_pool.TRIPLET_FIELDS} == {k: TRIPLET[k] for k in scene_pool.TRIPLET_FIELDS}
    validate_payload(scene_pool.SLUG, payload)
    record = CurationRecord.objects.get(item=item)
    assert record.stage == "scenes_accepted" and record.source_submission_id == submission.pk
    assert record.author == annotator
    assert record.working["scenes"] == TRIPLET
    assert isinstance(record.working["seed"], int) and 0 <= record.working["seed"] < 2 ** 32
    assert Claim.objects.get(pk=submission.claim_id).status == Claim.Status.APPROVED


def test_an_edited_approval_adds_the_edited_triplet(scene_study, annotator, curator):
    submission = _submit(scene_study, annotator, TRIPLET)
    edited = {**TRIPLET, "premise": "A teacher unlocks the classroom at eight."}
    review.approve(submission, curator, edited=edited)
    item = BenchmarkItem.objects.get(version=scene_study.output_version)
    assert item.payload["premise"] == edited["premise"]
    assert item.curation.working["scenes"]["premise"] == edited["premise"]


def test_labels_are_a_fair_deterministic_coin():
    labels = [scene_pool.plausible_label(f"scene-{n}") for n in range(400)]
    assert labels == [scene_pool.plausible_label(f"scene-{n}") for n in range(400)]
    assert 150 < labels.count(1) < 250 and set(labels) == {1, 2}


def test_a_frozen_pool_refuses_the_approval_and_nothing_is_written(scene_study, annotator, curator):
    submission = _submit(scene_study, annotator, TRIPLET)
    pool = scene_study.output_version
    add_item(pool, "imported-1", {"kind": "triplet", "premise": "p", "hypothesis1": "a", "hypothesis2": "b",
                                  "label": 1})
    BenchmarkVersion.objects.filter(pk=pool.pk).update(frozen=True, checksum="x")
    with pytest.raises(CrowdError) as refused:
        review.approve(submission, curator)
    assert refused.value.status == 409 and "frozen" in refused.value.message
    assert Claim.objects.get(pk=submission.claim_id).status == Claim.Status.SUBMITTED
    assert not CurationRecord.objects.exists()
    submission.refresh_from_db()
    assert submission.review_state != Submission.Review.APPROVED


def test_a_rejection_of_a_scene_triplet_needs_a_known_criterion_and_records_it(scene_study, annotator, curator):
    submission = _submit(scene_study, annotator, TRIPLET)
    with pytest.raises(CrowdError, match="names the criterion"):
        review.reject(submission, curator, reason="not needed")
    with pytest.raises(CrowdError, match="Unknown criterion"):
        review.reject(submission, curator, criterion="boring")
    review.reject(submission, curator, criterion="premise_necessity", reason="the desk says school already")
    submission.refresh_from_db()
    assert submission.review_criterion == "premise_necessity"
    assert submission.review_reason == "the desk says school already"
    assert Claim.objects.get(pk=submission.claim_id).status == Claim.Status.REJECTED
    assert not BenchmarkItem.objects.filter(version=scene_study.output_version).exists()
    # the slot is free again for another author
    assert submission.claim.item.__class__.objects.get(pk=submission.claim.item_id).open_slots == 2


def test_generic_kinds_keep_their_reason_and_take_no_criterion(curator, annotator):
    form = {"fields": [{"name": "label", "type": "single_choice", "options": ["yes", "no"]}]}
    study = create_study("plain", form=form)
    submission = _submit(study, annotator, {"label": "yes"})
    with pytest.raises(CrowdError, match="needs a reason"):
        review.reject(submission, curator)
    with pytest.raises(CrowdError, match="name no criterion"):
        review.reject(submission, curator, reason="wrong", criterion="uniqueness")
    review.reject(submission, curator, reason="wrong")
    submission.refresh_from_db()
    assert submission.review_criterion == "" and submission.review_reason == "wrong"
    assert kinds.named("form").rejection_criteria == () and kinds.named("form").on_approved is None


def test_the_review_api_and_bulk_reject_with_a_criterion(scene_study, curator):
    authors = [make_user(f"author{n}", ANNOTATOR) for n in range(3)]
    made = [_submit(scene_study, author, data) for author, data in zip(authors, [TRIPLET, OTHER, TRIPLET],
                                                                       strict=True)]
    api = logged_in_api(curator)
    missing = api.post(f"/api/submissions/{made[0].pk}/review/", {"action": "reject", "reason": "dull"},
                       format="json")
    assert missing.status_code == 400 and "criterion" in missing.json()["error"]
    odd = api.post(f"/api/submissions/{made[0].pk}/review/", {"action": "approve", "criterion": "uniqueness"},
                   format="json")
    assert odd.status_code == 400
    one = api.post(f"/api/submissions/{made[0].pk}/review/", {"action": "reject", "criterion": "visual_relevance"},
                   format="json")
    assert one.status_code == 200 and one.json()["review_criterion"] == "visual_relevance"
    bulk_missing = api.post(f"/api/studies/{scene_study.slug}/review/",
                            {"submission_ids": [made[1].pk, made[2].pk], "action": "reject"}, format="json")
    assert bulk_missing.status_code == 400
    bulk = api.post(f"/api/studies/{scene_study.slug}/review/",
                    {"submission_ids": [made[1].pk, made[2].pk], "action": "reject", "criterion": "uniqueness",
                     "reason": "seen before"}, format="json")
    assert bulk.status_code == 200 and sorted(bulk.json()["done"]) == sorted([made[1].pk, made[2].pk])
    assert set(Submission.objects.filter(pk__in=[made[1].pk, made[2].pk])
               .values_list("review_criterion", flat=True)) == {"uniqueness"}


def test_an_annotator_cannot_decide(scene_study, annotator):
    submission = _submit(scene_study, annotator, TRIPLET)
    response = logged_in_api(annotator).post(f"/api/submissions/{submission.pk}/review/",
                                             {"action": "approve"}, format="json")
    assert response.status_code in (403, 404)
    assert not BenchmarkItem.objects.filter(version=scene_study.output_version).exists()


def test_the_queue_page_asks_for_a_criterion_and_shows_the_closest_triplets(scene_study, annotator, curator):
    first = _submit(scene_study, annotator, TRIPLET)
    review.approve(first, curator)
    second = _submit(scene_study, make_user("b", ANNOTATOR),
                     {**TRIPLET, "implausible": "Children play football in the classroom."})
    page = logged_in_client(curator).get(reverse("crowd-study-queue", args=[scene_study.slug]))
    html = page.content.decode()
    assert page.status_code == 200
    assert 'data-criterion' in html and "premise necessity" in html and "visual relevance" in html
    assert f"scene-{first.pk}" in html and "data-near-duplicates" in html
    assert reverse("scene-spread", args=[scene_study.slug]) in html
    assert second.pk


# --- Near duplicates --------------------------------------------------------------------------------

def test_near_duplicates_rank_the_closest_triplet_first():
    target = Triplet("t", "t", near_duplicates.triplet_text(TRIPLET["premise"], TRIPLET["plausible"],
                                                            TRIPLET["implausible"]))
    close = Triplet("close", "close", "A teacher opens the classroom door. Children sit at desks with notebooks.")
    far = Triplet("far", "far", "A man holds an umbrella dripping with rain on a busy street.")
    some = Triplet("some", "some", "The door of a kitchen opens in the morning.")
    ranking = near_duplicates.rank([target], [far, close, some], encoder="")
    keys = [m.triplet.key for m in ranking.matches["t"]]
    assert keys[0] == "close" and "far" not in keys[:1]
    scores = [m.score for m in ranking.matches["t"]]
    assert scores == sorted(scores, reverse=True) and 0 < scores[0] <= 1.0001
    assert not ranking.meaning


def test_near_duplicates_of_a_submission_include_pool_items_and_pending_submissions(scene_study, curator):
    authors = [make_user(f"w{n}", ANNOTATOR) for n in range(3)]
    accepted = _submit(scene_study, authors[0], TRIPLET)
    review.approve(accepted, curator)
    pending = _submit(scene_study, authors[1], OTHER)
    target = _submit(scene_study, authors[2], {**OTHER, "premise": "A man shakes an umbrella dripping with water."})
    ranking = near_duplicates.closest_to(target, encoder="")
    keys = [m.triplet.key for m in ranking.matches[f"submission:{target.pk}"]]
    assert keys[0] == f"submission:{pending.pk}"
    pool_item = BenchmarkItem.objects.get(version=scene_study.output_version)
    assert f"item:{pool_item.pk}" in keys or len(keys) == 1  # the pool item only when similar enough
    assert f"submission:{target.pk}" not in keys


def test_near_duplicates_can_rank_by_meaning_with_a_local_encoder(tmp_path):
    folder = build_tiny_model("nli", tmp_path)
    target = Triplet("t", "t", "A teacher opens the classroom door.")
    others = [Triplet("a", "a", "A teacher opens the classroom door."), Triplet("b", "b", "Rain on a street.")]
    ranking = near_duplicates.rank([target], others, encoder=str(folder), min_score=-1)
    assert ranking.meaning and not ranking.problem
    assert ranking.matches["t"][0].triplet.key == "a"
    assert ranking.matches["t"][0].meaning == pytest.approx(1.0, abs=1e-4)
    broken = near_duplicates.rank([target], others, encoder=str(tmp_path / "nothing"))
    assert not broken.meaning and "unavailable" in broken.problem
    assert broken.matches["t"][0].triplet.key == "a"


# --- Spread -------------------------------------------------------------------------------------------

def test_the_spread_counts_accepted_and_proposed_triplets(scene_study, curator, curator_client):
    authors = [make_user(f"s{n}", ANNOTATOR) for n in range(3)]
    a = _submit(scene_study, authors[0], TRIPLET)
    b = _submit(scene_study, authors[1], OTHER)
    _submit(scene_study, authors[2], {**OTHER, "premise": "A wet dog shakes itself at the door.",
                                      "time_direction": "parallel"})
    review.approve(a, curator)
    review.reject(b, curator, criterion="uniqueness")
    result = spread.spread(scene_study)
    assert result["totals"] == {"accepted": 1, "proposed": 3, "pending": 1}
    rows = {d["name"]: {r["value"]: r for r in d["rows"]} for d in result["dimensions"]}
    assert rows["reasoning_category"]["logical"]["accepted"] == 1
    assert rows["reasoning_category"]["physical"]["proposed"] == 2
    assert rows["reasoning_category"]["physical"]["accepted"] == 0
    assert rows["time_direction"]["parallel"]["pending"] == 1
    assert rows["domain"]["education"]["accepted_pct"] == 100.0
    missing = {d["name"]: d["missing"] for d in result["dimensions"]}
    assert "physical" in missing["reasoning_category"] and "logical" not in missing["reasoning_category"]

    page = curator_client.get(reverse("scene-spread", args=[scene_study.slug]))
    html = page.content.decode()
    assert page.status_code == 200 and 'data-total="proposed">3<' in html
    assert 'data-dimension="time_duration"' in html and 'data-dimension="domain"' in html


def test_the_spread_page_is_for_curators_and_scene_studies_only(scene_study, annotator, researcher):
    url = reverse("scene-spread", args=[scene_study.slug])
    assert logged_in_client(annotator).get(url).status_code == 403
    assert logged_in_client(researcher).get(url).status_code == 403
    assert logged_in_client(None).get(url).status_code == 302
    plain = create_study("plain-form", form={"fields": [{"name": "x", "type": "free_text"}]})
    curator = make_user("cur2", CURATOR)
    assert logged_in_client(curator).get(reverse("scene-spread", args=[plain.slug])).status_code == 404
    assert logged_in_client(curator).get(reverse("scene-spread", args=["no-such"])).status_code == 404


def test_a_copy_keeps_its_pool_even_when_the_default_pool_is_frozen(scene_study, curator):
    other = scene_pool.pool_version(curator, "round-2")
    Study.objects.filter(pk=scene_study.pk).update(output_version=other)
    scene_study.refresh_from_db()
    BenchmarkVersion.objects.filter(label=scene_pool.POOL_LABEL).update(frozen=True, checksum="x")
    copy = study_copy.duplicate(scene_study, curator)
    assert copy.output_version_id == other.pk and copy.items.count() == 30
    with pytest.raises(CrowdError) as refused:
        scenes.create_scene_study(curator, "Into the frozen default")
    assert refused.value.status == 409 and not Study.objects.filter(name="Into the frozen default").exists()
