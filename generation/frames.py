"""Explicit, named, recorded frame-sampling policies, and a seeking frame reader.

What a model sees of a video is part of the experiment, so it is chosen by a named policy and
recorded with every request (policy, frame indices, timestamps, fingerprint):

    uniform:N     N frames spread uniformly over the segment (the whole video by default).
    first         The first frame of the segment.
    black:N       The indices of uniform:N, but every frame is black (the papers' "black video"
                  control), at the size the real frames would have had.
    parts:...     BlackSwan's per-part input: N frames per named part of a split
                  (`parts:pre=4,main=4,post=4`, or `parts:4` for 4 frames in every part).
    detective:N   BlackSwan's Detective input: uniform:N over the whole video, with the frames that
                  fall inside the `main` part replaced by black frames (indices unchanged), so the
                  model sees V_pre, a black gap as long as V_main, then V_post.

Any policy may add `@S` (e.g. `uniform:8@448`): frames are resized so that the longer side is at
most S pixels, keeping the aspect ratio (bicubic); 0 or no suffix keeps the source size.

Endpoint convention (exact): a segment [start, end) in seconds covers the frames whose timestamp
t = i / fps satisfies start <= t < end, i.e. indices [ceil(start * fps), ceil(end * fps)), clipped
to the video (a segment shorter than one frame gives the frame shown at `start`, one that starts at
or after the end gives the last frame). N uniform frames
over a segment [a, a + F) of F frames take the indices a + floor((i + 0.5) * F / N), i = 0..N-1:
the centres of N equal slices, so neither the very first nor the very last frame is forced in and
nothing beyond the segment is ever taken. When N > F the repeated indices are dropped (fewer than N
frames come back, each at most once). Example: F = 132, N = 8 -> [8, 24, 41, 57, 74, 90, 107, 123].

A frame's index is its position in presentation order in a full decode (frame 0 is the first frame
decoded); its timestamp is index / fps seconds after frame 0 (fps being the average frame rate, so
for the rare variable-frame-rate file timestamps and segment bounds are approximate). The reader
maps indices to timestamps by the stream's time base and average frame rate, after checking that the
file's timestamps form a regular grid (from the MP4 index, or by demuxing packets without decoding
them). For each wanted frame it seeks to the keyframe at or before it and decodes forward to it, but
goes on decoding without a seek when the next wanted frame comes before the next keyframe (or within
two seconds when keyframes are unknown); on the way it does not decode unwanted non-reference
frames, which no other frame depends on. It falls back to a linear decode (counting frames) when the
timestamps are irregular, when seeking fails, or when anything unexpected shows up (a frame off the
grid, out of order, or missing). Either way the frame for an index is the one a full decode gives at
that position (tests/generation/test_frames.py checks pixel equality against `read_all_frames_reference`). Only
the wanted frames are kept, converted to RGB and resized as soon as they are decoded, so memory does
not grow with the length of the video.

Fingerprint: SHA-256 over a JSON record of the source, the policy (`as_dict()`), the segment or part,
the indices and which of them are black. The source is the file's SHA-256 when the caller passes
`checksum=` (library assets store it; use it so fingerprints hold across machines), else its
absolute path, modification time (ns) and size. No pixels are hashed: the same file, policy and
indices give the same frames.
"""

from __future__ import annotations

import bisect
import hashlib
import itertools
import json
import math
import os
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import av
from PIL import Image

from generation.backends.base import VideoPart
from generation.media_probe import MediaError

POLICY_NAMES = ("uniform", "first", "black", "parts", "detective")
COUNTED = ("uniform", "black", "detective")  # policies that need an explicit count
BLANK_PART = "main"  # the part a Detective input blacks out
SEQUENTIAL_WINDOW_S = 2.0  # without a keyframe index: decode on instead of seeking when this close
RESAMPLE = Image.Resampling.BICUBIC


# --- Policies -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class FramePolicy:
    """A named frame-sampling policy. `parts` holds per-part counts for "parts" (in order); a plain
    `count` for "parts" means that many frames in every part of the split."""

    name: str
    count: int = 0
    max_side: int = 0
    parts: tuple[tuple[str, int], ...] = ()

    def __post_init__(self):
        parts = self.parts.items() if isinstance(self.parts, dict) else self.parts
        object.__setattr__(self, "parts", tuple((str(name), int(n)) for name, n in parts))
        if self.name not in POLICY_NAMES:
            raise ValueError(f"Unknown frame policy {self.name!r}; choose one of {', '.join(POLICY_NAMES)}.")
        if self.name == "first" and self.count == 0:
            object.__setattr__(self, "count", 1)
        if not isinstance(self.count, int) or not isinstance(self.max_side, int):
            raise ValueError("count and max_side must be integers.")
        if self.max_side < 0:
            raise ValueError("max_side must be 0 (keep the size) or a positive number of pixels.")
        if self.name == "first" and self.count != 1:
            raise ValueError("The 'first' policy takes exactly one frame.")
        if self.name in COUNTED and self.count < 1:
            raise ValueError(f"The {self.name!r} policy needs a frame count of at least 1 (e.g. {self.name}:8).")
        if self.name == "parts":
            if self.parts and self.count:
                raise ValueError("Give 'parts' either one count for every part or a count per part, not both.")
            if not self.parts and self.count < 1:
                raise ValueError("The 'parts' policy needs counts, e.g. parts:pre=4,main=4,post=4 or parts:4.")
            names = [name for name, _ in self.parts]
            if len(set(names)) != len(names) or any(not name for name in names):
                raise ValueError("Part names must be distinct and non-empty.")
            if any(n < 1 for _, n in self.parts):
                raise ValueError("Every part needs at least one frame.")
        elif self.parts:
            raise ValueError(f"Per-part counts only apply to the 'parts' policy, not {self.name!r}.")

    @classmethod
    def parse(cls, text: str) -> FramePolicy:
        """`uniform:8`, `first`, `black:32`, `parts:pre=4,post=4`, `parts:4`, `detective:16`, each
        optionally followed by `@S` for a longer side of at most S pixels."""
        spec = (text or "").strip()
        max_side = 0
        if "@" in spec:
            spec, _, side = spec.partition("@")
            max_side = _int(side, "max side", text)
        name, _, arg = spec.strip().partition(":")
        name, arg = name.strip().lower(), arg.strip()
        if name not in POLICY_NAMES:
            raise ValueError(f"Unknown frame policy {text!r}; choose one of {', '.join(POLICY_NAMES)}.")
        if name == "parts" and "=" in arg:
            parts = []
            for item in arg.split(","):
                part, eq, n = item.partition("=")
                if not eq:
                    raise ValueError(f"Write per-part counts as name=count (in {text!r}).")
                parts.append((part.strip(), _int(n, "frame count", text)))
            return cls(name=name, max_side=max_side, parts=tuple(parts))
        count = _int(arg, "frame count", text) if arg else 0
        return cls(name=name, count=count, max_side=max_side)

    def spec(self) -> str:
        """The canonical string form; `FramePolicy.parse(policy.spec()) == policy`."""
        if self.name == "first":
            text = "first"
        elif self.parts:
            text = "parts:" + ",".join(f"{name}={n}" for name, n in self.parts)
        else:
            text = f"{self.name}:{self.count}"
        return f"{text}@{self.max_side}" if self.max_side else text

    def __str__(self) -> str:
        return self.spec()

    def describe(self) -> str:
        """One sentence for reports and logs."""
        if self.name == "uniform":
            text = f"{self.count} frames sampled uniformly over the segment (slice centres)"
        elif self.name == "first":
            text = "the first frame of the segment"
        elif self.name == "black":
            text = f"{self.count} black frames at the indices of uniform:{self.count} (black-video control)"
        elif self.name == "parts":
            if self.parts:
                text = "per part: " + ", ".join(f"{n} frames of {name}" for name, n in self.parts)
            else:
                text = f"{self.count} frames per part, in every part of the split"
            text += " (uniform within each part)"
        else:
            text = (f"{self.count} frames uniformly over the whole video, those inside "
                    f"'{BLANK_PART}' replaced by black frames (Detective input)")
        size = f"longer side at most {self.max_side} px" if self.max_side else "source size"
        return f"{self.spec()}: {text}; {size}"

    def as_dict(self) -> dict:
        return {"name": self.name, "count": self.count, "max_side": self.max_side, "parts": dict(self.parts)}

    @classmethod
    def from_dict(cls, data: dict) -> FramePolicy:
        unknown = set(data) - {"name", "count", "max_side", "parts"}
        if unknown:
            raise ValueError(f"Unknown frame policy fields: {', '.join(sorted(unknown))}.")
        return cls(name=data["name"], count=int(data.get("count", 0)), max_side=int(data.get("max_side", 0)),
                   parts=tuple((data.get("parts") or {}).items()))


def _int(text: str, what: str, whole: str) -> int:
    try:
        return int(text.strip())
    except ValueError:
        raise ValueError(f"Bad {what} {text.strip()!r} in frame policy {whole!r}.") from None


# --- Results --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class SampledFrames:
    """Frames as a model will see them, with everything needed to record and reproduce the choice."""

    frames: tuple  # PIL RGB images, in index order
    indices: tuple[int, ...]  # frame indices in the source video
    timestamps: tuple[float, ...]  # seconds after the first frame (index / fps)
    fps: float
    size: tuple[int, int]  # (width, height) of the returned frames
    fingerprint: str
    policy: dict = field(default_factory=dict)
    blank: tuple[bool, ...] = ()  # True where the policy put a black frame
    segment: tuple[float, float] | None = None  # seconds, as asked
    part: str = ""  # the part name, for "parts"
    frame_count: int = 0  # frames in the source video
    source_size: tuple[int, int] = (0, 0)
    method: str = ""  # how frames were read: seek | linear | none (all black)

    def __len__(self) -> int:
        return len(self.frames)

    def record(self) -> dict:
        """A JSON-able record for results: everything except the pixels."""
        return {"policy": self.policy, "indices": list(self.indices), "timestamps": list(self.timestamps),
                "blank": list(self.blank), "fps": self.fps, "size": list(self.size), "segment":
                list(self.segment) if self.segment else None, "part": self.part, "frame_count": self.frame_count,
                "fingerprint": self.fingerprint}

    def as_video_part(self):
        """The frames as a `VideoPart` for a chat request."""
        return VideoPart(frames=tuple(self.frames), fingerprint=self.fingerprint, frame_indices=tuple(self.indices),
                         fps=self.fps)


# --- Index arithmetic -----------------------------------------------------------------------------

def uniform_indices(frame_count: int, n: int, start: int = 0) -> list[int]:
    """start + floor((i + 0.5) * frame_count / n) for i in 0..n-1, repeats dropped."""
    if frame_count <= 0 or n <= 0:
        return []
    out = []
    for i in range(n):
        index = start + (2 * i + 1) * frame_count // (2 * n)
        if not out or index != out[-1]:
            out.append(index)
    return out


def segment_range(segment: tuple[float, float] | None, frame_count: int, fps: float | Fraction) -> tuple[int, int]:
    """The frame indices [a, b) of a segment in seconds (see the module's endpoint convention)."""
    if segment is None:
        return 0, frame_count
    start, end = (Fraction(x).limit_denominator(1_000_000) for x in segment)
    if start < 0 or end <= start:
        raise ValueError(f"A segment needs 0 <= start < end (got {segment[0]}, {segment[1]}).")
    rate = Fraction(fps).limit_denominator(1_000_000)
    a, b = min(math.ceil(start * rate), frame_count), min(math.ceil(end * rate), frame_count)
    if b <= a:  # shorter than one frame, or starting at/after the end: the frame shown at `start`
        a = max(0, min(math.floor(start * rate), frame_count - 1))
        b = a + 1
    return a, b


def resized_size(size: tuple[int, int], max_side: int) -> tuple[int, int]:
    width, height = size
    if not max_side or max(width, height) <= max_side:
        return width, height
    scale = max_side / max(width, height)
    return max(1, round(width * scale)), max(1, round(height * scale))


# --- Sampling -------------------------------------------------------------------------------------

@dataclass
class _Group:
    part: str
    segment: tuple[float, float] | None
    indices: list[int]
    blank: list[bool]


def sample(path, policy: FramePolicy | str, *, segment: tuple[float, float] | None = None,
           parts: dict[str, tuple[float, float]] | None = None,
           checksum: str | None = None) -> SampledFrames | dict[str, SampledFrames]:
    """Frames of the video at `path` under `policy`.

    `segment` (seconds, [start, end)) restricts uniform/first/black to part of the video. "parts"
    and "detective" need `parts`, the split in seconds (e.g. {"pre": (0, 4.2), "main": (4.2, 7.0),
    "post": (7.0, 10.0)}); "parts" returns a dict of SampledFrames, one per part in the split's
    order, "detective" one SampledFrames over the whole video. Raises MediaError for files that
    are not readable video, ValueError for a bad policy, segment or split.
    """
    policy = FramePolicy.parse(policy) if isinstance(policy, str) else policy
    if policy.name in ("parts", "detective"):
        if segment is not None:
            raise ValueError(f"The {policy.name!r} policy works on the whole video with `parts`, not a `segment`.")
        if not parts:
            raise ValueError(f"The {policy.name!r} policy needs `parts`, the split in seconds.")
        if policy.name == "detective" and BLANK_PART not in parts:
            raise ValueError(f"The 'detective' policy needs a {BLANK_PART!r} part to black out.")
        if policy.name == "parts":
            missing = [name for name, _ in policy.parts if name not in parts]
            if missing:
                raise ValueError(f"The split has no part named {', '.join(map(repr, missing))}.")
    elif parts is not None:
        raise ValueError(f"`parts` only applies to the 'parts' and 'detective' policies, not {policy.name!r}.")

    path = os.fspath(path)
    info = _inspect(path)
    source = f"sha256:{checksum}" if checksum else _file_identity(path)
    size = resized_size((info.width, info.height), policy.max_side)
    frame_count = info.frame_count
    for _attempt in range(3):
        groups = _plan(policy, frame_count, info.rate, segment, parts)
        wanted = sorted({i for g in groups for i, black in zip(g.indices, g.blank, strict=True) if not black})
        if not wanted:
            images, method, true_count = {}, "none", None
        else:
            images, method, true_count = _read(path, info, wanted, size)
        if true_count is None:
            break
        frame_count = true_count  # the header overstated the length: plan again with the real count
    else:
        raise MediaError("The video's frame count could not be established.")

    results = {}
    for group in groups:
        frames = tuple(Image.new("RGB", size) if black else images[i]
                       for i, black in zip(group.indices, group.blank, strict=True))
        record = {"source": source, "policy": policy.as_dict(), "segment": group.segment, "part": group.part,
                  "indices": group.indices, "blank": group.blank}
        digest = hashlib.sha256(json.dumps(record, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
        results[group.part] = SampledFrames(
            frames=frames, indices=tuple(group.indices),
            timestamps=tuple(round(float(i / info.rate), 6) for i in group.indices), fps=float(info.rate), size=size,
            fingerprint=digest, policy=policy.as_dict(), blank=tuple(group.blank),
            segment=tuple(group.segment) if group.segment else None, part=group.part, frame_count=frame_count,
            source_size=(info.width, info.height), method=method)
    return results if policy.name == "parts" else results[""]


def _plan(policy, frame_count, fps, segment, parts) -> list[_Group]:
    if policy.name == "parts":
        counts = dict(policy.parts) if policy.parts else dict.fromkeys(parts, policy.count)
        groups = []
        for name, span in parts.items():
            if name in counts:
                a, b = segment_range(tuple(span), frame_count, fps)
                indices = uniform_indices(b - a, counts[name], a)
                groups.append(_Group(name, tuple(span), indices, [False] * len(indices)))
        return groups
    if policy.name == "detective":
        indices = uniform_indices(frame_count, policy.count)
        a, b = segment_range(tuple(parts[BLANK_PART]), frame_count, fps)
        return [_Group("", None, indices, [a <= i < b for i in indices])]
    a, b = segment_range(segment, frame_count, fps)
    indices = [a] if policy.name == "first" else uniform_indices(b - a, policy.count, a)
    return [_Group("", tuple(segment) if segment else None, indices, [policy.name == "black"] * len(indices))]


def _file_identity(path: str) -> str:
    st = os.stat(path)
    return f"file:{os.path.abspath(path)}:{st.st_mtime_ns}:{st.st_size}"


# --- Reading --------------------------------------------------------------------------------------

@dataclass
class _Info:
    rate: Fraction  # average frame rate
    frame_count: int
    width: int
    height: int
    regular: bool  # timestamps known to lie on a constant-rate grid
    keyframes: list[int] = field(default_factory=list)  # approximate frame positions of keyframes


class _Fallback(Exception):
    """Seeking cannot be trusted here: read linearly instead."""


def _open(path: str):
    try:
        container = av.open(path, mode="r")
    except (av.error.FFmpegError, UnicodeDecodeError, ValueError, OSError) as exc:
        raise MediaError(f"The file is not a readable video ({exc.__class__.__name__}).") from exc
    stream = next(iter(container.streams.video), None)
    if stream is None:
        container.close()
        raise MediaError("The file has no video stream.")
    stream.thread_type = "AUTO"
    return container, stream


def _inspect(path: str) -> _Info:
    """Frame rate, frame count, size, and whether the timestamps form a regular grid (from the index
    when the container has one; else by demuxing, which reads packets but decodes nothing)."""
    container, stream = _open(path)
    with container:
        rate = stream.average_rate or stream.guessed_rate
        if not rate or rate <= 0:
            raise MediaError("The video has no usable frame rate.")
        rate = Fraction(rate)
        width, height = stream.codec_context.width, stream.codec_context.height
        if not width or not height:
            raise MediaError("The video has no picture size.")
        step = 1 / (rate * stream.time_base) if stream.time_base else None
        try:
            entries = [e for e in stream.index_entries if not e.is_discard]
        except Exception:  # noqa: BLE001 - an index we cannot read is just no index
            entries = []
        count = stream.frames or 0
        regular, keyframes = False, []
        if count and len(entries) == count and step:  # a complete index (MP4/MOV): no need to read packets
            regular = _regular([e.timestamp for e in entries], step)
            keyframes = [i for i, e in enumerate(entries) if e.is_keyframe]
        elif step:  # no complete index (Matroska/WebM, odd MP4s): count and check the packets' timestamps
            stamps = []
            try:
                for packet in container.demux(stream):
                    if packet.size:
                        stamps.append(packet.pts)
            except av.error.FFmpegError as exc:
                raise MediaError(f"The video cannot be read ({exc.__class__.__name__}).") from exc
            count = len(stamps) or count
            regular = bool(stamps) and None not in stamps and _regular(sorted(stamps), step)
        if not count:
            duration = (stream.duration * stream.time_base if stream.duration and stream.time_base
                        else Fraction(container.duration or 0, av.time_base))
            count = int(duration * rate)
        if count <= 0:
            raise MediaError("The video contains no frames (zero length).")
        return _Info(rate=rate, frame_count=count, width=width, height=height, regular=regular, keyframes=keyframes)


def _regular(stamps: list, step: Fraction) -> bool:
    tolerance = max(Fraction(1), step / 8)  # one tick of rounding, e.g. 29.97 fps in a 1/1000 time base
    return all(abs(b - a - step) <= tolerance for a, b in zip(stamps, stamps[1:], strict=False))


def _converter(size: tuple[int, int]):
    def convert(frame) -> Image.Image:
        image = frame.to_image()
        if image.size != size:
            image = image.resize(size, RESAMPLE)
        return image

    return convert


def _read(path: str, info: _Info, wanted: list[int], size) -> tuple[dict, str, int | None]:
    """{index: image} for the sorted indices, how they were read, and the true frame count when the
    video turned out shorter than its header said (then nothing else is returned)."""
    convert = _converter(size)
    if info.regular:
        try:
            return _read_seeking(path, info, wanted, convert), "seek", None
        except _Fallback:
            pass
    images, true_count = _read_linear(path, wanted, convert)
    return images, "linear", true_count


def _seek(container, offset: int, stream) -> None:
    """container.seek to the keyframe at or before `offset` (a pts); a seam for tests."""
    container.seek(offset, stream=stream, backward=True, any_frame=False)


class _SeekingReader:
    """Decodes chosen frames of one open stream, seeking to keyframes and decoding forward."""

    def __init__(self, container, stream, info: _Info, convert):
        self.container, self.stream, self.info, self.convert = container, stream, info, convert
        self.step = 1 / (info.rate * stream.time_base)
        self.skip, self.pending = "DEFAULT", None  # no skipping until frame 0 and the wanted frames are known
        self.window = max(1, math.ceil(SEQUENTIAL_WINDOW_S * info.rate))
        self.frames = self._decode(iter(container.demux(stream)), None)
        first = next(self.frames, None)
        if first is None or first.pts is None:
            raise _Fallback("no first frame")
        self.origin = first.pts  # frame 0's pts: indices count from here
        self.floor = first.pts  # frames before this pts are leading pictures of the keyframe we started at
        self.position = 0  # index of the last frame decoded
        self.first = first

    def _decode(self, packets, key):
        """Frames from `key` (if any) then `packets` on. Non-reference frames that are not wanted are
        not decoded at all (skip_frame=NONREF): nothing refers to them, so skipping them cannot change
        another frame's pixels."""
        context = self.stream.codec_context
        for packet in itertools.chain((key,) if key is not None else (), packets):
            skip = "NONREF" if packet.size and packet.pts is not None and self.skippable(packet.pts) else "DEFAULT"
            if skip != self.skip:
                context.skip_frame = self.skip = skip
            yield from packet.decode()

    def skippable(self, pts: int) -> bool:
        return self.pending is not None and round((pts - self.origin) / self.step) not in self.pending

    def index_of(self, pts: int) -> int:
        offset = (pts - self.origin) / self.step
        index = round(offset)
        if abs(offset - index) > Fraction(1, 4):
            raise _Fallback("timestamp off the frame grid")
        return index

    def pts_of(self, index: int) -> int:
        return self.origin + math.floor(index * self.step + Fraction(1, 2))

    def should_seek(self, target: int) -> bool:
        if self.info.keyframes:
            at = bisect.bisect_right(self.info.keyframes, target) - 1
            return at >= 0 and self.info.keyframes[at] > self.position + 2
        return target - self.position > self.window

    def seek(self, target: int) -> None:
        target_pts = self.pts_of(target)
        offset, back = target_pts, max(1, math.ceil(self.step))
        for _attempt in range(12):
            try:
                _seek(self.container, offset, self.stream)
            except (av.error.FFmpegError, OSError) as exc:
                raise _Fallback("seek failed") from exc
            packets = iter(self.container.demux(self.stream))
            key = next((p for p in packets if p.is_keyframe or p.size == 0), None)
            if key is None or key.size == 0 or key.pts is None:
                raise _Fallback("no keyframe after seeking")
            if key.pts <= target_pts:
                self.frames = self._decode(packets, key)
                self.floor, self.position = key.pts, None
                return
            if offset <= self.origin:
                break
            offset, back = max(self.origin, min(offset, key.pts) - back), back * 2  # landed after it: go back further
        raise _Fallback("could not land before the target")

    def read(self, wanted: list[int]) -> dict:
        out = {}
        self.pending = set(wanted)
        if 0 in self.pending:
            out[0] = self.convert(self.first)
            self.pending.discard(0)
        self.first = None
        for target in wanted:
            if target in out:
                continue
            if self.should_seek(target):
                self.seek(target)
            while True:
                frame = next(self.frames, None)
                if frame is None or frame.pts is None:
                    raise _Fallback("ran out of frames")
                if frame.pts < self.floor:
                    continue
                index = self.index_of(frame.pts)
                if self.position is not None and index <= self.position:
                    raise _Fallback("frames out of order")
                self.position = index
                if index == target:
                    out[target] = self.convert(frame)
                    self.pending.discard(target)
                    break
                if index > target:
                    raise _Fallback("passed the target")
        return out


def _read_seeking(path: str, info: _Info, wanted: list[int], convert) -> dict:
    container, stream = _open(path)
    with container:
        try:
            return _SeekingReader(container, stream, info, convert).read(wanted)
        except av.error.FFmpegError as exc:
            raise _Fallback("decoding after a seek failed") from exc


def _read_linear(path: str, wanted: list[int], convert) -> tuple[dict, int | None]:
    """Decode from the start, counting frames, up to the last wanted one. The second value is the
    number of frames when the video ended first."""
    wanted_set, last, out, count = set(wanted), max(wanted), {}, 0
    container, stream = _open(path)
    with container:
        try:
            for frame in container.decode(stream):
                if count in wanted_set:
                    out[count] = convert(frame)
                count += 1
                if count > last:
                    return out, None
        except av.error.FFmpegError as exc:
            raise MediaError(f"The video's frames cannot be decoded ({exc.__class__.__name__}).") from exc
    if count == 0:
        raise MediaError("The video contains no frames (zero length).")
    return {}, count


def read_all_frames_reference(path, indices, *, max_side: int = 0) -> list[Any]:
    """Ground truth for tests and the bench: decode every frame, keep the wanted ones (in the order
    asked, repeats allowed), converted and resized exactly like `sample`."""
    path, indices = os.fspath(path), list(indices)
    wanted = set(indices)
    kept, count = {}, 0
    container, stream = _open(path)
    with container:
        convert = _converter(resized_size((stream.codec_context.width, stream.codec_context.height), max_side))
        try:
            for frame in container.decode(stream):
                if count in wanted:
                    kept[count] = convert(frame)
                count += 1
        except av.error.FFmpegError as exc:
            raise MediaError(f"The video's frames cannot be decoded ({exc.__class__.__name__}).") from exc
    missing = sorted(wanted - set(kept))
    if missing:
        raise MediaError(f"The video has {count} frames; no frame {missing[0]}.")
    return [kept[i] for i in indices]
