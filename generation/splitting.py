"""Splitting a video into BlackSwanSuite's three parts: scene cuts, a frame-accurate plan, the clips.

BlackSwanSuite (§4.1 of the paper) shows a video in stages: V_pre (before the unexpected event),
V_main (the event) and V_post (its outcome), each at least one second long, cut from the event's
localization with the help of a scene splitter; videos with several scenes are filtered out.

Three steps, each usable on its own:

1. `analyse_video` decodes every frame once, front to back without seeking, as a 64 px wide
   grey thumbnail, and finds hard scene cuts (`detect_scene_cuts`): frame i starts a new shot when
   its mean absolute difference from frame i-1 is at least `cut_threshold` (on a 0–1 scale) and at
   least `cut_ratio` times the average difference of its neighbours (`cut_window` frames on each
   side). The ratio keeps fast camera motion, where every frame differs a lot from the last, from
   reading as cuts. Gradual transitions (fades, dissolves) are not detected.
   (Written here rather than taken from PySceneDetect, which would bring OpenCV in as a dependency.)
2. `plan_split` turns the event's start and end (seconds) into frame boundaries.
   Convention: a part holds the source frames whose index i satisfies start_frame ≤ i < end_frame;
   V_pre = [pre_start, main_start), V_main = [main_start, main_end), V_post = [main_end, post_end),
   where pre_start and post_end are 0 and frame_count unless `trim_start` / `trim_end` seconds are cut
   from the start of V_pre and the end of V_post (the authors' `oops/do-split.py` trims 0.17 s at each
   end); the Detective and full clips cover the same frames, [pre_start, post_end).
   A time becomes the frame boundary nearest to it (frame boundaries sit at each frame's
   presentation time, and at the end of the last frame). With snapping on, a boundary moves to a
   scene cut whose time lies within `snap_tolerance` seconds (default 0.5 s) of the given time,
   so that no part opens or closes on a few frames of another shot; a snap that would break the
   rules below is not made. Every part must last at least `min_part_seconds` (1 s, measured as
   frame count / frame rate); otherwise `SplitError` says which part is too short and by how much.
3. `cut_clips` writes pre.mp4, main.mp4, post.mp4, detective.mp4 (V_pre, then V_main's frames
   painted black — same frame count and size — then V_post) and full.mp4 (all frames) with the
   ffmpeg binary bundled by imageio-ffmpeg, in one pass. Frames are picked by index (the `trim`
   filter), and everything is re-encoded (H.264 via libx264, yuv420p, CRF 18) at the source's
   average frame rate with one output frame per source frame, so cuts fall exactly on frame
   boundaries. An odd width or height loses its last pixel row/column (yuv420p needs even sizes).
   Audio is dropped from every clip: sound would give the hidden middle away in the Detective
   clip, and all five clips are kept alike. After encoding, each clip's frame count is checked
   against the plan. The clips are written into a temporary folder inside the output folder and
   moved in only once all five are good, so a failure leaves nothing half-written.

`split_video` runs the three steps; it refuses a multi-scene video unless told otherwise.
"""

import bisect
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

import av
import imageio_ffmpeg
import numpy as np

MIN_PART_SECONDS = 1.0
DEFAULT_SNAP_TOLERANCE = 0.5
THUMBNAIL_WIDTH = 64
DEFAULT_CUT_THRESHOLD = 0.08
DEFAULT_CUT_RATIO = 2.5
DEFAULT_CUT_WINDOW = 3

PARTS = ("pre", "main", "post")
CLIPS = ("pre", "main", "post", "detective", "full")
PART_LABELS = {"pre": "V_pre", "main": "V_main", "post": "V_post", "detective": "Detective", "full": "full video"}

ENCODING = {"codec": "libx264", "preset": "veryfast", "crf": 18, "pix_fmt": "yuv420p", "audio": "dropped"}


class SplitError(ValueError):
    """A video that cannot be split as asked; the message is meant for the curator."""


class MultiSceneError(SplitError):
    """The video holds more than one scene; the curator decides whether it is split anyway."""

    def __init__(self, message: str, cut_frames: list[int]):
        super().__init__(message)
        self.cut_frames = cut_frames


# --- 1. Decoding and scene cuts ---------------------------------------------------------------

@dataclass(frozen=True)
class VideoAnalysis:
    """What one linear decode of a video tells: frame timing, size, and where the shots change."""

    path: str
    frame_count: int
    fps: Fraction
    width: int
    height: int
    frame_times: tuple[float, ...]  # presentation time of each frame, the first frame at 0
    end_time: float  # when the last frame ends
    differences: tuple[float, ...]  # differences[i]: frame i vs frame i-1 (0 for frame 0), 0–1
    scene_cuts: tuple[int, ...]  # index of the first frame of each new shot
    has_audio: bool
    detector: dict = field(default_factory=dict)

    @property
    def duration(self) -> float:
        return self.end_time

    @property
    def is_multi_scene(self) -> bool:
        return bool(self.scene_cuts)

    @property
    def cut_times(self) -> list[float]:
        return [self.time_of(index) for index in self.scene_cuts]

    def time_of(self, boundary: int) -> float:
        """The time of a frame boundary: frame `boundary`'s start, or the end of the video."""
        if not 0 <= boundary <= self.frame_count:
            raise ValueError(f"Frame boundary {boundary} is outside 0..{self.frame_count}.")
        return self.end_time if boundary == self.frame_count else self.frame_times[boundary]

    def boundary_at(self, seconds: float) -> int:
        """The frame boundary nearest to a time (ties go to the earlier boundary)."""
        edges = [*self.frame_times, self.end_time]
        right = bisect.bisect_left(edges, seconds)
        if right <= 0:
            return 0
        if right >= len(edges):
            return self.frame_count
        return right - 1 if seconds - edges[right - 1] <= edges[right] - seconds else right


def detect_scene_cuts(differences, *, threshold: float = DEFAULT_CUT_THRESHOLD, ratio: float = DEFAULT_CUT_RATIO,
                      window: int = DEFAULT_CUT_WINDOW) -> list[int]:
    """Indices of frames that start a new shot, from frame-to-frame differences (see the module doc)."""
    values = np.asarray(differences, dtype=np.float64)
    cuts = []
    for index in range(1, len(values)):
        if values[index] < threshold:
            continue
        neighbours = [values[j] for j in range(max(1, index - window), min(len(values), index + window + 1))
                      if j != index]
        local = float(np.mean(neighbours)) if neighbours else 0.0
        if values[index] >= ratio * max(local, 1e-3):
            cuts.append(index)
    return cuts


def _open(path):
    try:
        return av.open(str(path), mode="r")
    except (av.error.FFmpegError, UnicodeDecodeError, ValueError, OSError) as exc:
        reason = getattr(exc, "strerror", None) or exc.__class__.__name__
        raise SplitError(f"{Path(path).name} is not a readable video ({reason}).") from exc


def analyse_video(path, *, cut_threshold: float = DEFAULT_CUT_THRESHOLD, cut_ratio: float = DEFAULT_CUT_RATIO,
                  cut_window: int = DEFAULT_CUT_WINDOW, thumbnail_width: int = THUMBNAIL_WIDTH) -> VideoAnalysis:
    """Decode every frame once (no seeking) and measure timing and scene cuts."""
    path = Path(path)
    if not path.is_file():
        raise SplitError(f"{path} does not exist or is not a file.")
    container = _open(path)
    try:
        stream = next(iter(container.streams.video), None)
        if stream is None:
            raise SplitError(f"{path.name} has no video stream.")
        stream.thread_type = "AUTO"
        has_audio = bool(container.streams.audio)
        rate = stream.average_rate or stream.guessed_rate
        times, differences, previous = [], [], None
        first_time = None
        width = height = 0
        last_duration = None
        try:
            for frame in container.decode(stream):
                if not width:
                    width, height = frame.width, frame.height
                    thumb_height = max(2, round(height * thumbnail_width / width / 2) * 2)
                grey = frame.reformat(width=thumbnail_width, height=thumb_height, format="gray").to_ndarray()
                grey = grey.astype(np.float32)
                time = frame.time
                if time is None:
                    time = len(times) / float(rate) if rate else float(len(times))
                if first_time is None:
                    first_time = time
                times.append(time - first_time)
                differences.append(0.0 if previous is None else float(np.abs(grey - previous).mean() / 255.0))
                previous = grey
                if frame.duration and frame.time_base:
                    last_duration = float(frame.duration * frame.time_base)
        except av.error.FFmpegError as exc:
            reason = getattr(exc, "strerror", None) or exc.__class__.__name__
            raise SplitError(f"{path.name} is damaged: decoding fails after frame {len(times)} ({reason}).") from exc
    finally:
        container.close()
    if not times:
        raise SplitError(f"{path.name} contains no frames.")
    if not rate:
        if len(times) > 1 and times[-1] > 0:
            rate = Fraction(len(times) - 1) / Fraction(times[-1]).limit_denominator(1_000_000)
        else:
            raise SplitError(f"{path.name} has no frame rate.")
    rate = Fraction(rate)
    if any(later < earlier for earlier, later in zip(times, times[1:], strict=False)):
        raise SplitError(f"{path.name} has frames out of order (timestamps go backwards); re-encode it first.")
    end_time = times[-1] + (last_duration or float(1 / rate))
    cuts = detect_scene_cuts(differences, threshold=cut_threshold, ratio=cut_ratio, window=cut_window)
    return VideoAnalysis(
        path=str(path), frame_count=len(times), fps=rate, width=width, height=height,
        frame_times=tuple(round(t, 6) for t in times), end_time=round(end_time, 6),
        differences=tuple(differences), scene_cuts=tuple(cuts), has_audio=has_audio,
        detector={"method": "mean absolute grey difference, adaptive", "thumbnail_width": thumbnail_width,
                  "threshold": cut_threshold, "ratio": cut_ratio, "window": cut_window},
    )


def is_multi_scene(video) -> bool:
    """Whether a video (a path or a `VideoAnalysis`) holds a hard scene cut."""
    analysis = video if isinstance(video, VideoAnalysis) else analyse_video(video)
    return analysis.is_multi_scene


# --- 2. The plan -------------------------------------------------------------------------------

@dataclass(frozen=True)
class SplitPlan:
    """Frame boundaries of the three parts; part `name` holds frames start ≤ i < end."""

    frame_count: int
    fps: Fraction
    event_start: float  # as given
    event_end: float
    main_start: int  # first frame of V_main
    main_end: int  # first frame of V_post
    pre_start: int  # first frame of V_pre (0 unless the start is trimmed)
    post_end: int  # the frame after V_post (frame_count unless the end is trimmed)
    unsnapped: tuple[int, int]  # the boundaries nearest the given times, before snapping
    snapped: dict  # {"start": cut frame or None, "end": cut frame or None}
    parameters: dict

    def frames(self, name: str) -> tuple[int, int]:
        return {
            "pre": (self.pre_start, self.main_start), "main": (self.main_start, self.main_end),
            "post": (self.main_end, self.post_end), "detective": (self.pre_start, self.post_end),
            "full": (self.pre_start, self.post_end),
        }[name]

    def frame_total(self, name: str) -> int:
        start, end = self.frames(name)
        return end - start

    def seconds(self, name: str) -> float:
        """A clip's length as written: its frame count at the output frame rate."""
        return float(self.frame_total(name) / self.fps)


def _part_problems(main_start: int, main_end: int, frame_count: int, fps: Fraction, analysis,
                   min_part_seconds: float, pre_start: int = 0, post_end: int | None = None) -> list[str]:
    minimum = Fraction(min_part_seconds).limit_denominator(1_000_000)
    post_end = frame_count if post_end is None else post_end
    problems = []
    for name, (start, end) in (("pre", (pre_start, main_start)), ("main", (main_start, main_end)),
                               ("post", (main_end, post_end))):
        count = end - start
        if count / fps < minimum:
            needed = -(-minimum * fps // 1)
            problems.append(
                f"{PART_LABELS[name]} would hold {max(count, 0)} frames ({max(count, 0) / float(fps):.2f} s, "
                f"{analysis.time_of(start):.2f}–{analysis.time_of(max(start, end)):.2f} s); every part must last "
                f"at least {min_part_seconds:g} s ({needed} frames at {float(fps):g} fps)"
            )
    return problems


def read_trims(trim_start, trim_end) -> tuple[float, float]:
    """The seconds cut from the start of V_pre and the end of V_post, checked (finite, ≥ 0); SplitError."""
    try:
        trims = float(trim_start or 0), float(trim_end or 0)
    except (TypeError, ValueError) as exc:
        raise SplitError("The trims at the start and the end must be numbers of seconds.") from exc
    if not all(np.isfinite(trim) and trim >= 0 for trim in trims):
        raise SplitError("The trims at the start and the end must be finite numbers of seconds, 0 or more.")
    return trims


def plan_split(analysis: VideoAnalysis, event_start: float, event_end: float, *, snap: bool = True,
               snap_tolerance: float = DEFAULT_SNAP_TOLERANCE, min_part_seconds: float = MIN_PART_SECONDS,
               trim_start: float = 0.0, trim_end: float = 0.0) -> SplitPlan:
    """Frame boundaries for V_pre / V_main / V_post from the event's localization (seconds), with
    `trim_start` seconds cut from the start of V_pre and `trim_end` from the end of V_post."""
    try:
        event_start, event_end = float(event_start), float(event_end)
    except (TypeError, ValueError) as exc:
        raise SplitError("The event start and end must be numbers of seconds.") from exc
    if not (np.isfinite(event_start) and np.isfinite(event_end)):
        raise SplitError("The event start and end must be finite numbers of seconds.")
    trim_start, trim_end = read_trims(trim_start, trim_end)
    duration = analysis.end_time
    if event_start < 0:
        raise SplitError(f"The event start ({event_start:g} s) is before the start of the video.")
    if event_end > duration + 1e-6:
        raise SplitError(f"The event end ({event_end:g} s) is past the end of the video ({duration:.3f} s).")
    if event_start >= event_end:
        raise SplitError(f"The event start ({event_start:g} s) must come before its end ({event_end:g} s).")
    if snap_tolerance < 0 or min_part_seconds <= 0:
        raise SplitError("The snap tolerance must be ≥ 0 s and the minimum part length > 0 s.")
    if trim_start >= event_start or duration - trim_end <= event_end:
        raise SplitError(f"The trims ({trim_start:g} s at the start, {trim_end:g} s at the end) must leave V_pre "
                         f"before the event start ({event_start:g} s) and V_post after its end ({event_end:g} s).")
    start, end = analysis.boundary_at(event_start), analysis.boundary_at(event_end)
    pre_start, post_end = analysis.boundary_at(trim_start), analysis.boundary_at(duration - trim_end)
    frame_count = analysis.frame_count

    def nearest_cut(seconds: float) -> int | None:
        near = [(abs(analysis.time_of(c) - seconds), c) for c in analysis.scene_cuts
                if abs(analysis.time_of(c) - seconds) <= snap_tolerance + 1e-9]
        return min(near)[1] if near else None

    cut_start = nearest_cut(event_start) if snap else None
    cut_end = nearest_cut(event_end) if snap else None
    candidates = [(cut_start, cut_end), (cut_start, None), (None, cut_end), (None, None)]
    chosen = None
    for snap_start, snap_end in candidates:
        b1 = start if snap_start is None else snap_start
        b2 = end if snap_end is None else snap_end
        if b1 < b2 and not _part_problems(b1, b2, frame_count, analysis.fps, analysis, min_part_seconds,
                                          pre_start, post_end):
            chosen = (b1, b2, snap_start, snap_end)
            break
    if chosen is None:
        problems = _part_problems(start, max(start, end), frame_count, analysis.fps, analysis, min_part_seconds,
                                  pre_start, post_end)
        if not problems:  # both times fall on the same frame boundary
            problems = [f"{PART_LABELS['main']} would hold no frame"]
        raise SplitError(f"Cannot split at {event_start:g}–{event_end:g} s: " + "; ".join(problems) + ".")
    b1, b2, snap_start, snap_end = chosen
    return SplitPlan(
        frame_count=analysis.frame_count, fps=analysis.fps, event_start=event_start, event_end=event_end,
        main_start=b1, main_end=b2, pre_start=pre_start, post_end=post_end, unsnapped=(start, end),
        snapped={"start": snap_start, "end": snap_end},
        parameters={"snap": snap, "snap_tolerance": snap_tolerance, "min_part_seconds": min_part_seconds,
                    "trim_start": trim_start, "trim_end": trim_end, "pre_start_frame": pre_start,
                    "post_end_frame": post_end},
    )


# --- 3. Cutting --------------------------------------------------------------------------------

def ffmpeg_exe() -> str:
    return imageio_ffmpeg.get_ffmpeg_exe()


def ffmpeg_version() -> str:
    return imageio_ffmpeg.get_ffmpeg_version()


def _filter_graph(plan: SplitPlan) -> str:
    """One decode, five outputs; frames chosen by index, retimed to one frame per 1/fps."""
    retime = f"setpts=N*{plan.fps.denominator}/{plan.fps.numerator}/TB"
    main_start, main_end, pre_start, post_end = plan.main_start, plan.main_end, plan.pre_start, plan.post_end
    whole = f"trim=start_frame={pre_start}:end_frame={post_end},{retime}"
    return ";".join([
        "[0:v:0]crop=trunc(iw/2)*2:trunc(ih/2)*2:0:0,format=yuv420p,settb=AVTB,split=5[s0][s1][s2][s3][s4]",
        f"[s0]trim=start_frame={pre_start}:end_frame={main_start},{retime}[pre]",
        f"[s1]trim=start_frame={main_start}:end_frame={main_end},{retime}[main]",
        f"[s2]trim=start_frame={main_end}:end_frame={post_end},{retime}[post]",
        f"[s3]{whole},drawbox=x=0:y=0:w=iw:h=ih:color=black:t=fill"
        f":enable='between(n\\,{main_start - pre_start}\\,{main_end - pre_start - 1})'[detective]",
        f"[s4]{whole}[full]",
    ])


def _encoder_args() -> list[str]:
    return ["-an", "-sn", "-dn", "-c:v", ENCODING["codec"], "-preset", ENCODING["preset"], "-crf", str(ENCODING["crf"]),
            "-pix_fmt", ENCODING["pix_fmt"], "-fps_mode", "passthrough", "-movflags", "+faststart",
            "-map_metadata", "-1", "-map_chapters", "-1", "-fflags", "+bitexact", "-flags:v", "+bitexact"]


def count_frames(path) -> int:
    """Frames in a clip, counted by demuxing its packets (each H.264 frame is one packet)."""
    container = _open(path)
    try:
        stream = container.streams.video[0]
        return sum(1 for packet in container.demux(stream) if packet.size)
    finally:
        container.close()


@dataclass(frozen=True)
class SplitResult:
    analysis: VideoAnalysis
    plan: SplitPlan
    files: dict  # clip name → Path
    encoding: dict


def encoding_record(plan: SplitPlan) -> dict:
    return {**ENCODING, "ffmpeg": ffmpeg_version(), "fps": f"{plan.fps.numerator}/{plan.fps.denominator}",
            "frame_selection": "trim by frame index; one output frame per source frame"}


def cut_clips(source, plan: SplitPlan, out_dir, *, timeout: float = 600) -> dict:
    """Write the five clips into `out_dir` (created if needed); return clip name → path.

    Existing files with the same names are replaced, but only once all five clips are written
    and checked: on any failure the folder is left as it was.
    """
    source, out_dir = Path(source), Path(out_dir)
    if out_dir.exists() and not out_dir.is_dir():
        raise SplitError(f"{out_dir} exists and is not a folder.")
    created = not out_dir.exists()
    out_dir.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".split-", dir=out_dir))
    try:
        command = [ffmpeg_exe(), "-nostdin", "-hide_banner", "-loglevel", "error", "-y", "-i", str(source),
                   "-filter_complex", _filter_graph(plan)]
        for name in CLIPS:
            command += ["-map", f"[{name}]", *_encoder_args(), str(work / f"{name}.mp4")]
        try:
            finished = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)
        except subprocess.TimeoutExpired as exc:
            raise SplitError(f"ffmpeg took longer than {timeout:g} s cutting {source.name}.") from exc
        if finished.returncode != 0:
            detail = " ".join(finished.stderr.strip().splitlines()[-3:]) or f"exit status {finished.returncode}"
            raise SplitError(f"ffmpeg could not cut {source.name}: {detail}")
        for name in CLIPS:
            written = count_frames(work / f"{name}.mp4")
            if written != plan.frame_total(name):
                raise SplitError(f"The {PART_LABELS[name]} clip has {written} frames instead of "
                                 f"{plan.frame_total(name)}: {source.name} does not decode the same way twice "
                                 f"(a damaged file?).")
        files = {}
        for name in CLIPS:
            target = out_dir / f"{name}.mp4"
            os.replace(work / f"{name}.mp4", target)
            files[name] = target
        return files
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        if created:
            shutil.rmtree(out_dir, ignore_errors=True)
        raise
    finally:
        shutil.rmtree(work, ignore_errors=True)


def split_video(source, event_start: float, event_end: float, out_dir, *, snap: bool = True,
                snap_tolerance: float = DEFAULT_SNAP_TOLERANCE, min_part_seconds: float = MIN_PART_SECONDS,
                allow_multi_scene: bool = False, analysis: VideoAnalysis | None = None,
                trim_start: float = 0.0, trim_end: float = 0.0) -> SplitResult:
    """Analyse, plan and cut; every check runs before anything is written."""
    analysis = analysis or analyse_video(source)
    if analysis.is_multi_scene and not allow_multi_scene:
        cuts = ", ".join(f"frame {c} ({analysis.time_of(c):.2f} s)" for c in analysis.scene_cuts)
        raise MultiSceneError(f"{Path(source).name} holds more than one scene (cuts at {cuts}); "
                              "BlackSwanSuite keeps single-scene videos.",
                              list(analysis.scene_cuts))
    plan = plan_split(analysis, event_start, event_end, snap=snap, snap_tolerance=snap_tolerance,
                      min_part_seconds=min_part_seconds, trim_start=trim_start, trim_end=trim_end)
    files = cut_clips(source, plan, out_dir)
    return SplitResult(analysis=analysis, plan=plan, files=files, encoding=encoding_record(plan))
