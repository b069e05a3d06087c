"""Reading facts out of media files: type sniffing, quick checks, full probes, poster frames."""

import io
from dataclasses import dataclass
from fractions import Fraction

import av
from PIL import Image as PILImage
from PIL import UnidentifiedImageError

VIDEO_EXTENSIONS = {".mp4", ".m4v", ".mov", ".webm", ".mkv", ".avi"}
IMAGE_EXTENSIONS = {".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp", ".tif", ".tiff"}


class MediaError(ValueError):
    """A file that is not usable media; the message is meant for the person who sent it."""


def sniff_kind(head: bytes) -> str | None:
    """Tell 'video' or 'image' (or None) from a file's first bytes, whatever its name says."""
    if head[4:8] == b"ftyp":
        brand = head[8:12]
        return "image" if brand in (b"avif", b"avis", b"heic", b"heix", b"mif1") else "video"
    if head.startswith(b"\x1a\x45\xdf\xa3"):  # Matroska / WebM
        return "video"
    if head.startswith(b"RIFF") and head[8:12] == b"AVI ":
        return "video"
    if head.startswith(b"RIFF") and head[8:12] == b"WEBP":
        return "image"
    if head.startswith((b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"GIF87a", b"GIF89a", b"BM", b"II*\x00", b"MM\x00*")):
        return "image"
    # QuickTime files may start with other atoms before 'ftyp'.
    if head[4:8] in (b"moov", b"mdat", b"wide", b"free", b"skip"):
        return "video"
    return None


@dataclass
class VideoFacts:
    duration: float
    fps: float
    frame_count: int
    width: int
    height: int
    codec: str


def _open(source):
    try:
        return av.open(source, mode="r")
    except (av.error.FFmpegError, UnicodeDecodeError, ValueError) as exc:
        raise MediaError(f"The file is not a readable video ({exc.__class__.__name__}).") from exc


def check_video(source) -> int:
    """Check at upload time: a video stream exists, its first frame decodes, and so do its last ones.

    The end is checked by seeking to about `TAIL_SECONDS` before the declared end and decoding from
    there (from the key frame before it), so a long video costs about as much as a short one. A file
    whose media data was cut off (a faststart MP4 keeps a complete index at the front) fails here.
    Returns the number of frames decoded at the end.
    """
    container = _open(source)
    try:
        stream = next(iter(container.streams.video), None)
        if stream is None:
            raise MediaError("The file has no video stream.")
        try:
            first = next(container.decode(stream), None)
        except av.error.FFmpegError as exc:
            raise MediaError(f"The video's frames cannot be decoded ({exc}).") from exc
        if first is None:
            raise MediaError("The video contains no frames (zero length).")
        return _check_end(container, stream)
    finally:
        container.close()


TAIL_SECONDS = 1.0
"""How far before the declared end the end check starts decoding (it starts at the key frame before)."""

CONTAINER_END_SLACK = 0.5
"""Extra seconds allowed when only the container declares a duration: it also covers an audio track,
which may run a little longer than the picture."""


def _seconds(timestamp: str) -> float | None:
    """'00:01:05.280000000' (a Matroska track's DURATION tag) in seconds; None if it is not one."""
    try:
        hours, minutes, seconds = timestamp.split(":")
        return int(hours) * 3600 + int(minutes) * 60 + float(seconds)
    except (AttributeError, ValueError):
        return None


def _declared_end(container, stream) -> tuple[float, float] | None:
    """Where the file says the picture ends (seconds) and the slack allowed, or None if it does not say."""
    if stream.duration and stream.time_base:
        return float(((stream.start_time or 0) + stream.duration) * stream.time_base), 0.0
    tagged = _seconds(stream.metadata.get("DURATION", ""))
    start = container.start_time / av.time_base if container.start_time else 0.0
    if tagged:
        return start + tagged, 0.0
    if container.duration:
        return start + container.duration / av.time_base, CONTAINER_END_SLACK
    return None


def _check_end(container, stream) -> int:
    """Decode the last frames and compare where they end with the declared end; MediaError if short.

    A shortfall of up to three quarters of a frame is allowed (rounding in the container's index).
    """
    declared = _declared_end(container, stream)
    if declared is None or not stream.time_base:
        return 0
    end, slack = declared
    rate = stream.average_rate or stream.guessed_rate
    step = 1 / float(rate) if rate else 0.04
    cut_short = "The video is cut short: its frames {} of the {:.2f} s it declares (the file is probably truncated)."
    try:
        container.seek(max(0, int((end - TAIL_SECONDS) / stream.time_base)), stream=stream)
    except av.error.FFmpegError as exc:
        raise MediaError(cut_short.format("cannot be reached near the end", end)) from exc
    decoded, last_end = 0, None
    try:
        for frame in container.decode(stream):
            if frame.pts is None:
                continue
            decoded += 1
            length = frame.duration * stream.time_base if frame.duration else step
            last_end = max(last_end or 0.0, float(frame.pts * stream.time_base + length))
    except av.error.FFmpegError as exc:
        where = f"stop decoding after {last_end:.2f} s" if last_end is not None else "stop decoding"
        raise MediaError(cut_short.format(where, end)) from exc
    if last_end is None:
        raise MediaError(cut_short.format("cannot be decoded near the end", end))
    if end - last_end > 0.75 * step + slack:
        raise MediaError(cut_short.format(f"end at {last_end:.2f} s", end))
    return decoded


def probe_video(path: str) -> VideoFacts:
    """Full metadata. The frame count comes from the container when it knows it, else by demuxing."""
    container = _open(path)
    try:
        stream = next(iter(container.streams.video), None)
        if stream is None:
            raise MediaError("The file has no video stream.")
        rate = stream.average_rate or stream.guessed_rate or Fraction(0)
        fps = float(rate)
        frames = stream.frames
        last_end = 0.0
        if not frames:
            frames = 0
            for packet in container.demux(stream):
                if packet.size == 0:
                    continue
                frames += 1
                if packet.pts is not None and stream.time_base is not None:
                    end = float((packet.pts + (packet.duration or 0)) * stream.time_base)
                    last_end = max(last_end, end)
        if stream.duration is not None and stream.time_base is not None:
            duration = float(stream.duration * stream.time_base)
        elif container.duration:
            duration = container.duration / av.time_base
        elif last_end:
            duration = last_end
        else:
            duration = frames / fps if fps else 0.0
        if frames <= 0 or duration <= 0:
            raise MediaError("The video contains no frames (zero length).")
        return VideoFacts(
            duration=round(duration, 4),
            fps=round(fps, 4),
            frame_count=int(frames),
            width=stream.codec_context.width,
            height=stream.codec_context.height,
            codec=stream.codec_context.name or "",
        )
    finally:
        container.close()


def poster_jpeg(path: str, at_fraction: float = 0.1, max_side: int = 480) -> bytes:
    """A JPEG poster frame taken near the start, seeking rather than decoding everything."""
    container = _open(path)
    try:
        stream = container.streams.video[0]
        if stream.duration and stream.time_base:
            container.seek(int(stream.duration * at_fraction), stream=stream)
        frame = next(container.decode(stream), None)
        if frame is None:
            raise MediaError("No frame could be decoded for the poster.")
        image = frame.to_image()
    finally:
        container.close()
    return _jpeg(image, max_side)


@dataclass
class ImageFacts:
    width: int
    height: int
    format: str


def check_image(source) -> ImageFacts:
    """Verify and fully decode an image; report its size and format."""
    try:
        with PILImage.open(source) as image:
            image.verify()
        if hasattr(source, "seek"):
            source.seek(0)
        with PILImage.open(source) as image:
            image.load()
            if image.width <= 0 or image.height <= 0:
                raise MediaError("The image has no pixels.")
            return ImageFacts(width=image.width, height=image.height, format=(image.format or "").lower())
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as exc:
        raise MediaError(f"The file is not a readable image ({exc.__class__.__name__}).") from exc
    except PILImage.DecompressionBombError as exc:
        raise MediaError("The image is too large to decode safely.") from exc


def thumbnail_jpeg(path: str, max_side: int = 320) -> bytes:
    with PILImage.open(path) as image:
        image.load()
        return _jpeg(image, max_side)


def _jpeg(image, max_side: int) -> bytes:
    image = image.convert("RGB")
    image.thumbnail((max_side, max_side))
    out = io.BytesIO()
    image.save(out, format="JPEG", quality=82)
    return out.getvalue()
