"""Splitting library videos into BlackSwanSuite parts as a background job (annotation.benchmarks.blackswan.splits).

The job must leave either a finished split with five ready library clips carrying their
provenance, or a flagged/failed split with no clip row and no stored file at all.
"""

import pytest
from django.db import IntegrityError, transaction

from annotation.benchmarks.blackswan import splits
from annotation.models import MediaAsset, Video, VideoSplit
from config.models import StateChange
from generation import jobs, splitting
from generation.media_probe import MediaError
from generation.models import Job
from generation.splitting import SplitError
from tests.conftest import files_under, ingest_path
from tests.generation.test_splitting import decode, is_black, stamps

pytestmark = pytest.mark.django_db


@pytest.fixture
def bunny(bunny_file, curator):
    """The single-scene sample in the library, probed."""
    return ingest_path(bunny_file, user=curator)


@pytest.fixture
def bunny_bikes(bunny_bikes_file, curator):
    """The two-scene sample in the library, probed."""
    return ingest_path(bunny_bikes_file, user=curator)


def run_split(django_capture_on_commit_callbacks, video, start, end, user, **options) -> VideoSplit:
    """Ask for a split the way a view would; the job runs when the transaction commits (eager Celery)."""
    with django_capture_on_commit_callbacks(execute=True):
        split = splits.split_library_video(video, start, end, user, **options)
    split.refresh_from_db()
    split.job.refresh_from_db()
    return split


def states(split) -> list[tuple[str, str]]:
    return [(entry.from_state, entry.to_state)
            for entry in StateChange.objects.of(VideoSplit, split.pk)]


def test_the_job_makes_five_library_clips_with_provenance(bunny, curator, django_capture_on_commit_callbacks):
    split = run_split(django_capture_on_commit_callbacks, bunny, 1.2, 2.4, curator)

    assert split.job.kind == "blackswan_split"
    assert split.job.queue == "generation"
    assert split.job.status == Job.Status.SUCCEEDED, split.job.message
    assert split.job.result["frames"] == {"pre": 30, "main": 30, "post": 40, "detective": 100, "full": 100}
    assert split.status == VideoSplit.Status.DONE
    assert (split.event_start, split.event_end) == (1.2, 2.4)
    assert (split.frame_count, split.fps, split.main_start_frame, split.main_end_frame) == (100, 25.0, 30, 60)
    assert split.multi_scene is False and split.scene_cuts == []
    assert split.parameters["encoding"]["ffmpeg"] == splitting.ffmpeg_version()
    assert states(split) == [("", "queued"), ("queued", "running"), ("running", "done")]

    clips = split.clips()
    expected = {"pre": (0, 30), "main": (30, 60), "post": (60, 100), "detective": (0, 100), "full": (0, 100)}
    assert Video.objects.count() == 6
    for name, (start, end) in expected.items():
        clip = clips[name]
        assert clip.status == MediaAsset.Status.READY
        assert clip.source == MediaAsset.Source.DERIVED
        assert clip.frame_count == end - start  # probed from the stored file
        assert (clip.width, clip.height, clip.fps) == (160, 90, 25.0)
        assert clip.duration == pytest.approx((end - start) / 25)
        assert clip.poster.name and clip.uploaded_by == curator
        provenance = clip.provenance
        assert provenance["parent_video_id"] == bunny.pk
        assert provenance["parent_checksum"] == bunny.checksum
        assert provenance["part"] == name and provenance["split_id"] == split.pk
        assert (provenance["start_frame"], provenance["end_frame"], provenance["frame_count"]) == (
            start, end, end - start)
        assert provenance["start_time"] == pytest.approx(start / 25)
        assert provenance["end_time"] == pytest.approx(end / 25)
        assert provenance["event"] == {"start": 1.2, "end": 2.4}
        assert provenance["parameters"]["snap"] is True
        assert provenance["parameters"]["encoding"]["ffmpeg"] == splitting.ffmpeg_version()
        assert provenance["parameters"]["encoding"]["audio"] == "dropped"
    assert clips["detective"].provenance["black_frames"] == [30, 60]
    # The stored clips hold the right source frames (each frame carries its index in the sample).
    assert stamps(decode(clips["main"].file.path)) == list(range(30, 60))
    detective = decode(clips["detective"].file.path)
    assert [i for i, frame in enumerate(detective) if is_black(frame)] == list(range(30, 60))
    assert splits.current_split(bunny) == split


def test_resplitting_makes_a_new_split_and_keeps_the_old_one(bunny, curator, django_capture_on_commit_callbacks):
    first = run_split(django_capture_on_commit_callbacks, bunny, 1.2, 2.4, curator)
    second = run_split(django_capture_on_commit_callbacks, bunny, 1.6, 2.8, curator)
    assert second.pk != first.pk
    first.refresh_from_db()
    assert first.status == second.status == VideoSplit.Status.DONE
    assert (first.main_start_frame, first.main_end_frame) == (30, 60)
    assert (second.main_start_frame, second.main_end_frame) == (40, 70)
    assert list(bunny.splits.order_by("created_at", "id")) == [first, second]
    assert splits.current_split(bunny) == second
    assert first.main_video != second.main_video
    assert second.main_video.frame_count == 30 and second.post_video.frame_count == 30
    assert stamps(decode(second.main_video.file.path)) == list(range(40, 70))
    assert all(clip.status == MediaAsset.Status.READY for clip in first.clips().values())
    # The full clip comes out byte for byte the same (x264 is deterministic), so it is reused, not stored twice.
    assert second.full_video == first.full_video
    assert second.detective_video != first.detective_video
    assert Video.objects.count() == 1 + 5 + 4


def test_a_multi_scene_video_is_flagged_not_split(bunny_bikes, curator, django_capture_on_commit_callbacks,
                                                  media_root):
    stored_before = files_under(media_root)
    split = run_split(django_capture_on_commit_callbacks, bunny_bikes, 1.2, 2.65, curator, trim_start=0.17)
    assert split.job.status == Job.Status.SUCCEEDED
    assert split.status == VideoSplit.Status.FLAGGED
    assert split.multi_scene is True
    assert [cut["frame"] for cut in split.scene_cuts] == [75]
    assert split.scene_cuts[0]["time"] == pytest.approx(3.0)
    assert "2 scenes" in split.message and "3.00 s (frame 75)" in split.message
    assert split.main_start_frame is None and not any(split.clips().values())
    assert Video.objects.count() == 1
    assert files_under(media_root) == stored_before

    # The curator decides: split it anyway (a new split, the flagged one kept as history) ...
    with django_capture_on_commit_callbacks(execute=True):
        anyway = splits.resolve_flagged(split, split_anyway=True, user=curator, reason="the cut is after the event")
    anyway.refresh_from_db()
    split.refresh_from_db()
    assert split.status == VideoSplit.Status.OVERRIDDEN
    assert anyway.allow_multi_scene and anyway.status == VideoSplit.Status.DONE
    assert (anyway.main_start_frame, anyway.main_end_frame) == (30, 75)  # the end snapped to the cut
    assert anyway.post_video.frame_count == 29
    assert anyway.trim_start == 0.17 and anyway.pre_video.frame_count == 26  # the trim goes with it: frames 4–29
    assert states(split)[-1] == ("flagged", "overridden")
    assert StateChange.objects.of(VideoSplit, split.pk).filter(to_state="overridden",
                                       actor=curator, reason="the cut is after the event").exists()
    with pytest.raises(SplitError, match="cannot become"):
        splits.resolve_flagged(split, split_anyway=False, user=curator)


def test_a_flagged_video_can_be_filtered_out(bunny_bikes, curator, django_capture_on_commit_callbacks):
    split = run_split(django_capture_on_commit_callbacks, bunny_bikes, 1.2, 2.65, curator)
    assert splits.resolve_flagged(split, split_anyway=False, user=curator) is None
    split.refresh_from_db()
    assert split.status == VideoSplit.Status.REJECTED
    assert states(split)[-1] == ("flagged", "rejected")
    assert splits.current_split(bunny_bikes) is None


def test_a_part_shorter_than_one_second_fails_the_job_and_stores_nothing(
        bunny, curator, django_capture_on_commit_callbacks, media_root):
    stored_before = files_under(media_root)
    split = run_split(django_capture_on_commit_callbacks, bunny, 1.2, 1.6, curator)
    assert split.job.status == Job.Status.FAILED
    assert "V_main would hold 10 frames" in split.job.message
    assert "at least 1 s" in split.job.message
    assert split.status == VideoSplit.Status.FAILED
    assert split.message == split.job.message
    assert states(split) == [("", "queued"), ("queued", "running"), ("running", "failed")]
    assert Video.objects.count() == 1
    assert files_under(media_root) == stored_before


@pytest.mark.parametrize(("start", "end", "words"), [
    (2.0, 1.0, "must come before its end"),
    (-1.0, 2.0, "before the start of the video"),
    (1.0, 60.0, "past the end of the video (4 s)"),
    ("later", 2.0, "numbers of seconds"),
])
def test_impossible_times_are_refused_before_anything_is_recorded(bunny, curator, start, end, words):
    jobs_before = Job.objects.count()
    with pytest.raises(SplitError) as caught:
        splits.split_library_video(bunny, start, end, curator)
    assert words in str(caught.value)
    assert VideoSplit.objects.count() == 0
    assert Job.objects.count() == jobs_before


def test_a_video_still_being_probed_is_refused(bunny_file, curator):
    video = ingest_path(bunny_file, user=curator, probe=False)
    with pytest.raises(SplitError, match="not ready yet"):
        splits.split_library_video(video, 1.2, 2.4, curator)


def test_a_corrupt_stored_file_fails_the_job_clearly(bunny, curator, django_capture_on_commit_callbacks,
                                                     media_root):
    with open(bunny.file.path, "wb") as handle:
        handle.write(b"not a video any more" * 100)
    stored_before = files_under(media_root)
    split = run_split(django_capture_on_commit_callbacks, bunny, 1.2, 2.4, curator)
    assert split.job.status == Job.Status.FAILED
    assert "is not a readable video" in split.job.message
    assert split.status == VideoSplit.Status.FAILED
    assert Video.objects.count() == 1
    assert files_under(media_root) == stored_before


def test_a_failure_while_storing_the_clips_leaves_no_row_and_no_file(
        bunny, curator, django_capture_on_commit_callbacks, media_root, monkeypatch):
    stored_before = files_under(media_root)
    real_probe = splits.probe_video
    calls = []

    def probe_failing_on_the_fourth_clip(path):
        calls.append(path)
        if len(calls) == 4:
            raise MediaError("the disk went away")
        return real_probe(path)

    monkeypatch.setattr(splits, "probe_video", probe_failing_on_the_fourth_clip)
    split = run_split(django_capture_on_commit_callbacks, bunny, 1.2, 2.4, curator)
    assert len(calls) == 4
    assert split.job.status == Job.Status.FAILED
    assert "The Detective clip cannot be read back: the disk went away" in split.job.message
    assert split.status == VideoSplit.Status.FAILED
    assert not any(split.clips().values())
    assert Video.objects.count() == 1
    assert files_under(media_root) == stored_before


def test_a_finished_split_must_have_its_clips(bunny):
    with pytest.raises(IntegrityError), transaction.atomic():
        VideoSplit.objects.create(video=bunny, event_start=1.0, event_end=2.0, status=VideoSplit.Status.DONE)
    with pytest.raises(IntegrityError), transaction.atomic():
        VideoSplit.objects.create(video=bunny, event_start=2.0, event_end=1.0)
    for trims in ({"trim_start": -0.1}, {"trim_end": -0.1}, {"trim_start": 1.0}):  # trims start before the event
        with pytest.raises(IntegrityError), transaction.atomic():
            VideoSplit.objects.create(video=bunny, event_start=1.0, event_end=2.0, **trims)


@pytest.mark.parametrize(("trims", "words"), [
    ({"trim_start": -0.5}, "0 or more"),
    ({"trim_start": 1.5}, "must leave V_pre before the event start"),
    ({"trim_end": 1.8}, "and V_post after its end"),
])
def test_impossible_trims_are_refused_before_anything_is_recorded(bunny, curator, trims, words):
    with pytest.raises(SplitError, match=words):
        splits.split_library_video(bunny, 1.2, 2.4, curator, **trims)
    assert VideoSplit.objects.count() == 0


def test_the_job_kind_is_registered_on_the_generation_queue():
    kind = jobs.job_kind("blackswan_split")
    assert kind.queue == "generation"
    assert kind.handler is splits.split_video_job
