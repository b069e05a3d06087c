"""What the curator's split timeline shows of a library video, and the plan for given boundaries.

The page (`frontend.split_views`) lets a curator place the two boundaries of BlackSwanSuite's split
(the first frame of V_main and the first frame of V_post) on a timeline, frame by frame. Everything it
shows is computed here, with the same code the split job runs (`generation.splitting`), so the plan
the page shows is the plan the job will cut:

- `timeline(video)`: frame count, frame rate, the presentation time of every frame (so the page maps
  frame numbers ↔ seconds exactly), the scene cuts, the split suggested by a localization study
  (`localization_suggestion`: annotators' marks aggregated with the authors' rule, with the 0.17 s the
  authors trim from each end) and the boundaries and trims to start from (the latest split of the video,
  else that suggestion, else the localization of a BlackSwanSuite item that uses it, else thirds);
- `plan(video, start, end, snap=..., trim_start=..., trim_end=...)`: `splitting.plan_split` for the
  boundaries as given, with snapping and the seconds trimmed from the start of V_pre and the end of
  V_post: the three parts (frames, seconds, whether each is long enough), what snapping moved, and
  warnings (several scenes: the job will flag the video). Boundaries come as frame numbers
  (`start_frame`, `end_frame`, frame boundaries 0..frame_count) or as seconds (`start`, `end`); a
  frame boundary b stands for the time frame b starts, which `plan_split` maps back to b exactly;
- `thumbnail_strip(video, count)`: `count` frames spread over the video (`generation.frames`,
  policy `uniform:<count>@<side>`, the centres of `count` equal slices), pasted side by side into one
  JPEG sprite;
- `frame_jpeg(video, index)`: one frame, exactly the one a full decode gives at that index.

The decode behind `timeline` and `plan` reads every frame once, so it runs in the request only for
videos up to `MAX_INTERACTIVE_SECONDS` long (BlackSwanSuite's clips last seconds); results are kept in
Django's cache, keyed by the file's SHA-256.
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass
from fractions import Fraction

from django.core.cache import cache
from PIL import Image

from annotation.benchmarks.blackswan import localization_study
from annotation.importers.base import number
from annotation.models import ItemMedia, MediaAsset, Video, VideoSplit
from generation import frames, splitting
from generation.media_probe import MediaError
from generation.splitting import PART_LABELS, PARTS, SplitError

MAX_INTERACTIVE_SECONDS = 300
DEFAULT_THUMBNAILS = 12
MAX_THUMBNAILS = 60
THUMBNAIL_SIDE = 160  # longer side of one thumbnail, pixels
FRAME_SIDE = 360  # longer side of a boundary frame, pixels
JPEG_QUALITY = 80
CACHE_SECONDS = 6 * 3600
CACHE_VERSION = "v1"


class NotSplittable(SplitError):
    """The video cannot be put on the timeline (not ready, missing, unreadable, too long)."""


@dataclass(frozen=True)
class Strip:
    """A thumbnail sprite: `count` tiles of tile_width × tile_height, left to right, with their frames."""

    jpeg: bytes
    indices: tuple[int, ...]
    tile_width: int
    tile_height: int

    def as_dict(self) -> dict:
        return {"count": len(self.indices), "indices": list(self.indices), "tile_width": self.tile_width,
                "tile_height": self.tile_height}


# --- The decode --------------------------------------------------------------------------------

def _cache_key(video: Video, *parts) -> str:
    return ":".join(["blackswan-timeline", CACHE_VERSION, video.checksum or f"video-{video.pk}", *map(str, parts)])


def _path(video: Video) -> str:
    if video.status != MediaAsset.Status.READY or not video.file:
        raise NotSplittable(f"“{video.title}” is not ready yet (it is still being probed).")
    try:
        path = video.file.path
    except (NotImplementedError, ValueError) as exc:
        raise NotSplittable(f"The file of “{video.title}” is not on this server's disk.") from exc
    return path


def analysis(video: Video) -> splitting.VideoAnalysis:
    """The split job's analysis of the video (timing and scene cuts), decoded once and cached."""
    path = _path(video)
    if video.duration and video.duration > MAX_INTERACTIVE_SECONDS:
        raise NotSplittable(f"“{video.title}” lasts {video.duration:g} s; the timeline analyses videos of up to "
                            f"{MAX_INTERACTIVE_SECONDS} s while you wait.")
    key = _cache_key(video, "analysis")
    found = cache.get(key)
    if found is None:
        try:
            found = splitting.analyse_video(path)
        except SplitError as exc:
            raise NotSplittable(str(exc)) from exc
        cache.set(key, found, CACHE_SECONDS)
    return found


def _cuts(facts: splitting.VideoAnalysis) -> list[dict]:
    return [{"frame": cut, "time": round(facts.time_of(cut), 6)} for cut in facts.scene_cuts]


def timeline(video: Video) -> dict:
    """What the page draws: timing of every frame, scene cuts, and the boundaries to start from."""
    facts = analysis(video)
    suggestion = localization_suggestion(video, facts)
    start_frame, end_frame, origin, trims = initial_boundaries(video, facts, suggestion)
    return {
        "video_id": video.pk, "title": video.title,
        "frame_count": facts.frame_count, "fps": float(facts.fps),
        "fps_fraction": f"{facts.fps.numerator}/{facts.fps.denominator}",
        "duration": facts.end_time, "frame_times": list(facts.frame_times),
        "scene_cuts": _cuts(facts), "multi_scene": facts.is_multi_scene,
        "min_part_seconds": splitting.MIN_PART_SECONDS, "snap_tolerance": splitting.DEFAULT_SNAP_TOLERANCE,
        "initial": {"start_frame": start_frame, "end_frame": end_frame, "origin": origin,
                    "trim_start": trims[0], "trim_end": trims[1]},
        "suggestion": suggestion,
        "convention": "a part holds the frames i with start_frame <= i < end_frame",
    }


def localization_suggestion(video: Video, facts: splitting.VideoAnalysis) -> dict | None:
    """The split a localization study suggests (`localization_study.suggestion_for`), with its boundaries as
    frames of this video and a line saying where it comes from; None when no study has marked the video."""
    found = localization_study.suggestion_for(video, duration=facts.end_time)
    if found is None:
        return None
    marks = found["n_marks"]
    found["label"] = (f"suggested from {marks} mark{'s' if marks != 1 else ''} of {found['study_name']}, "
                      f"agreement: {found['agreement']}")
    parts = found["suggestion"]
    if parts is not None:
        found["start_frame"] = facts.boundary_at(parts["event_start"])
        found["end_frame"] = max(facts.boundary_at(parts["event_end"]), found["start_frame"] + 1)
    return found


def initial_boundaries(video: Video, facts: splitting.VideoAnalysis,
                       suggestion: dict | None = None) -> tuple[int, int, str, tuple[float, float]]:
    """(start frame, end frame, where they come from, (trim at the start, trim at the end) in seconds) to
    put the handles and the trims at when the page opens."""
    latest = video.splits.order_by("-created_at", "-id").first()
    if latest is not None:
        return (facts.boundary_at(latest.event_start), facts.boundary_at(latest.event_end),
                f"split #{latest.pk} ({latest.get_status_display().lower()})", (latest.trim_start, latest.trim_end))
    if suggestion is not None and suggestion.get("suggestion") is not None:
        parts = suggestion["suggestion"]
        return (suggestion["start_frame"], suggestion["end_frame"], f"the localization study {suggestion['study']}",
                (parts["trim_start"], parts["trim_end"]))
    use = (ItemMedia.objects.filter(video=video, role="video", item__version__benchmark__slug="blackswan")
           .select_related("item__version").order_by("-item__version__created_at", "item_id").first())
    if use is not None:
        payload = use.item.payload
        event, post = number(payload.get("event")), number(payload.get("postevent"))
        if event is not None and post is not None and 0 <= event < post:
            start, end = number(payload.get("preevent")), number(payload.get("end"))
            trims = (start if start is not None and 0 < start < event else 0.0,
                     facts.end_time - end if end is not None and post < end < facts.end_time else 0.0)
            return (facts.boundary_at(event), facts.boundary_at(post),
                    f"the localization of {use.item.version}/{use.item.external_id}", trims)
    count = facts.frame_count
    return count // 3, max(count // 3 + 1, 2 * count // 3), "thirds of the video", (0.0, 0.0)


# --- Boundaries and the plan ---------------------------------------------------------------------

def _integer(value, name: str) -> int:
    if isinstance(value, bool):
        raise SplitError(f"'{name}' must be a whole frame number.")
    if isinstance(value, int):
        return value
    text = str(value).strip()
    if not text.lstrip("-").isdigit():
        raise SplitError(f"'{name}' must be a whole frame number (got {value!r}).")
    return int(text)


def _seconds(value, name: str) -> float:
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        raise SplitError(f"'{name}' must be a number of seconds (got {value!r}).") from None
    if not math.isfinite(seconds):
        raise SplitError(f"'{name}' must be a finite number of seconds.")
    return seconds


def _given(data, name: str):
    value = data.get(name)
    return None if value is None or (isinstance(value, str) and not value.strip()) else value


def read_boundaries(facts: splitting.VideoAnalysis, data) -> tuple[float, float]:
    """The event's start and end in seconds from `start_frame`/`end_frame` or `start`/`end` (seconds)."""
    frames_given = [_given(data, "start_frame"), _given(data, "end_frame")]
    seconds_given = [_given(data, "start"), _given(data, "end")]
    if all(value is not None for value in frames_given):
        start, end = (_integer(value, name) for value, name in zip(frames_given, ("start_frame", "end_frame"),
                                                                    strict=True))
        for value, name in ((start, "start_frame"), (end, "end_frame")):
            if not 0 <= value <= facts.frame_count:
                raise SplitError(f"'{name}' {value} is not a frame boundary of this video "
                                 f"(0..{facts.frame_count}).")
        return facts.time_of(start), facts.time_of(end)
    if all(value is not None for value in seconds_given):
        return _seconds(seconds_given[0], "start"), _seconds(seconds_given[1], "end")
    raise SplitError("Give the event's boundaries: 'start_frame' and 'end_frame' (frame numbers), "
                     "or 'start' and 'end' (seconds).")


def read_snap(data) -> bool:
    value = data.get("snap", True)
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off", ""):
        return False
    raise SplitError(f"'snap' must be true or false (got {value!r}).")


def read_trims(data) -> tuple[float, float]:
    """`trim_start` and `trim_end` (seconds, 0 when not given) of a request's data; SplitError."""
    return splitting.read_trims(_given(data, "trim_start"), _given(data, "trim_end"))


def _trim_frames(facts: splitting.VideoAnalysis, trim_start: float, trim_end: float) -> tuple[int, int]:
    """The first frame of V_pre and the frame after V_post for these trims."""
    return facts.boundary_at(trim_start), facts.boundary_at(max(0.0, facts.end_time - trim_end))


def _parts(facts: splitting.VideoAnalysis, main_start: int, main_end: int, pre_start: int = 0,
           post_end: int | None = None) -> list[dict]:
    minimum = Fraction(splitting.MIN_PART_SECONDS).limit_denominator(1_000_000)
    post_end = facts.frame_count if post_end is None else post_end
    bounds = {"pre": (pre_start, main_start), "main": (main_start, main_end), "post": (main_end, post_end)}
    out = []
    for name in PARTS:
        start, end = bounds[name]
        count = max(end - start, 0)
        out.append({
            "name": name, "label": PART_LABELS[name], "start_frame": start, "end_frame": max(start, end),
            "frames": count, "seconds": round(float(count / facts.fps), 4),
            "start_time": round(facts.time_of(start), 6), "end_time": round(facts.time_of(max(start, end)), 6),
            "too_short": count / facts.fps < minimum,
        })
    return out


def _nearest_cut(facts: splitting.VideoAnalysis, seconds: float, tolerance: float) -> int | None:
    near = [(abs(facts.time_of(cut) - seconds), cut) for cut in facts.scene_cuts
            if abs(facts.time_of(cut) - seconds) <= tolerance + 1e-9]
    return min(near)[1] if near else None


def plan(video: Video, event_start: float, event_end: float, *, snap: bool = True,
         snap_tolerance: float = splitting.DEFAULT_SNAP_TOLERANCE, trim_start: float = 0.0,
         trim_end: float = 0.0) -> dict:
    """The split the job would make for these event times and trims: `ok`, the parts, notes and warnings.

    `ok` is False (with `error`) when `plan_split` refuses, e.g. a part shorter than 1 s; `parts` then
    shows the boundaries as given, without snapping, each part marked `too_short` or not.
    """
    facts = analysis(video)
    trim_start, trim_end = splitting.read_trims(trim_start, trim_end)
    given = (facts.boundary_at(event_start), facts.boundary_at(event_end))
    edges = _trim_frames(facts, trim_start, trim_end)
    result = {
        "event_start": event_start, "event_end": event_end, "snap": snap, "snap_tolerance": snap_tolerance,
        "trim_start": trim_start, "trim_end": trim_end, "pre_start": edges[0], "post_end": edges[1],
        "given_frames": list(given), "frame_count": facts.frame_count, "scene_cuts": _cuts(facts),
        "notes": [], "warnings": [],
    }
    if facts.is_multi_scene:
        where = ", ".join(f"frame {cut} ({facts.time_of(cut):.2f} s)" for cut in facts.scene_cuts)
        result["warnings"].append({
            "code": "multi_scene",
            "message": f"The video holds {len(facts.scene_cuts) + 1} scenes (cuts at {where}). BlackSwanSuite keeps "
                       "single-scene videos: the split will be flagged, and a curator then filters the video out "
                       "or has it split anyway."})
    try:
        made = splitting.plan_split(facts, event_start, event_end, snap=snap, snap_tolerance=snap_tolerance,
                                    trim_start=trim_start, trim_end=trim_end)
    except SplitError as exc:
        result.update(ok=False, error=str(exc), parts=_parts(facts, given[0], max(given), *edges))
        result["warnings"].append({"code": "refused", "message": str(exc)})
        return result
    for which, index, name in (("start", 0, "V_main's start"), ("end", 1, "V_post's start")):
        cut = made.snapped[which]
        if cut is not None and cut != given[index]:
            result["notes"].append({"code": "snapped", "boundary": which,
                                    "message": f"{name} moved from frame {given[index]} to the scene cut at frame "
                                               f"{cut} ({facts.time_of(cut):.3f} s)."})
        elif cut is None and snap:
            nearby = _nearest_cut(facts, (event_start, event_end)[index], snap_tolerance)
            if nearby is not None and nearby != given[index]:
                result["notes"].append({"code": "not_snapped", "boundary": which,
                                        "message": f"{name} stays at frame {given[index]}: snapping it to the scene "
                                                   f"cut at frame {nearby} would leave a part shorter than "
                                                   f"{splitting.MIN_PART_SECONDS:g} s."})
    result.update(ok=True, error="", main_start=made.main_start, main_end=made.main_end,
                  snapped=made.snapped, parts=_parts(facts, made.main_start, made.main_end, made.pre_start,
                                                     made.post_end))
    return result


def plan_from_request(video: Video, data) -> dict:
    """`plan` for the boundaries in a request's data (frames or seconds, `snap`, `trim_start`, `trim_end`)."""
    facts = analysis(video)
    start, end = read_boundaries(facts, data)
    trim_start, trim_end = read_trims(data)
    return plan(video, start, end, snap=read_snap(data), trim_start=trim_start, trim_end=trim_end)


# --- Pictures ---------------------------------------------------------------------------------------

def _jpeg(image: Image.Image) -> bytes:
    out = io.BytesIO()
    image.convert("RGB").save(out, format="JPEG", quality=JPEG_QUALITY)
    return out.getvalue()


def thumbnail_strip(video: Video, count: int = DEFAULT_THUMBNAILS) -> Strip:
    """`count` frames across the whole video (centres of equal slices), side by side in one JPEG."""
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_THUMBNAILS:
        raise SplitError(f"The number of thumbnails must be a whole number from 1 to {MAX_THUMBNAILS}.")
    path = _path(video)
    key = _cache_key(video, "strip", count, THUMBNAIL_SIDE)
    found = cache.get(key)
    if found is not None:
        return found
    try:
        sampled = frames.sample(path, frames.FramePolicy("uniform", count=count, max_side=THUMBNAIL_SIDE),
                                checksum=video.checksum or None)
    except (MediaError, ValueError) as exc:
        raise NotSplittable(f"The frames of “{video.title}” cannot be read: {exc}") from exc
    width, height = sampled.size
    sprite = Image.new("RGB", (width * len(sampled.frames), height))
    for position, image in enumerate(sampled.frames):
        sprite.paste(image, (position * width, 0))
    strip = Strip(jpeg=_jpeg(sprite), indices=tuple(sampled.indices), tile_width=width, tile_height=height)
    cache.set(key, strip, CACHE_SECONDS)
    return strip


def frame_jpeg(video: Video, index: int, max_side: int = FRAME_SIDE) -> bytes:
    """Frame `index` (0-based, presentation order) as a JPEG whose longer side is at most `max_side`."""
    facts = analysis(video)
    if not 0 <= index < facts.frame_count:
        raise SplitError(f"Frame {index} is not a frame of this video (0..{facts.frame_count - 1}).")
    key = _cache_key(video, "frame", index, max_side)
    found = cache.get(key)
    if found is not None:
        return found
    # a segment around the frame's slot picks exactly that frame (generation.frames.segment_range)
    segment = (max(0.0, float((index - Fraction(1, 4)) / facts.fps)), float((index + Fraction(3, 4)) / facts.fps))
    try:
        sampled = frames.sample(_path(video), frames.FramePolicy("first", max_side=max_side), segment=segment,
                                checksum=video.checksum or None)
    except (MediaError, ValueError) as exc:
        raise NotSplittable(f"Frame {index} of “{video.title}” cannot be read: {exc}") from exc
    if tuple(sampled.indices) != (index,):
        raise NotSplittable(f"Frame {index} of “{video.title}” cannot be read on its own "
                            f"(the reader found frame {sampled.indices[0] if sampled.indices else 'none'}).")
    data = _jpeg(sampled.frames[0])
    cache.set(key, data, CACHE_SECONDS)
    return data


# --- Splits of the video -------------------------------------------------------------------------

def split_row(split: VideoSplit) -> dict:
    """One split as the page lists it: its state, boundaries, job progress and clips (ids)."""
    job = split.job
    clips = []
    if split.status == VideoSplit.Status.DONE:
        for name, clip in split.clips().items():
            if clip is not None:
                clips.append({"name": name, "label": PART_LABELS[name], "video_id": clip.pk, "title": clip.title,
                              "frames": clip.frame_count, "duration": clip.duration})
    return {
        "id": split.pk, "status": split.status, "status_label": split.get_status_display(),
        "finished": split.status not in (VideoSplit.Status.QUEUED, VideoSplit.Status.RUNNING),
        "event_start": split.event_start, "event_end": split.event_end, "snap": split.snap,
        "trim_start": split.trim_start, "trim_end": split.trim_end,
        "allow_multi_scene": split.allow_multi_scene,
        "main_start_frame": split.main_start_frame, "main_end_frame": split.main_end_frame,
        "frame_count": split.frame_count, "scene_cuts": split.scene_cuts, "message": split.message,
        "requested_by": split.requested_by.get_username() if split.requested_by_id else "",
        "created_at": split.created_at.isoformat(),
        "job": None if job is None else {"id": job.pk, "status": job.status, "progress": job.progress,
                                         "message": job.message},
        "clips": clips, "can_resolve": split.status == VideoSplit.Status.FLAGGED,
    }


def split_rows(video: Video) -> list[dict]:
    """Every split of the video, newest first."""
    splits = (video.splits.select_related("job", "requested_by", *(f"{name}_video" for name in splitting.CLIPS))
              .order_by("-created_at", "-id"))
    return [split_row(split) for split in splits]
