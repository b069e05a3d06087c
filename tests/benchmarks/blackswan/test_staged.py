"""BlackSwanSuite's staged reveal (annotation.benchmarks.blackswan.staged): one claim walks Forecaster → Detective →
Reporter in order, each step with its own draft and frozen submission, and the server streams a
clip only when the claim's current step shows it (media views with and without Range, posters, the
API, the step's page)."""

import json
from collections import Counter
from datetime import timedelta
from pathlib import Path

import av
import pytest
from django.db import DatabaseError, IntegrityError, transaction
from django.urls import reverse
from django.utils import timezone

from annotation.benchmarks.blackswan import importer, splits, staged
from annotation.benchmarks.blackswan.staged import DETECTIVE, DONE, FORECASTER, REPORTER, StagedStep
from annotation.crowd import review
from annotation.crowd.errors import CrowdError
from annotation.crowd.models import Claim, Draft, Study, StudyItem, Submission
from annotation.importers.base import Problems
from annotation.models import MediaAsset, Video, VideoSplit
from config.models import StateChange
from config.roles import ANNOTATOR
from evaluation.benchmarks.blackswan import benchmark as blackswan_eval
from tests.annotation.test_crowd_concurrency import file_database  # noqa: F401  (a fixture)
from tests.conftest import ingest_path, logged_in_api, logged_in_client, make_user
from tests.generation.test_splitting import make_stamped_clip

pytestmark = pytest.mark.django_db

SCENARIOS = ["The rider jumps the ramp and lands well.", "The bike slips and the rider falls off.",
             "The rider stops before the ramp."]
DETECTIVE_ANSWERS = {"forecast_valid": ["no", "yes", "no"],
                     "new_hypotheses": ["The rider hit the ramp's edge and fell.", "", "The rider swerved and fell."]}
REPORTER_ANSWERS = {"hypothesis_valid": ["yes", "no", "no"],
                    "caption": "A rider speeds towards a ramp, clips its edge and falls onto the grass."}
ANSWERS = {FORECASTER: {"scenarios": SCENARIOS}, DETECTIVE: DETECTIVE_ANSWERS, REPORTER: REPORTER_ANSWERS}
PARTS = ("pre", "main", "post", "detective", "full")
# what each step may stream: V_pre always, V_post from step 2, V_main and the full clip in step 3
ALLOWED = {FORECASTER: {"pre"}, DETECTIVE: {"pre", "post"}, REPORTER: {"pre", "post", "main", "full"}, DONE: set()}


# --- Fixtures: a finished split whose five clips are small real MP4 files -------------------------

def _mp4(path: Path, shade: int, frames: int = 6) -> Path:
    with av.open(str(path), mode="w") as container:
        stream = container.add_stream("mpeg4", rate=25)
        stream.width, stream.height, stream.pix_fmt = 64, 48, "yuv420p"
        for index in range(frames):
            frame = av.VideoFrame(64, 48, "rgb24")
            frame.planes[0].update(bytes([(shade + index * 3) % 256]) * (64 * 48 * 3))
            container.mux(stream.encode(frame))
        container.mux(stream.encode(None))
    return path


def make_split(folder: Path, curator, *, name: str = "clip", shade: int = 0) -> VideoSplit:
    """A done VideoSplit of a 4 s, 25 fps video: V_pre [0, 30), V_main [30, 60), V_post [60, 100)."""
    folder.mkdir(parents=True, exist_ok=True)
    videos = {}
    for offset, part in enumerate(("parent", *PARTS)):
        video = ingest_path(_mp4(folder / f"{name}-{part}.mp4", shade + offset * 20), user=curator, probe=False)
        video.status = MediaAsset.Status.READY
        video.duration, video.fps = 4.0, 25.0
        if part != "parent":
            start = {"pre": 0, "main": 30, "post": 60}.get(part, 0)
            video.provenance = {"part": part, "start_frame": start, "start_time": start / 25}
        video.save()
        videos[part] = video
    return VideoSplit.objects.create(
        video=videos["parent"], event_start=1.2, event_end=2.4, status=VideoSplit.Status.DONE, frame_count=100,
        fps=25.0, main_start_frame=30, main_end_frame=60, **{f"{part}_video": videos[part] for part in PARTS})


@pytest.fixture
def split(tmp_path, curator):
    return make_split(tmp_path / "clips", curator)


@pytest.fixture
def study(split, curator):
    return staged.create_staged_study([split], "BlackSwan staged", curator, open_now=True, expert_share=0.0,
                                      expert_first=0)


@pytest.fixture
def worker(db):
    return make_user("wanda", ANNOTATOR)


@pytest.fixture
def worker_api(worker):
    return logged_in_api(worker)


def claim_for(api, study) -> Claim:
    response = api.post(reverse("api-study-claim", kwargs={"slug": study.slug}))
    assert response.status_code == 201, response.content
    return Claim.objects.get(pk=response.json()["id"])


@pytest.fixture
def claim(worker_api, study) -> Claim:
    return claim_for(worker_api, study)


def step_url(claim, step, verb) -> str:
    return reverse(f"api-claim-step-{verb}", kwargs={"pk": claim.pk, "step": step})


def submit(api, claim, step, data=None, active_seconds=0):
    return api.post(step_url(claim, step, "submit"), {"data": ANSWERS[step] if data is None else data,
                                                      "active_seconds": active_seconds}, format="json")


def save(api, claim, step, data, active_seconds=0):
    return api.put(step_url(claim, step, "draft"), {"data": data, "active_seconds": active_seconds}, format="json")


def advance(api, claim, to_step) -> None:
    """Submit every step before `to_step` (DONE: all three)."""
    for step in staged.STEPS:
        if step == to_step:
            return
        response = submit(api, claim, step)
        assert response.status_code == 201, response.content


def snapshot(claim) -> tuple:
    """Everything a refused request must leave as it was."""
    claim.refresh_from_db()
    return (claim.step, claim.status, claim.lease_expires_at,
            sorted(StagedStep.objects.filter(claim=claim).values_list(
                "step", "draft", "draft_revision", "answers", "active_seconds", "submitted_at")),
            StateChange.objects.count(), Submission.objects.count(), Draft.objects.count())


# --- The study kind -------------------------------------------------------------------------------

def test_a_staged_study_has_one_item_per_split_naming_it(split, curator):
    study = staged.create_staged_study([split], "Black swans", curator)
    assert (study.step_kind, study.state, study.annotators_per_item) == (staged.STUDY_KIND, Study.State.DRAFT, 1)
    item = StudyItem.objects.get(study=study)
    assert item.payload == {"split_id": split.pk}
    assert item.video_id == split.video_id
    assert item.external_id == f"video-{split.video_id}"
    assert item.open_slots == 1


def test_a_staged_study_refuses_unfinished_splits_and_non_curators(split, curator, worker):
    running = VideoSplit.objects.create(video=split.video, event_start=1, event_end=2,
                                        status=VideoSplit.Status.RUNNING)
    with pytest.raises(CrowdError) as refused:
        staged.create_staged_study([split, running], "Half done", curator)
    assert refused.value.status == 400 and "not done" in str(refused.value.details)
    with pytest.raises(CrowdError) as refused:
        staged.create_staged_study([split], "Not mine", worker)
    assert refused.value.status == 403
    assert not Study.objects.exists() and not StudyItem.objects.exists()


def test_items_added_through_the_api_must_name_a_finished_split(split, curator, tmp_path):
    study = staged.create_staged_study([split], "Black swans", curator)
    other = make_split(tmp_path / "other", curator, name="other", shade=130)
    api = logged_in_api(curator)
    url = reverse("api-study-items", kwargs={"slug": study.slug})
    bad = api.post(url, [{"external_id": "x", "payload": {"video": 3}}], format="json")
    missing = api.post(url, [{"external_id": "x", "payload": {"split_id": 987654}}], format="json")
    assert (bad.status_code, missing.status_code) == (400, 400)
    good = api.post(url, [{"external_id": "other", "payload": {"split_id": str(other.pk)}}], format="json")
    assert good.status_code == 201, good.content
    item = StudyItem.objects.get(study=study, external_id="other")
    assert (item.video_id, item.payload) == (other.video_id, {"split_id": other.pk})


# --- Steps in order, drafts per step, frozen submissions, time per step ------------------------------

def test_the_three_steps_in_order_with_drafts_history_and_times(worker_api, claim, worker):
    state = worker_api.get(reverse("api-claim-stage", kwargs={"pk": claim.pk}))
    assert state.status_code == 200 and state["Cache-Control"] == "private, no-store"
    assert state.json()["step"] == FORECASTER and state.json()["draft"] == {}

    # step 1: a draft is kept per step and restored
    assert save(worker_api, claim, FORECASTER, {"scenarios": SCENARIOS[:2]}, active_seconds=3.5).status_code == 200
    assert worker_api.get(reverse("api-claim-stage", kwargs={"pk": claim.pk})).json()["draft"] == {
        "scenarios": SCENARIOS[:2]}
    claim.refresh_from_db()
    lease_before = claim.lease_expires_at
    first = submit(worker_api, claim, FORECASTER, active_seconds=1.5)
    assert first.status_code == 201, first.content
    assert first.json() == {"step": FORECASTER, "next_step": DETECTIVE, "finished": False, "submission": None,
                            "feedback": {}}
    claim.refresh_from_db()
    assert claim.step == DETECTIVE and claim.status == Claim.Status.ACTIVE
    assert claim.lease_expires_at > lease_before

    # step 2 starts with an empty draft of its own, and sees the step-1 answers
    state = worker_api.get(reverse("api-claim-stage", kwargs={"pk": claim.pk})).json()
    assert state["draft"] == {} and state["earlier"] == {"forecasts": SCENARIOS}
    assert save(worker_api, claim, DETECTIVE, {"forecast_valid": ["no", None, None]}).status_code == 200
    assert submit(worker_api, claim, DETECTIVE, active_seconds=2).status_code == 201
    state = worker_api.get(reverse("api-claim-stage", kwargs={"pk": claim.pk})).json()
    assert state["earlier"]["hypotheses"] == [DETECTIVE_ANSWERS["new_hypotheses"][0], SCENARIOS[1],
                                              DETECTIVE_ANSWERS["new_hypotheses"][2]]

    last = submit(worker_api, claim, REPORTER, active_seconds=4)
    assert last.status_code == 201, last.content
    assert last.json()["finished"] is True
    claim.refresh_from_db()
    assert (claim.status, claim.step) == (Claim.Status.SUBMITTED, DONE)

    rows = {row.step: row for row in StagedStep.objects.filter(claim=claim)}
    assert rows[FORECASTER].draft == {"scenarios": SCENARIOS[:2]}  # the last draft is kept beside the answers
    assert rows[FORECASTER].answers == {"scenarios": SCENARIOS}
    assert [rows[s].active_seconds for s in staged.STEPS] == [5.0, 2.0, 4.0]
    assert rows[FORECASTER].started_at == claim.claimed_at
    assert rows[DETECTIVE].started_at == rows[FORECASTER].submitted_at
    assert rows[REPORTER].started_at == rows[DETECTIVE].submitted_at
    for row in rows.values():
        assert row.wall_seconds == pytest.approx((row.submitted_at - row.started_at).total_seconds())
    submission = Submission.objects.get(claim=claim)
    assert submission.data == ANSWERS
    assert submission.active_seconds == 11.0
    assert submission.wall_seconds == pytest.approx((claim.finished_at - claim.claimed_at).total_seconds())
    assert StudyItem.objects.get(pk=claim.item_id).completed_count == 1
    assert not Draft.objects.filter(claim=claim).exists()  # the generic draft is not used by staged claims

    changes = [(e.from_state, e.to_state) for e in StateChange.objects.of(Claim, claim.pk)]
    assert changes == [("", "active"), ("", FORECASTER), (FORECASTER, DETECTIVE), (DETECTIVE, REPORTER),
                       (REPORTER, DONE), ("active", "submitted")]
    assert all(e.actor_id == worker.pk for e in StateChange.objects.of(Claim, claim.pk))
    assert [t["step"] for t in staged.step_times(claim)] == list(staged.STEPS)


@pytest.mark.parametrize("step", [DETECTIVE, REPORTER])
def test_a_later_step_before_its_turn_is_409_and_writes_nothing(worker_api, claim, step):
    save(worker_api, claim, FORECASTER, {"scenarios": SCENARIOS[:1]})
    before = snapshot(claim)
    for response in (submit(worker_api, claim, step), save(worker_api, claim, step, ANSWERS[step])):
        assert response.status_code == 409, response.content
        assert "opens after you submit step 1" in response.json()["error"]
    assert snapshot(claim) == before


def test_reporter_before_detective_is_409(worker_api, claim):
    advance(worker_api, claim, DETECTIVE)
    before = snapshot(claim)
    assert submit(worker_api, claim, REPORTER).status_code == 409
    assert snapshot(claim) == before


def test_a_submitted_step_is_frozen(worker_api, claim):
    advance(worker_api, claim, REPORTER)
    before = snapshot(claim)
    changed = {"scenarios": ["Something else entirely.", "Another thing again.", "And a third one."]}
    for step, data in ((FORECASTER, changed), (DETECTIVE, DETECTIVE_ANSWERS)):
        for response in (submit(worker_api, claim, step, data), save(worker_api, claim, step, data)):
            assert response.status_code == 409
            assert "already submitted" in response.json()["error"]
    assert snapshot(claim) == before
    # the database itself refuses to change a submitted step
    with pytest.raises((IntegrityError, DatabaseError)), transaction.atomic():
        StagedStep.objects.filter(claim=claim, step=FORECASTER).update(answers=changed)
    assert StagedStep.objects.get(claim=claim, step=FORECASTER).answers == {"scenarios": SCENARIOS}


def test_a_finished_claim_takes_no_more_steps(worker_api, claim):
    advance(worker_api, claim, DONE)
    before = snapshot(claim)
    for step in staged.STEPS:
        assert submit(worker_api, claim, step).status_code == 409
        assert save(worker_api, claim, step, {}).status_code == 409
    assert snapshot(claim) == before


@pytest.mark.parametrize(("step", "data", "field"), [
    (FORECASTER, {"scenarios": SCENARIOS[:2]}, "scenarios"),
    (FORECASTER, {"scenarios": [SCENARIOS[0], "", SCENARIOS[2]]}, "scenarios.1"),
    (FORECASTER, {"scenarios": [SCENARIOS[0], SCENARIOS[0].upper(), SCENARIOS[2]]}, "scenarios.1"),
    (FORECASTER, {"scenarios": SCENARIOS, "extra": 1}, "extra"),
    (DETECTIVE, {"forecast_valid": ["no", "yes", "no"], "new_hypotheses": ["He fell off.", "", ""]},
     "new_hypotheses.2"),
    (DETECTIVE, {"forecast_valid": ["no", "maybe", "yes"], "new_hypotheses": ["He fell off.", "", ""]},
     "forecast_valid.1"),
    (REPORTER, {"hypothesis_valid": ["yes", "no", "no"], "caption": " "}, "caption"),
    (REPORTER, {"hypothesis_valid": ["yes", None, "no"], "caption": REPORTER_ANSWERS["caption"]},
     "hypothesis_valid.1"),
])
def test_incomplete_answers_are_400_per_field_and_nothing_is_written(worker_api, claim, step, data, field):
    advance(worker_api, claim, step)
    before = snapshot(claim)
    response = submit(worker_api, claim, step, data)
    assert response.status_code == 400, response.content
    assert field in response.json()["details"]
    assert snapshot(claim) == before


def test_a_new_hypothesis_is_kept_only_for_an_invalidated_forecast(worker_api, claim):
    advance(worker_api, claim, DETECTIVE)
    data = {"forecast_valid": ["yes", "yes", "no"], "new_hypotheses": ["left over", "", "The rider swerved."]}
    assert submit(worker_api, claim, DETECTIVE, data).status_code == 201
    assert StagedStep.objects.get(claim=claim, step=DETECTIVE).answers["new_hypotheses"] == [
        "", "", "The rider swerved."]


def test_drafts_are_checked_for_shape(worker_api, claim):
    before = snapshot(claim)
    for data in ({"caption": "not this step"}, {"scenarios": "text"}, {"scenarios": ["a"] * 4},
                 {"scenarios": ["x" * (staged.MAX_TEXT + 1)]}):
        assert save(worker_api, claim, FORECASTER, data).status_code == 400
    assert snapshot(claim) == before


def test_someone_elses_claim_and_the_generic_endpoints_are_refused(worker_api, claim, study):
    other_api = logged_in_api(make_user("otto", ANNOTATOR))
    before = snapshot(claim)
    # another worker's claim does not exist for them
    assert other_api.get(reverse("api-claim-stage", kwargs={"pk": claim.pk})).status_code == 404
    assert submit(other_api, claim, FORECASTER).status_code == 404
    assert save(other_api, claim, FORECASTER, {"scenarios": SCENARIOS}).status_code == 404
    # the form studies' draft and submit endpoints do not take staged answers
    for verb in ("draft", "submit"):
        response = worker_api.post(reverse(f"api-claim-{verb}", kwargs={"pk": claim.pk}),
                                   {"data": {"scenarios": SCENARIOS}}, format="json")
        assert response.status_code == 409, response.content
    assert submit(worker_api, claim, "oracle", {"scenarios": SCENARIOS}).status_code == 404
    assert worker_api.get(reverse("api-claim-stage", kwargs={"pk": 987654})).status_code == 404
    assert snapshot(claim) == before


def test_returning_the_item_frees_it_for_another_worker(worker_api, claim, study):
    advance(worker_api, claim, DETECTIVE)
    assert worker_api.post(reverse("api-claim-release", kwargs={"pk": claim.pk})).status_code == 200
    assert submit(worker_api, claim, DETECTIVE).status_code == 409
    other = claim_for(logged_in_api(make_user("otto", ANNOTATOR)), study)
    assert other.item_id == claim.item_id
    assert worker_api.get(reverse("api-claim-stage", kwargs={"pk": other.pk})).status_code == 404


# --- What the server hands out per step -------------------------------------------------------------

def media_urls(video: Video) -> list[str]:
    return [reverse("media-video-file", kwargs={"pk": video.pk}),
            reverse("media-video-poster", kwargs={"pk": video.pk})]


def clip_ids(split) -> dict:
    return {"parent": split.video_id, **{part: getattr(split, f"{part}_video_id") for part in PARTS}}


def assert_streams_only(client, split, allowed: set[str]) -> None:
    """Each clip's file: 200 without Range, 206 with one, when allowed; 403 otherwise."""
    for part, pk in clip_ids(split).items():
        url = reverse("media-video-file", kwargs={"pk": pk})
        whole = client.get(url)
        ranged = client.get(url, HTTP_RANGE="bytes=0-99")
        tail = client.get(url, HTTP_RANGE="bytes=-64")
        statuses = (whole.status_code, ranged.status_code, tail.status_code)
        for response in (whole, ranged, tail):
            if response.streaming:
                b"".join(response.streaming_content)
        if part in allowed:
            assert statuses == (200, 206, 206), (part, statuses)
            assert whole["Cache-Control"] == "private, no-store"
            assert ranged["Content-Range"].startswith("bytes 0-99/")
        else:
            assert statuses == (403, 403, 403), (part, statuses)
            assert b"ftyp" not in whole.content and b"ftyp" not in ranged.content


@pytest.mark.parametrize("step", [FORECASTER, DETECTIVE, REPORTER, DONE])
def test_each_step_streams_only_its_clips(worker_api, claim, worker, split, step):
    advance(worker_api, claim, step)
    assert_streams_only(logged_in_client(worker), split, ALLOWED[step])


def test_a_worker_without_a_claim_streams_nothing_and_staff_everything(claim, split, curator):
    assert_streams_only(logged_in_client(make_user("otto", ANNOTATOR)), split, set())
    assert_streams_only(logged_in_client(curator), split, {"parent", *PARTS})


def test_an_annotator_in_two_studies_gets_each_clip_only_by_its_own_step(worker_api, claim, worker, split, curator):
    """A form study over the parent video does not open the staged clips; while the staged claim runs, its
    item (the parent video) is not handed out either (annotation.benchmarks.blackswan.reveal_guard)."""
    from tests.conftest import create_study

    create_study("plain", form={"fields": [{"name": "note", "type": "free_text"}]}, items=0,
                 extra_rows=[{"external_id": "parent", "payload": {}, "video": split.video}])
    plain = Study.objects.get(slug="plain")
    assert worker_api.post(reverse("api-study-claim", kwargs={"slug": plain.slug})).status_code == 409
    assert_streams_only(logged_in_client(worker), split, {"pre"})


@pytest.mark.parametrize("step", [FORECASTER, DETECTIVE, REPORTER])
def test_the_page_of_a_step_names_only_its_clips(worker_api, claim, worker, study, split, step):
    advance(worker_api, claim, step)
    response = logged_in_client(worker).get(reverse("crowd-work", kwargs={"slug": study.slug}))
    assert response.status_code == 200
    assert "no-store" in response["Cache-Control"] and "private" in response["Cache-Control"]
    html = response.content.decode()
    shown = {FORECASTER: {"pre"}, DETECTIVE: {"pre", "post"}, REPORTER: {"full"}}[step]
    for part, pk in clip_ids(split).items():
        urls = media_urls(Video.objects.get(pk=pk))
        if part in shown:
            assert urls[0] in html, part
        else:
            assert not any(url in html for url in urls), f"the {step} page names the {part} clip"
        assert f"/api/videos/{pk}/" not in html
    assert f'data-step="{step}"' in html
    assert reverse("api-claim-step-submit", kwargs={"pk": claim.pk, "step": step}) in html
    assert ('data-hidden-part="main"' in html) is (step == DETECTIVE)
    if step == DETECTIVE:  # the forecasts are shown for marking
        assert all(text in html for text in SCENARIOS)


def test_the_stage_api_lists_only_the_steps_players(worker_api, claim, split):
    for step in staged.STEPS:
        parts = worker_api.get(reverse("api-claim-stage", kwargs={"pk": claim.pk})).json()["parts"]
        expected = {FORECASTER: ["pre"], DETECTIVE: ["pre", "post"], REPORTER: ["full"]}[step]
        assert [p["part"] for p in parts] == expected
        assert [p["video_id"] for p in parts] == [getattr(split, f"{name}_video_id") for name in expected]
        body = json.dumps(parts)
        hidden = set(PARTS) - ALLOWED[step] | {"parent"}
        assert not any(f"/media/files/videos/{clip_ids(split)[name]}/" in body for name in hidden)
        assert submit(worker_api, claim, step).status_code == 201
    assert worker_api.get(reverse("api-claim-stage", kwargs={"pk": claim.pk})).json()["parts"] == []


def test_the_generic_claim_api_carries_no_media_url(worker_api, claim, split):
    body = worker_api.get(reverse("api-claim-detail", kwargs={"pk": claim.pk})).content.decode()
    assert "/media/files/" not in body


# --- Vetting and the release record ------------------------------------------------------------------

def test_a_finished_claim_goes_to_expert_review_like_any(split, curator, worker_api):
    study = staged.create_staged_study([split], "Vetted", curator, open_now=True, expert_first=1)
    claim = claim_for(worker_api, study)
    advance(worker_api, claim, DONE)
    submission = Submission.objects.get(claim=claim)
    assert (submission.review_state, submission.review_queue) == (Submission.Review.PENDING, "expert_sample")
    assert list(review.queue(study, "expert_sample")) == [submission]
    review.reject(submission, curator, reason="the caption misses the fall")
    claim.refresh_from_db()
    with pytest.raises(ValueError, match="rejected"):
        staged.release_record(claim)


def test_the_release_record_has_the_release_shape(worker_api, claim, split, curator, tmp_path):
    with pytest.raises(ValueError):
        staged.release_record(claim)  # not finished yet
    advance(worker_api, claim, DONE)
    claim.refresh_from_db()
    record = staged.release_record(claim)
    assert record == {
        "id": claim.item.external_id, "preevent": 0.0, "event": 1.2, "postevent": 2.4,
        "task1_gt": SCENARIOS, "task2_checkboxes": ["no", "yes", "no"],
        "task2_gt": ["The rider hit the ramp's edge and fell.", SCENARIOS[1], "The rider swerved and fell."],
        "task3_checkboxes": ["yes", "no", "no"], "task3_gt": REPORTER_ANSWERS["caption"],
    }
    # evaluation reads it as the paper's references and hard/easy mark
    assert blackswan_eval.references("forecaster", record) == SCENARIOS
    assert blackswan_eval.references("detective", record) == record["task2_gt"]
    assert blackswan_eval.references("reporter", record) == [record["task3_gt"]]
    assert blackswan_eval.is_hard(record) is False
    assert blackswan_eval.split(record, 4.0) == {"pre": (0.0, 1.2), "main": (1.2, 2.4), "post": (2.4, 4.0)}
    # and the importer takes it as a VAR_Data.json record
    release = tmp_path / "release"
    (release / "videos").mkdir(parents=True)
    (release / "VAR_Data.json").write_text(json.dumps([record]))
    Path(release / "videos" / f"{record['id']}.mp4").write_bytes(Path(split.video.file.path).read_bytes())
    problems = Problems()
    specs = importer.read(release, problems)
    assert not problems.errors, problems.errors
    assert [spec.payload["task2_gt"] for spec in specs] == [record["task2_gt"]]
    assert specs[0].payload["event"] == 1.2


def test_a_reviewers_correction_is_what_the_release_holds(worker_api, claim, curator):
    advance(worker_api, claim, DONE)
    submission = Submission.objects.get(claim=claim)
    corrected = json.loads(json.dumps(submission.data))
    corrected[REPORTER]["caption"] = "A rider clips a ramp and falls."
    Submission.objects.filter(pk=submission.pk).update(reviewed_data=corrected)
    claim.refresh_from_db()
    assert staged.release_record(claim)["task3_gt"] == "A rider clips a ramp and falls."
    rows = staged.readable_answers(corrected)
    assert rows[0] == {"label": "Forecast 1", "value": SCENARIOS[0], "extra": []}
    assert rows[-1]["value"] == "A rider clips a ramp and falls."


def test_release_times_come_from_a_real_split(curator, worker_api, tmp_path, bigbuckbunny,
                                              django_capture_on_commit_callbacks):
    """Cut 4 s of Big Buck Bunny with the library's split job; the record's times are the clips' starts."""
    video = ingest_path(make_stamped_clip(bigbuckbunny, tmp_path / "bunny.mp4"), user=curator)
    with django_capture_on_commit_callbacks(execute=True):
        split = splits.split_library_video(video, 1.2, 2.4, curator)
    split.refresh_from_db()
    assert split.status == VideoSplit.Status.DONE, split.message
    study = staged.create_staged_study([split], "Real", curator, open_now=True, expert_first=0, expert_share=0)
    claim = claim_for(worker_api, study)
    advance(worker_api, claim, DONE)
    claim.refresh_from_db()
    record = staged.release_record(claim)
    assert (record["preevent"], record["event"], record["postevent"]) == (0.0, 1.2, 2.4)
    assert record["event"] == split.main_video.provenance["start_time"]
    assert "end" not in record  # V_post runs to the end of the video


def test_a_trimmed_split_gives_the_release_where_v_pre_starts_and_v_post_ends(
        curator, worker_api, tmp_path, bigbuckbunny, django_capture_on_commit_callbacks):
    """The authors' 0.17 s trimmed at each end of a 4 s, 25 fps video: V_pre from 0.16 s, V_post to 3.84 s."""
    video = ingest_path(make_stamped_clip(bigbuckbunny, tmp_path / "bunny.mp4"), user=curator)
    with django_capture_on_commit_callbacks(execute=True):
        split = splits.split_library_video(video, 1.2, 2.4, curator, trim_start=0.17, trim_end=0.17)
    split.refresh_from_db()
    assert split.status == VideoSplit.Status.DONE, split.message
    assert staged.part_starts(split) == {"pre": 0.16, "main": 1.2, "post": 2.4}
    study = staged.create_staged_study([split], "Trimmed", curator, open_now=True, expert_first=0, expert_share=0)
    claim = claim_for(worker_api, study)
    advance(worker_api, claim, DONE)
    claim.refresh_from_db()
    record = staged.release_record(claim)
    assert (record["preevent"], record["event"], record["postevent"], record["end"]) == (0.16, 1.2, 2.4, 3.84)
    assert blackswan_eval.split(record, video.duration) == {"pre": (0.16, 1.2), "main": (1.2, 2.4),
                                                            "post": (2.4, 3.84)}


def test_the_mturk_preview_of_a_staged_study_shows_no_video(study, client):
    Study.objects.filter(pk=study.pk).update(recruitment_platform=Study.Recruitment.MTURK)
    response = client.get(reverse("crowd-entry-mturk", kwargs={"slug": study.slug}),
                          {"workerId": "W1", "assignmentId": "ASSIGNMENT_ID_NOT_AVAILABLE", "hitId": "H1"})
    assert response.status_code == 200
    html = response.content.decode()
    assert "/media/files/" not in html and "Forecaster" in html


def test_a_staged_item_without_its_split_is_refused_clearly(study, worker, split):
    item = StudyItem.objects.get(study=study)
    StudyItem.objects.filter(pk=item.pk).update(payload={"split_id": 987654})
    response = logged_in_client(worker).post(reverse("crowd-work", kwargs={"slug": study.slug}), follow=True)
    assert response.status_code == 409
    assert "/media/files/" not in response.content.decode()



def test_curators_see_a_finished_claim_in_the_queue_and_the_report(split, curator, worker_api):
    study = staged.create_staged_study([split], "Vetted", curator, open_now=True, expert_first=1)
    claim = claim_for(worker_api, study)
    advance(worker_api, claim, DONE)
    client = logged_in_client(curator)
    queue = client.get(reverse("crowd-study-queue", kwargs={"slug": study.slug}), {"queue": "expert_sample"})
    assert queue.status_code == 200
    assert REPORTER_ANSWERS["caption"] in queue.content.decode()
    report = logged_in_api(curator).get(reverse("api-study-report", kwargs={"slug": study.slug}))
    assert report.status_code == 200, report.content


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("file_database")
def test_concurrent_submits_of_one_step_make_one_submission(tmp_path, curator):
    """Eight requests submit the same step at once: one wins, the others get 409 and write nothing."""
    from annotation.crowd.submissions import load_claim
    from tests.annotation.test_crowd_concurrency import run_in_threads

    split = make_split(tmp_path / "clips", curator)
    study = staged.create_staged_study([split], "Race", curator, open_now=True, expert_share=0, expert_first=0)
    worker = make_user("racer", ANNOTATOR)
    claim = claim_for(logged_in_api(worker), study)
    staged.start(claim)
    outcomes = []

    def attempt(text):
        try:
            result = staged.submit_step(load_claim(claim.pk), worker, FORECASTER,
                                        {"scenarios": [text, *SCENARIOS[1:]]}, active_seconds=1)
            outcomes.append(("ok", result.next_step))
        except CrowdError as exc:
            outcomes.append((exc.status, ""))

    errors = run_in_threads([lambda n=n: attempt(f"Scenario written by request {n}.") for n in range(8)],
                            timeout=120)
    assert errors == []
    assert Counter(outcomes) == {(409, ""): 7, ("ok", DETECTIVE): 1}
    row = StagedStep.objects.get(claim=claim, step=FORECASTER)
    assert row.active_seconds == 1 and row.answers["scenarios"][0].startswith("Scenario written by request")
    assert StateChange.objects.of(Claim, claim.pk).filter(from_state=FORECASTER).count() == 1
    assert StagedStep.objects.filter(claim=claim, step=DETECTIVE).count() == 1


# --- Review -----------------------------------------------------------------------------------------

def test_curators_review_a_staged_submission_readably_and_edit_it_under_the_steps_rules(worker_api, claim, study,
                                                                                     curator):
    from annotation.crowd import curation, review
    from annotation.crowd.errors import InvalidSubmission

    advance(worker_api, claim, DONE)
    submission = Submission.objects.get(claim=claim)
    queue = curation.queue_context(study, "all", "pending")
    (shown,) = [s for s in queue["page"] if s.pk == submission.pk]
    rows = {row["label"]: row for row in shown.answers}
    assert rows["Forecast 1"]["value"] == SCENARIOS[0]
    assert rows["Detective: forecast 1"]["value"] == "invalid"
    assert rows["Detective: forecast 1"]["extra"] == [f"new hypothesis: {DETECTIVE_ANSWERS['new_hypotheses'][0]}"]
    assert rows["Caption"]["value"] == REPORTER_ANSWERS["caption"]

    bad = {**ANSWERS, REPORTER: {**REPORTER_ANSWERS, "caption": ""}}
    with pytest.raises(InvalidSubmission):
        review.approve(submission, curator, edited=bad)
    submission.refresh_from_db()
    assert submission.review_state != Submission.Review.APPROVED and submission.reviewed_data is None

    fixed = {**ANSWERS, REPORTER: {**REPORTER_ANSWERS, "caption": "A rider falls off and gets up again."}}
    review.approve(submission, curator, edited=fixed)
    submission.refresh_from_db()
    assert submission.review_state == Submission.Review.APPROVED
    assert submission.reviewed_data[REPORTER]["caption"] == "A rider falls off and gets up again."
    assert submission.data == ANSWERS  # the worker's answers stay as they were


# --- Leases, frozen set-up, one item per video ---------------------------------------------------

def _expire(claim) -> None:
    Claim.objects.filter(pk=claim.pk).update(lease_expires_at=timezone.now() - timedelta(seconds=1))


@pytest.mark.parametrize("verb", ["draft", "submit"])
def test_a_step_on_an_expired_lease_is_409_and_renews_nothing(worker_api, claim, verb):
    assert save(worker_api, claim, FORECASTER, {"scenarios": ["a first idea"]}).status_code == 200
    _expire(claim)
    before = Claim.objects.get(pk=claim.pk).lease_expires_at
    if verb == "draft":
        response = save(worker_api, claim, FORECASTER, {"scenarios": ["a later idea"]})
    else:
        response = submit(worker_api, claim, FORECASTER)
    assert response.status_code == 409
    assert "ran out" in response.json()["error"]
    claim.refresh_from_db()
    assert claim.lease_expires_at == before  # not renewed
    assert claim.status == Claim.Status.EXPIRED and claim.step == FORECASTER  # timed out, not moved on
    row = StagedStep.objects.get(claim=claim, step=FORECASTER)
    assert row.draft == {"scenarios": ["a first idea"]} and row.submitted_at is None
    assert StudyItem.objects.get(pk=claim.item_id).open_slots == 1  # its place went back to the pool


def test_a_staged_study_refuses_a_video_it_already_holds(study, split, tmp_path, curator):
    again = VideoSplit.objects.create(
        video=split.video, event_start=1.0, event_end=2.0, status=VideoSplit.Status.DONE, frame_count=100, fps=25.0,
        main_start_frame=25, main_end_frame=50, **{f"{part}_video": getattr(split, f"{part}_video") for part in PARTS})
    api = logged_in_api(curator)
    url = reverse("api-study-items", kwargs={"slug": study.slug})
    for split_id in (split.pk, again.pk):  # the same split, or another split of the same video
        response = api.post(url, [{"external_id": f"again-{split_id}", "payload": {"split_id": split_id}}],
                            format="json")
        assert response.status_code == 400, response.content
        assert f"video #{split.video_id} is already in the study" in json.dumps(response.json())
    assert StudyItem.objects.filter(study=study).count() == 1
    other = make_split(tmp_path / "other", curator, name="other", shade=90)
    response = api.post(url, [{"external_id": "other", "payload": {"split_id": other.pk}}], format="json")
    assert response.status_code == 201


def test_an_open_staged_study_with_claims_cannot_switch_to_a_form(study, claim, curator):
    api = logged_in_api(curator)
    form = {"fields": [{"name": "note", "type": "free_text"}]}
    response = api.patch(reverse("api-study-detail", kwargs={"slug": study.slug}),
                         {"step_kind": "form", "form_schema": form}, format="json")
    assert response.status_code == 409
    assert "step kind can no longer change" in response.json()["error"]
    study.refresh_from_db()
    assert study.step_kind == staged.STUDY_KIND and study.form_schema == {}
    # so the worker at step 1 still may not stream the whole video
    split = staged.split_of(claim.item)
    assert not staged.may_stream(claim.worker, split.full_video)


def test_the_review_queue_shows_the_clips_the_worker_saw_and_an_edit_form_of_the_steps(worker_api, claim, study,
                                                                                        split, curator):
    advance(worker_api, claim, DONE)
    submission = Submission.objects.get(claim=claim)
    page = logged_in_client(curator).get(reverse("crowd-study-queue", kwargs={"slug": study.slug})).content.decode()
    urls = media_urls(split.pre_video)[:1] + media_urls(split.post_video)[:1] + media_urls(split.full_video)[:1]
    for url in urls:
        assert f'<video src="{url}"' in page
    for hidden in (split.main_video, split.detective_video, split.video):
        assert f'<video src="{media_urls(hidden)[0]}"' not in page
    assert 'data-shape="paths"' in page
    for index in range(3):
        assert f'data-path="forecaster.scenarios.{index}">{SCENARIOS[index]}<' in page
    assert 'value="no" data-path="detective.forecast_valid.0" checked' in page
    assert 'value="yes" data-path="reporter.hypothesis_valid.0" checked' in page
    assert f'data-path="reporter.caption">{REPORTER_ANSWERS["caption"]}<' in page
    assert f'data-submission-id="{submission.pk}"' in page
