"""The staged reveal holds across studies (annotation.benchmarks.blackswan.reveal_guard): while a worker's staged claim
runs, no claim in any other study, of any kind, streams them the parent video or a clip its current step
does not show yet (file and poster, with and without Range); the claim service never hands them an item
whose video that withholds (409 with the reason when nothing else is left); a staged item does not go to a
worker who has already seen how its video ends; and once the staged claim is finished, everything works
as before."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from annotation import access
from annotation.benchmarks.blackswan import caption_study, localization_study, staged
from annotation.benchmarks.blackswan.models import StagedStep
from annotation.benchmarks.blackswan.staged import DETECTIVE, FORECASTER, REPORTER
from annotation.benchmarks.maia import question_writing
from annotation.crowd.models import Claim, Study, StudyItem
from annotation.models import Video
from config.roles import ANNOTATOR, CURATOR
from tests.benchmarks.blackswan.test_staged import ANSWERS, assert_streams_only, make_split, media_urls
from tests.conftest import create_study, logged_in_api, logged_in_client, make_user

pytestmark = pytest.mark.django_db

NOTE_FORM = {"fields": [{"name": "note", "type": "free_text", "label": "Note"}]}


# --- The other studies: kinds that show a worker the split's video or some of its clips ---------------

def captions_over(curator, *splits) -> Study:
    """BlackSwanSuite's captions study: its workers stream V_pre and V_post (its own media grant)."""
    return caption_study.create_caption_study(curator, [split.video for split in splits], name="Captions",
                                              open_now=True, expert_share=0.0)


def localization_over(curator, *splits) -> Study:
    """BlackSwanSuite's localization study: its workers stream the whole video (the item's own video)."""
    return localization_study.create_localization_study(curator, [split.video for split in splits], k=1,
                                                        name="Localize", open_now=True)


def maia_questions_over(curator, *splits) -> Study:
    """A MAIA question-writing study over the same library video."""
    return question_writing.create_question_study(curator, "Domande", videos=[split.video for split in splits],
                                                  open_now=True)


def form_over_v_post(curator, *splits) -> Study:
    """A plain form study whose items are the V_post clips themselves."""
    return create_study("ends", form=NOTE_FORM, items=0, extra_rows=[
        {"external_id": f"end-{split.pk}", "payload": {}, "video": split.post_video} for split in splits])


OTHER_STUDIES = {"captions": captions_over, "localization": localization_over, "maia_questions": maia_questions_over,
                 "form_over_v_post": form_over_v_post}
# what a claim in each of them streams of the split when nothing keeps it back
STREAMS = {"captions": {"pre", "post"}, "localization": {"parent"}, "maia_questions": {"parent"},
           "form_over_v_post": {"post"}}


# --- Fixtures and helpers ----------------------------------------------------------------------------

@pytest.fixture
def split(tmp_path, curator):
    return make_split(tmp_path / "clips", curator)


@pytest.fixture
def other_split(tmp_path, curator):
    return make_split(tmp_path / "other", curator, name="other", shade=130)


@pytest.fixture
def staged_study(split, curator):
    return staged.create_staged_study([split], "Staged reveal", curator, open_now=True, expert_share=0.0,
                                      expert_first=0)


@pytest.fixture
def worker(db):
    return make_user("wanda", ANNOTATOR)


def claim_url(study) -> str:
    return reverse("api-study-claim", kwargs={"slug": study.slug})


def claim_for(api, study) -> Claim:
    response = api.post(claim_url(study))
    assert response.status_code == 201, response.content
    return Claim.objects.get(pk=response.json()["id"])


def open_staged_claim(api, study, step=FORECASTER) -> Claim:
    """The worker's staged claim, opened and walked to `step` through the API."""
    claim = claim_for(api, study)
    assert api.get(reverse("api-claim-stage", kwargs={"pk": claim.pk})).json()["step"] == FORECASTER
    for done in staged.STEPS[:staged.STEPS.index(step)]:
        submitted = api.post(reverse("api-claim-step-submit", kwargs={"pk": claim.pk, "step": done}),
                             {"data": ANSWERS[done]}, format="json")
        assert submitted.status_code == 201, submitted.content
    claim.refresh_from_db()
    assert claim.step == step
    return claim


def record_running_staged_claim(study, worker, step=FORECASTER) -> Claim:
    """A running staged claim recorded beside claims the worker holds already, as a concurrent request of
    theirs can leave it (each request's check ran before the other's claim was written), or as claims made
    before the rule existed are."""
    now = timezone.now()
    item = StudyItem.objects.get(study=study)
    claim = Claim.objects.create(study=study, item=item, worker=worker, status=Claim.Status.ACTIVE, claimed_at=now,
                                 lease_expires_at=now + timedelta(hours=1), step=step)
    StagedStep.objects.create(claim=claim, step=step, started_at=now)
    return claim


def streams_of(client, video: Video) -> tuple[int, int, int]:
    url = media_urls(video)[0]
    statuses = []
    for headers in ({}, {"HTTP_RANGE": "bytes=0-99"}, {"HTTP_RANGE": "bytes=-64"}):
        response = client.get(url, **headers)
        if response.streaming:
            b"".join(response.streaming_content)
        statuses.append(response.status_code)
    return tuple(statuses)


# --- The staged claim first: the other study's item is kept back, and so is every file of the outcome --

@pytest.mark.parametrize("other", OTHER_STUDIES)
def test_a_running_forecaster_step_is_not_told_the_outcome_by_a_claim_in_another_study(
        other, split, staged_study, curator, worker):
    api, client = logged_in_api(worker), logged_in_client(worker)
    open_staged_claim(api, staged_study)
    study = OTHER_STUDIES[other](curator, split)

    refused = api.post(claim_url(study))
    assert refused.status_code == 409, refused.content
    assert "Staged reveal" in refused.json()["error"] and "finish" in refused.json()["error"]
    assert not Claim.objects.filter(study=study).exists()
    assert StudyItem.objects.get(study=study).open_slots == study.annotators_per_item  # the place went back
    # V_post, V_main, the full and Detective clips and the parent: 403 with and without Range, posters too
    assert_streams_only(client, split, {"pre"})
    for part in ("parent", "post", "main", "full"):
        video = split.video if part == "parent" else getattr(split, f"{part}_video")
        assert client.get(media_urls(video)[1]).status_code == 403, part


@pytest.mark.parametrize("other", ["captions", "localization"])
def test_the_worker_page_of_the_other_study_says_why_no_item_is_given(other, split, staged_study, curator, worker):
    open_staged_claim(logged_in_api(worker), staged_study)
    study = OTHER_STUDIES[other](curator, split)
    page = logged_in_client(worker).post(reverse("crowd-work", kwargs={"slug": study.slug}), follow=True)
    assert page.status_code == 409
    html = page.content.decode()
    assert "Staged reveal" in html and "no other task shows you more of this video" in html
    assert not Claim.objects.filter(study=study).exists()


@pytest.mark.parametrize("other", ["captions", "localization", "form_over_v_post"])
def test_another_video_of_the_other_study_is_handed_out_instead(other, split, other_split, staged_study, curator,
                                                                worker):
    api = logged_in_api(worker)
    open_staged_claim(api, staged_study)
    study = OTHER_STUDIES[other](curator, split, other_split)
    claim = claim_for(api, study)
    assert claim.item.video_id in (other_split.video_id, other_split.post_video_id)
    assert_streams_only(logged_in_client(worker), split, {"pre"})
    assert_streams_only(logged_in_client(worker), other_split, STREAMS[other])


# --- Claims that exist beside a running staged claim: the media decision withholds the outcome --------

@pytest.mark.parametrize("other", OTHER_STUDIES)
def test_a_claim_already_held_streams_nothing_the_running_step_hides(other, split, staged_study, curator, worker):
    api, client = logged_in_api(worker), logged_in_client(worker)
    other_claim = claim_for(api, OTHER_STUDIES[other](curator, split))
    assert_streams_only(client, split, STREAMS[other])  # what that claim shows on its own

    record_running_staged_claim(staged_study, worker)
    assert_streams_only(client, split, {"pre"})
    other_claim.refresh_from_db()
    assert other_claim.status == Claim.Status.ACTIVE


@pytest.mark.parametrize(("step", "shown"), [(DETECTIVE, {"pre", "post"}), (REPORTER, {"pre", "post", "main", "full"})])
def test_later_steps_open_their_own_clips_only(step, shown, split, staged_study, curator, worker):
    """At the Detective step V_main, the full clip and the parent stay withheld from the other claim."""
    client = logged_in_client(worker)
    claim_for(logged_in_api(worker), localization_over(curator, split))  # streams the parent video
    record_running_staged_claim(staged_study, worker, step)
    assert_streams_only(client, split, shown)


def test_another_split_of_the_same_video_is_withheld_too(split, staged_study, curator, worker, tmp_path):
    """A clip cut from the parent by another split (e.g. a recut) shows the same video: it is withheld."""
    recut = make_split(tmp_path / "recut", curator, name="recut", shade=7)
    recut.video = split.video
    recut.save()
    client = logged_in_client(worker)
    claim_for(logged_in_api(worker), form_over_v_post(curator, recut))
    assert streams_of(client, recut.post_video) == (200, 206, 206)
    record_running_staged_claim(staged_study, worker)
    assert streams_of(client, recut.post_video) == (403, 403, 403)
    assert streams_of(client, recut.pre_video) == (403, 403, 403)


# --- The other way round: the staged item does not go to someone who has seen the outcome ------------

@pytest.mark.parametrize("other", OTHER_STUDIES)
def test_a_staged_item_is_not_handed_to_a_worker_who_saw_its_video_in_another_study(
        other, split, staged_study, curator, worker):
    api = logged_in_api(worker)
    study = OTHER_STUDIES[other](curator, split)
    held = claim_for(api, study)
    refused = api.post(claim_url(staged_study))
    assert refused.status_code == 409, refused.content
    assert study.name in refused.json()["error"] and "how it ends" in refused.json()["error"]
    assert not Claim.objects.filter(study=staged_study).exists()
    # giving that item back changes nothing: it has been seen
    assert api.post(reverse("api-claim-release", kwargs={"pk": held.pk})).status_code == 200
    assert api.post(claim_url(staged_study)).status_code == 409


def test_a_worker_who_saw_one_video_gets_the_staged_item_of_another(split, other_split, curator, worker):
    api = logged_in_api(worker)
    claim_for(api, localization_over(curator, split))
    study = staged.create_staged_study([split, other_split], "Two videos", curator, open_now=True)
    assert claim_for(api, study).item.video_id == other_split.video_id


def test_a_worker_who_saw_only_v_pre_may_still_forecast(split, staged_study, curator, worker):
    api = logged_in_api(worker)
    claim_for(api, create_study("beginnings", form=NOTE_FORM, items=0,
                                extra_rows=[{"external_id": "pre", "payload": {}, "video": split.pre_video}]))
    assert claim_for(api, staged_study).item.video_id == split.video_id


# --- Once the staged claim is finished, the other studies work as before --------------------------------

@pytest.mark.parametrize("other", OTHER_STUDIES)
def test_after_the_staged_claim_is_submitted_the_other_study_works_normally(
        other, split, staged_study, curator, worker):
    api, client = logged_in_api(worker), logged_in_client(worker)
    claim = open_staged_claim(api, staged_study, REPORTER)
    done = api.post(reverse("api-claim-step-submit", kwargs={"pk": claim.pk, "step": REPORTER}),
                    {"data": ANSWERS[REPORTER]}, format="json")
    assert done.status_code == 201, done.content
    claim.refresh_from_db()
    assert claim.status != Claim.Status.ACTIVE

    claim_for(api, OTHER_STUDIES[other](curator, split))
    assert_streams_only(client, split, STREAMS[other])


# --- The registry: a veto wins over every grant, for workers only --------------------------------------

def test_a_registered_veto_wins_over_every_grant_but_not_over_a_staff_role(split, worker, monkeypatch):
    curator = make_user("carla", CURATOR)
    claim_for(logged_in_api(worker), form_over_v_post(curator, split))
    assert access.can_view_media(worker, split.post_video)
    monkeypatch.setattr(access, "_VETOES", [*access._VETOES, lambda user, asset: "not now"])
    assert not access.can_view_media(worker, split.post_video)
    assert access.withheld(worker, split.post_video) == "not now"
    assert access.can_view_media(curator, split.post_video) and access.withheld(curator, split.post_video) == ""
