"""The curator's split timeline (frontend.split_views over annotation.benchmarks.blackswan.timeline).

The videos are real sample media cut to a few seconds at 160x90 (tests/generation/test_splitting.py): Big Buck
Bunny with every frame stamped with its index (100 frames at 25 fps, one scene), and 3 s of it
followed by 1.16 s of the bikes video (104 frames, a scene cut at frame 75).
"""

import io

import numpy as np
import pytest
from django.urls import reverse
from PIL import Image

from annotation.benchmarks.blackswan import splits, timeline
from annotation.models import Benchmark, BenchmarkItem, BenchmarkVersion, ItemMedia, Video, VideoSplit
from generation import frames
from generation.models import Job
from tests.conftest import ingest_path, logged_in_client
from tests.generation.test_splitting import read_stamp

pytestmark = pytest.mark.django_db


@pytest.fixture
def bunny(bunny_file, curator):
    return ingest_path(bunny_file, user=curator)


@pytest.fixture
def bunny_bikes(bunny_bikes_file, curator):
    return ingest_path(bunny_bikes_file, user=curator)


def url(name: str, video, **kwargs) -> str:
    return reverse(name, kwargs={"pk": video.pk, **kwargs})


def plan(client, video, **query):
    return client.get(url("video-split-plan", video), query)


def create(client, video, body, capture, *, as_json=True):
    """POST a split; the job runs when the request's transaction commits (Celery is eager in tests)."""
    with capture(execute=True):
        if as_json:
            return client.post(url("video-split-create", video), body, content_type="application/json")
        return client.post(url("video-split-create", video), body)


def grey(jpeg: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(jpeg)).convert("L"), dtype=np.float32)


# --- The page and the timeline -----------------------------------------------------------------

def test_the_page_holds_the_player_and_the_endpoints(bunny, curator_client):
    response = curator_client.get(url("video-split", bunny))
    assert response.status_code == 200
    page = response.content.decode()
    assert f'src="{reverse("media-video-file", kwargs={"pk": bunny.pk})}"' in page
    for name in ("video-split-timeline", "video-split-plan", "video-split-create", "video-split-list"):
        assert url(name, bunny) in page
    assert 'id="handle-start"' in page and 'id="handle-end"' in page and 'role="slider"' in page
    assert "frontend/split.js" in page
    assert curator_client.get(reverse("video-split", kwargs={"pk": 987654})).status_code == 404


def test_the_timeline_gives_every_frame_time_and_starts_from_thirds(bunny, curator_client):
    data = curator_client.get(url("video-split-timeline", bunny)).json()
    assert (data["frame_count"], data["fps"], data["fps_fraction"]) == (100, 25.0, "25/1")
    assert data["duration"] == pytest.approx(4.0)
    assert len(data["frame_times"]) == 100
    assert data["frame_times"][30] == pytest.approx(1.2)
    assert data["scene_cuts"] == [] and data["multi_scene"] is False
    assert data["initial"] == {"start_frame": 33, "end_frame": 66, "origin": "thirds of the video",
                               "trim_start": 0.0, "trim_end": 0.0}
    assert data["thumbnails_url"] == url("video-split-thumbnails", bunny)
    assert data["frame_url"].replace("{index}", "7") == url("video-split-frame", bunny, index=7)


def test_the_timeline_marks_scene_cuts(bunny_bikes, curator_client):
    data = curator_client.get(url("video-split-timeline", bunny_bikes)).json()
    assert data["frame_count"] == 104
    assert data["multi_scene"] is True
    assert [cut["frame"] for cut in data["scene_cuts"]] == [75]
    assert data["scene_cuts"][0]["time"] == pytest.approx(3.0)


def test_the_timeline_starts_from_the_latest_split_or_the_items_localization(bunny, curator, curator_client):
    version = BenchmarkVersion.objects.create(benchmark=Benchmark.objects.get(slug="blackswan"), label="loc")
    item = BenchmarkItem.objects.create(version=version, external_id="v1", payload={
        "kind": "video", "id": "v1", "preevent": 0, "event": 1.6, "postevent": 2.8})
    ItemMedia.objects.create(item=item, role="video", video=bunny)
    data = curator_client.get(url("video-split-timeline", bunny)).json()
    assert data["initial"] == {"start_frame": 40, "end_frame": 70, "origin": "the localization of blackswan:loc/v1",
                               "trim_start": 0.0, "trim_end": 0.0}
    # a release record whose V_pre starts later and whose V_post ends early gives the trims too
    BenchmarkItem.objects.filter(pk=item.pk).update(payload={**item.payload, "preevent": 0.17, "end": 3.83})
    data = curator_client.get(url("video-split-timeline", bunny)).json()
    assert (data["initial"]["trim_start"], data["initial"]["trim_end"]) == (0.17, pytest.approx(0.17))

    split = splits.split_library_video(bunny, 1.2, 2.4, curator, trim_start=0.17)  # the job runs only on commit
    data = curator_client.get(url("video-split-timeline", bunny)).json()
    assert data["initial"] == {"start_frame": 30, "end_frame": 60, "origin": f"split #{split.pk} (queued)",
                               "trim_start": 0.17, "trim_end": 0.0}


def test_a_video_still_being_probed_has_no_timeline(bunny_file, curator, curator_client):
    video = ingest_path(bunny_file, user=curator, probe=False)
    response = curator_client.get(url("video-split-timeline", video))
    assert response.status_code == 409
    assert "not ready yet" in response.json()["error"]


def test_a_long_video_is_not_decoded_in_the_request(bunny, curator_client):
    Video.objects.filter(pk=bunny.pk).update(duration=timeline.MAX_INTERACTIVE_SECONDS + 1)
    response = curator_client.get(url("video-split-timeline", bunny))
    assert response.status_code == 409
    assert f"lasts {timeline.MAX_INTERACTIVE_SECONDS + 1} s" in response.json()["error"]


# --- The plan ------------------------------------------------------------------------------------

def test_the_plan_for_frame_boundaries(bunny, curator_client):
    response = plan(curator_client, bunny, start_frame=30, end_frame=60)
    assert response.status_code == 200
    data = response.json()
    assert data["ok"] is True
    assert (data["main_start"], data["main_end"]) == (30, 60)
    assert data["event_start"] == pytest.approx(1.2) and data["event_end"] == pytest.approx(2.4)
    parts = {part["name"]: part for part in data["parts"]}
    assert [(p["start_frame"], p["end_frame"], p["frames"], p["seconds"]) for p in parts.values()] == [
        (0, 30, 30, 1.2), (30, 60, 30, 1.2), (60, 100, 40, 1.6)]
    assert not any(part["too_short"] for part in parts.values())
    assert data["warnings"] == [] and data["notes"] == []


def test_the_plan_trims_the_start_of_v_pre_and_the_end_of_v_post(bunny, curator_client):
    data = plan(curator_client, bunny, start_frame=30, end_frame=60, trim_start="0.17", trim_end="0.17").json()
    assert data["ok"] is True and (data["trim_start"], data["trim_end"]) == (0.17, 0.17)
    assert (data["pre_start"], data["post_end"]) == (4, 96)  # 0.16 s and 3.84 s: the nearest frame boundaries
    assert [(p["start_frame"], p["end_frame"], p["frames"]) for p in data["parts"]] == [
        (4, 30, 26), (30, 60, 30), (60, 96, 36)]
    too_much = plan(curator_client, bunny, start_frame=30, end_frame=60, trim_start="0.5")
    assert too_much.status_code == 400 and "V_pre would hold 18 frames" in too_much.json()["error"]
    assert too_much.json()["parts"][0]["start_frame"] == 12 and too_much.json()["parts"][0]["too_short"] is True
    negative = plan(curator_client, bunny, start_frame=30, end_frame=60, trim_end="-1")
    assert negative.status_code == 400 and "0 or more" in negative.json()["error"]


def test_the_plan_for_times_in_seconds_picks_the_nearest_frame_boundary(bunny, curator_client):
    data = plan(curator_client, bunny, start="1.21", end="2.385").json()
    assert (data["main_start"], data["main_end"]) == (30, 60)
    assert data["given_frames"] == [30, 60]


def test_the_plan_snaps_to_a_scene_cut_and_warns_of_several_scenes(bunny_bikes, curator_client):
    data = plan(curator_client, bunny_bikes, start_frame=30, end_frame=70).json()
    assert data["ok"] is True
    assert (data["main_start"], data["main_end"]) == (30, 75)  # 2.8 s is within 0.5 s of the cut at 3.0 s
    assert data["snapped"] == {"start": None, "end": 75}
    assert [note["code"] for note in data["notes"]] == ["snapped"]
    assert "from frame 70 to the scene cut at frame 75" in data["notes"][0]["message"]
    assert [warning["code"] for warning in data["warnings"]] == ["multi_scene"]
    assert "2 scenes" in data["warnings"][0]["message"] and "flagged" in data["warnings"][0]["message"]
    assert [part["frames"] for part in data["parts"]] == [30, 45, 29]

    unsnapped = plan(curator_client, bunny_bikes, start_frame=30, end_frame=70, snap="0").json()
    assert (unsnapped["main_start"], unsnapped["main_end"]) == (30, 70)
    assert unsnapped["notes"] == []


def test_the_plan_says_when_a_snap_would_break_the_one_second_rule(bunny_bikes, curator_client):
    data = plan(curator_client, bunny_bikes, start_frame=52, end_frame=78).json()
    assert data["ok"] is True
    assert (data["main_start"], data["main_end"]) == (52, 78)  # snapping to 75 would leave V_main 23 frames
    assert [note["code"] for note in data["notes"]] == ["not_snapped"]
    assert "scene cut at frame 75" in data["notes"][0]["message"]


def test_a_part_shorter_than_one_second_is_refused_with_a_400(bunny, curator_client):
    response = plan(curator_client, bunny, start_frame=30, end_frame=40)
    assert response.status_code == 400
    data = response.json()
    assert data["ok"] is False
    assert "V_main would hold 10 frames (0.40 s" in data["error"]
    assert "at least 1 s (25 frames at 25 fps)" in data["error"]
    assert [part["too_short"] for part in data["parts"]] == [False, True, False]
    assert [warning["code"] for warning in data["warnings"]] == ["refused"]


@pytest.mark.parametrize(("query", "words"), [
    ({}, "Give the event's boundaries"),
    ({"start_frame": "abc", "end_frame": "60"}, "'start_frame' must be a whole frame number"),
    ({"start_frame": "30", "end_frame": "500"}, "'end_frame' 500 is not a frame boundary of this video (0..100)"),
    ({"start": "x", "end": "2"}, "'start' must be a number of seconds"),
    ({"start_frame": "30", "end_frame": "60", "snap": "maybe"}, "'snap' must be true or false"),
    ({"start_frame": "60", "end_frame": "30"}, "must come before its end"),
])
def test_bad_boundaries_are_refused_clearly(bunny, curator_client, query, words):
    response = plan(curator_client, bunny, **query)
    assert response.status_code == 400
    assert words in response.json()["error"]


# --- Splitting ------------------------------------------------------------------------------------

def test_split_creates_a_video_split_whose_job_cuts_five_clips(bunny, curator, curator_client,
                                                               django_capture_on_commit_callbacks):
    response = create(curator_client, bunny, {"start_frame": 30, "end_frame": 60, "snap": True},
                      django_capture_on_commit_callbacks)
    assert response.status_code == 201, response.content
    created = response.json()["split"]
    split = VideoSplit.objects.get(pk=created["id"])
    assert (split.video, split.requested_by, split.event_start, split.event_end) == (bunny, curator, 1.2, 2.4)
    assert split.job.kind == "blackswan_split"
    split.job.refresh_from_db()
    assert split.job.status == Job.Status.SUCCEEDED, split.job.message
    assert split.status == VideoSplit.Status.DONE
    assert (split.main_start_frame, split.main_end_frame) == (30, 60)

    rows = curator_client.get(url("video-split-list", bunny)).json()["splits"]
    assert [row["id"] for row in rows] == [split.pk]
    row = rows[0]
    assert row["status"] == "done" and row["finished"] is True and row["can_resolve"] is False
    assert row["job"]["status"] == "succeeded" and row["job"]["progress"] == 100
    assert [(clip["name"], clip["frames"]) for clip in row["clips"]] == [
        ("pre", 30), ("main", 30), ("post", 40), ("detective", 100), ("full", 100)]
    for clip in row["clips"]:
        assert clip["url"] == reverse("video-detail", kwargs={"pk": clip["video_id"]})
        assert Video.objects.get(pk=clip["video_id"]).provenance["split_id"] == split.pk
        assert curator_client.get(clip["url"]).status_code == 200


def test_a_trimmed_split_cuts_its_clips_without_the_trimmed_frames(bunny, curator_client,
                                                                   django_capture_on_commit_callbacks):
    response = create(curator_client, bunny, {"start_frame": 30, "end_frame": 60, "trim_start": 0.17,
                                              "trim_end": 0.17}, django_capture_on_commit_callbacks)
    assert response.status_code == 201, response.content
    split = VideoSplit.objects.get()
    assert (split.trim_start, split.trim_end, split.status) == (0.17, 0.17, VideoSplit.Status.DONE)
    assert (split.parameters["pre_start_frame"], split.parameters["post_end_frame"]) == (4, 96)
    row = curator_client.get(url("video-split-list", bunny)).json()["splits"][0]
    assert (row["trim_start"], row["trim_end"]) == (0.17, 0.17)
    assert [(clip["name"], clip["frames"]) for clip in row["clips"]] == [
        ("pre", 26), ("main", 30), ("post", 36), ("detective", 92), ("full", 92)]
    assert split.pre_video.provenance["start_frame"] == 4 and split.post_video.provenance["end_frame"] == 96
    assert "V_pre [4, 30)" in split.message and "V_post [60, 96) of 100 frames" in split.message


def test_split_accepts_a_form_post_in_seconds_without_snapping(bunny, curator_client,
                                                               django_capture_on_commit_callbacks):
    response = create(curator_client, bunny, {"start": "1.6", "end": "2.8", "snap": "0"},
                      django_capture_on_commit_callbacks, as_json=False)
    assert response.status_code == 201, response.content
    split = VideoSplit.objects.get()
    assert split.snap is False
    assert (split.main_start_frame, split.main_end_frame) == (40, 70)


@pytest.mark.parametrize(("body", "words"), [
    ({"start_frame": 30, "end_frame": 40}, "V_main would hold 10 frames"),
    ({"start_frame": 10, "end_frame": 60}, "V_pre would hold 10 frames"),
    ({"start_frame": 30, "end_frame": 60, "trim_end": 1.0}, "V_post would hold 15 frames"),
    ({"start_frame": 30, "end_frame": 60, "trim_start": "soon"}, "trims at the start and the end"),
    ({}, "Give the event's boundaries"),
    ("[1, 2]", "must be a JSON object"),
    ("{not json", "not valid JSON"),
])
def test_a_refused_split_records_nothing(bunny, curator_client, django_capture_on_commit_callbacks, body, words):
    jobs_before = Job.objects.count()
    with django_capture_on_commit_callbacks(execute=True):
        response = curator_client.post(url("video-split-create", bunny), body, content_type="application/json")
    assert response.status_code == 400
    assert words in response.json()["error"]
    assert VideoSplit.objects.count() == 0
    assert Job.objects.count() == jobs_before


def test_a_flagged_split_is_filtered_out_or_split_anyway(bunny_bikes, curator, curator_client,
                                                         django_capture_on_commit_callbacks):
    response = create(curator_client, bunny_bikes, {"start_frame": 30, "end_frame": 70},
                      django_capture_on_commit_callbacks)
    assert response.status_code == 201
    flagged = VideoSplit.objects.get(pk=response.json()["split"]["id"])
    assert flagged.status == VideoSplit.Status.FLAGGED
    row = curator_client.get(url("video-split-list", bunny_bikes)).json()["splits"][0]
    assert row["status"] == "flagged" and row["can_resolve"] is True and row["clips"] == []
    assert row["resolve_url"] == reverse("video-split-resolve", kwargs={"pk": flagged.pk})

    resolve = reverse("video-split-resolve", kwargs={"pk": flagged.pk})
    refused = curator_client.post(resolve, {"decision": "maybe"}, content_type="application/json")
    assert refused.status_code == 400 and "split_anyway" in refused.json()["error"]

    with django_capture_on_commit_callbacks(execute=True):
        answer = curator_client.post(resolve, {"decision": "split_anyway", "reason": "one event"},
                                     content_type="application/json")
    assert answer.status_code == 200, answer.content
    flagged.refresh_from_db()
    assert flagged.status == VideoSplit.Status.OVERRIDDEN
    anyway = VideoSplit.objects.get(pk=answer.json()["new_split"])
    assert anyway.allow_multi_scene and anyway.status == VideoSplit.Status.DONE
    assert (anyway.main_start_frame, anyway.main_end_frame) == (30, 75)
    # the answer is written before the new split's job runs (when the request's transaction commits)
    assert [row["status"] for row in answer.json()["splits"]] == ["queued", "overridden"]
    listed = curator_client.get(url("video-split-list", bunny_bikes)).json()["splits"]
    assert [row["status"] for row in listed] == ["done", "overridden"]
    assert len(listed[0]["clips"]) == 5

    again = curator_client.post(resolve, {"decision": "filter_out"}, content_type="application/json")
    assert again.status_code == 409 and "cannot become" in again.json()["error"]

    second = create(curator_client, bunny_bikes, {"start_frame": 30, "end_frame": 70},
                    django_capture_on_commit_callbacks).json()["split"]
    out = curator_client.post(second["resolve_url"], {"decision": "filter_out"})
    assert out.status_code == 200 and out.json()["new_split"] is None
    assert VideoSplit.objects.get(pk=second["id"]).status == VideoSplit.Status.REJECTED


# --- Pictures ------------------------------------------------------------------------------------

def test_the_thumbnail_strip_is_one_sprite_of_uniform_frames(bunny, curator_client):
    response = curator_client.get(url("video-split-thumbnails", bunny), {"count": "8"})
    assert response.status_code == 200
    assert response["Content-Type"] == "image/jpeg"
    assert response["X-Frame-Indices"] == ",".join(map(str, frames.uniform_indices(100, 8)))
    assert response["X-Tile-Size"] == "160x90"
    sprite = grey(response.content)
    assert sprite.shape == (90, 8 * 160)
    tiles = [sprite[:, i * 160:(i + 1) * 160] for i in range(8)]
    assert [read_stamp(tile) for tile in tiles] == frames.uniform_indices(100, 8)

    for count in ("0", "61", "abc"):
        bad = curator_client.get(url("video-split-thumbnails", bunny), {"count": count})
        assert bad.status_code == 400 and "from 1 to 60" in bad.json()["error"]


def test_a_boundary_frame_is_exactly_that_frame(bunny, curator_client):
    for index in (0, 29, 30, 99):
        response = curator_client.get(url("video-split-frame", bunny, index=index))
        assert response.status_code == 200 and response["Content-Type"] == "image/jpeg"
        assert read_stamp(grey(response.content)) == index
    assert curator_client.get(url("video-split-frame", bunny, index=100)).status_code == 404


# --- Who may -------------------------------------------------------------------------------------

@pytest.mark.parametrize("role_fixture", ["annotator", "researcher"])
def test_only_curators_and_admins_may_split(bunny, role_fixture, request, django_capture_on_commit_callbacks):
    client = logged_in_client(request.getfixturevalue(role_fixture))
    for name, extra in (("video-split", {}), ("video-split-timeline", {}), ("video-split-thumbnails", {}),
                        ("video-split-frame", {"index": 0}), ("video-split-list", {})):
        assert client.get(url(name, bunny, **extra)).status_code == 403, name
    assert plan(client, bunny, start_frame=30, end_frame=60).status_code == 403
    with django_capture_on_commit_callbacks(execute=True):
        refused = client.post(url("video-split-create", bunny), {"start_frame": 30, "end_frame": 60},
                              content_type="application/json")
    assert refused.status_code == 403
    assert VideoSplit.objects.count() == 0
    if role_fixture == "researcher":  # may see the video's page, without the link to its split
        assert url("video-split", bunny) not in client.get(url("video-detail", bunny)).content.decode()


def test_admins_may_split_and_anonymous_visitors_are_sent_to_log_in(bunny, admin_client_role):
    assert admin_client_role.get(url("video-split", bunny)).status_code == 200
    detail = admin_client_role.get(url("video-detail", bunny)).content.decode()
    assert f'data-video-link href="{url("video-split", bunny)}">Split for BlackSwanSuite</a>' in detail
    assert admin_client_role.get(url("video-split-thumbnails", bunny)).status_code == 200
    anonymous = logged_in_client(None)
    response = anonymous.get(url("video-split-thumbnails", bunny))
    assert response.status_code == 302 and response["Location"].startswith(reverse("login"))
