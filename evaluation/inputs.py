"""What a model is shown for one request: a request's `MediaInput`s turned into backend message parts.

`resolve(request, settings)` applies the run's input strategy and frame policy and returns the
parts to put before the prompt, plus a JSON record of what was sent (for `Prediction.inputs`: the
strategy, the policy spec, per medium its frame indices, timestamps, size and fingerprint, and the
`order` in which the media were shown):

- **videos** become frames read by `generation.frames.sample`, one sample per `MediaInput`
  (its `segment`, when it has one). By default each part is its own frame group (a `VideoPart`;
  the backend passes it as a native video or as separate images) and `hidden` parts are left out.
  Under the input strategy `video`, consecutive parts of the same video go in as **one** `VideoPart`
  in which a hidden part is black frames of the same count and size (the indices it would have had).
- **images** become an `ImagePart` fingerprinted by the file's checksum and the transform applied.
- **combined canvas** (input strategy `combined`, or `extra["canvas"]` on the request): every image
  on one canvas, drawn with Pillow: the premise (role `premise`, else the first image) on the left,
  the others to its right in order, each with its `MediaInput.label` above it.
- a request **without media** gets no parts (text only).

The frame policy's `@S` (longer side at most S pixels) applies to every picture the model sees:
frames, images and the panels of a canvas. A `parts:` policy gives a per-role frame count
(`parts:pre=4,main=4,post=4`: 4 uniform frames for the MediaInput with role `pre`, ...); `detective`
is not accepted here (the benchmark expresses it with `hidden` parts and the `video` strategy).
"""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

from annotation.models import Image as ImageAsset
from annotation.models import Video
from generation import frames as frame_sampling
from generation.backends.base import ImagePart, VideoPart
from generation.frames import FramePolicy, SampledFrames, resized_size

DEFAULT_FRAME_POLICY = "uniform:8"
NATIVE_VIDEO_STRATEGY = "video"
CANVAS_STRATEGY = "combined"
CANVAS_LAYOUT = "premise-left-v1"  # bump when the drawing changes: it is part of the canvas fingerprint
CANVAS_PANEL_HEIGHT = 448  # panel height when the policy sets no @S
CANVAS_LABEL_HEIGHT = 40
CANVAS_GAP = 16
CANVAS_FONT_SIZE = 24


class InputError(ValueError):
    """A request's media cannot be shown as asked (missing asset, unreadable file, bad combination)."""


def check_frame_policy(policy: FramePolicy) -> None:
    if policy.name == "detective":
        raise InputError("The 'detective' frame policy is not used by the runner: the benchmark marks the hidden "
                         "part and the 'video' input strategy blacks it out. Use uniform:N.")


@dataclass
class MediaSettings:
    """The run's choices that decide what a model sees."""

    input_strategy: str = "default"
    frame_policy: FramePolicy = field(default_factory=lambda: FramePolicy.parse(DEFAULT_FRAME_POLICY))

    @property
    def native_video(self) -> bool:
        return self.input_strategy == NATIVE_VIDEO_STRATEGY


@dataclass
class ResolvedInputs:
    parts: list  # ImagePart / VideoPart, in the order they go into the message
    record: dict  # what was sent, for Prediction.inputs
    per_medium: list = field(default_factory=list)  # [(MediaInput, [parts])]: one medium at a time (captions)


@dataclass(frozen=True)
class _Asset:
    kind: str
    pk: int
    path: str
    checksum: str


class MediaResolver:
    """Resolves requests' media, reading each (video, policy, segment) once while it is in its cache."""

    def __init__(self, settings: MediaSettings, *, cache_size: int = 32):
        check_frame_policy(settings.frame_policy)
        self.settings = settings
        self._assets: dict[tuple[str, int], _Asset] = {}
        self._frames: OrderedDict[tuple, SampledFrames] = OrderedDict()
        self._images: OrderedDict[tuple, Image.Image] = OrderedDict()
        self._cache_size = cache_size

    # -- assets
    def prefetch(self, requests) -> None:
        """Look up every asset the requests use in two queries."""
        wanted = {"video": set(), "image": set()}
        for request in requests:
            for medium in request.media:
                if medium.kind in wanted and medium.asset_id is not None and \
                        (medium.kind, medium.asset_id) not in self._assets:
                    wanted[medium.kind].add(medium.asset_id)
        for kind, model in (("video", Video), ("image", ImageAsset)):
            for asset in model.objects.filter(pk__in=wanted[kind]):
                self._assets[(kind, asset.pk)] = _Asset(kind, asset.pk, asset.file.path, asset.checksum)

    def asset(self, medium) -> _Asset:
        if medium.kind not in ("video", "image"):
            raise InputError(f"Medium {medium.role!r} has unknown kind {medium.kind!r} (video or image).")
        if medium.asset_id is None:
            raise InputError(f"Medium {medium.role!r} names no asset.")
        key = (medium.kind, medium.asset_id)
        if key not in self._assets:
            self.prefetch_one(medium)
        asset = self._assets[key]
        if not Path(asset.path).is_file():
            raise InputError(f"The {medium.kind} file of {medium.role!r} ({asset.path}) is missing.")
        return asset

    def prefetch_one(self, medium) -> None:
        model = Video if medium.kind == "video" else ImageAsset
        asset = model.objects.filter(pk=medium.asset_id).first()
        if asset is None:
            raise InputError(f"{medium.kind.title()} {medium.asset_id} of {medium.role!r} does not exist.")
        self._assets[(medium.kind, asset.pk)] = _Asset(medium.kind, asset.pk, asset.file.path, asset.checksum)

    # -- resolution
    def resolve(self, request, *, separate: bool = False) -> ResolvedInputs:
        """Parts and record for one request under the run's settings (see the module docstring).

        `separate`: every medium on its own, whatever the strategy (no canvas, no joined video), as
        an image-to-text describer sees them one at a time.
        """
        policy = self.settings.frame_policy
        record = {"input_strategy": self.settings.input_strategy, "frame_policy": policy.spec(), "media": []}
        media = list(request.media)
        if not media:
            record.update(text_only=True, order=[])
            return ResolvedInputs(parts=[], record=record)
        canvas = self.settings.input_strategy == CANVAS_STRATEGY or bool((request.extra or {}).get("canvas"))
        if canvas and not separate:
            return self._canvas(media, record)

        parts: list = []
        per_medium: list = []
        index = 0
        while index < len(media):
            medium = media[index]
            if medium.kind == "image":
                part, entry = self._image_part(medium)
                parts.append(part)
                per_medium.append((medium, [part]))
                record["media"].append(entry)
                index += 1
                continue
            if self.settings.native_video and not separate:
                group = [medium]
                while index + len(group) < len(media) and media[index + len(group)].kind == "video" and \
                        media[index + len(group)].asset_id == medium.asset_id:
                    group.append(media[index + len(group)])
                part, entries = self._joined_video(group)
                parts.append(part)
                per_medium.append((medium, [part]))
                record["media"].extend(entries)
                index += len(group)
                continue
            sampled = None if medium.hidden else self._sample(medium, black=False)
            entry = self._video_entry(medium, sampled, sent=not medium.hidden)
            record["media"].append(entry)
            if sampled is not None:
                part = sampled.as_video_part()
                parts.append(part)
                per_medium.append((medium, [part]))
            index += 1
        record["order"] = [entry["role"] for entry in record["media"] if entry.get("sent", True)]
        return ResolvedInputs(parts=parts, record=record, per_medium=per_medium)

    def _policy_for(self, medium, *, black: bool) -> FramePolicy:
        policy = self.settings.frame_policy
        if policy.name == "parts":
            counts = dict(policy.parts)
            count = counts.get(medium.role, policy.count)
            if not count:
                raise InputError(f"Frame policy {policy.spec()!r} gives no frame count for part {medium.role!r}.")
            name = "uniform"
        else:
            name, count = policy.name, policy.count
        if black:
            name = "black"
            count = max(count, 1)
        return FramePolicy(name=name, count=count if name != "first" else 1, max_side=policy.max_side)

    def _sample(self, medium, *, black: bool) -> SampledFrames:
        asset = self.asset(medium)
        policy = self._policy_for(medium, black=black)
        segment = tuple(medium.segment) if medium.segment else None
        key = (asset.path, asset.checksum, policy.spec(), segment)
        if key in self._frames:
            self._frames.move_to_end(key)
            return self._frames[key]
        try:
            sampled = frame_sampling.sample(asset.path, policy, segment=segment, checksum=asset.checksum)
        except (ValueError, OSError) as exc:  # MediaError is a ValueError
            raise InputError(f"Cannot read frames of {medium.role!r} ({asset.path}): {exc}") from exc
        self._frames[key] = sampled
        if len(self._frames) > self._cache_size:
            self._frames.popitem(last=False)
        return sampled

    @staticmethod
    def _video_entry(medium, sampled: SampledFrames | None, *, sent: bool) -> dict:
        entry = {"role": medium.role, "kind": "video", "asset_id": medium.asset_id,
                 "segment": list(medium.segment) if medium.segment else None, "hidden": medium.hidden, "sent": sent}
        if sampled is not None:
            entry.update(frames=list(sampled.indices), timestamps=list(sampled.timestamps),
                         blank=list(sampled.blank), size=list(sampled.size), policy=sampled.policy,
                         fingerprint=sampled.fingerprint)
        return entry

    def _joined_video(self, group: list) -> tuple[VideoPart, list[dict]]:
        """One video of several parts, a hidden part as black frames at its own indices and size."""
        samples = [self._sample(medium, black=medium.hidden) for medium in group]
        sizes = {s.size for s in samples}
        if len(sizes) > 1:
            raise InputError(f"Parts of one video came out in different sizes: {sorted(sizes)}.")
        frames_ = tuple(frame for s in samples for frame in s.frames)
        indices = tuple(i for s in samples for i in s.indices)
        fingerprint = _digest({"joined": [s.fingerprint for s in samples]})
        part = VideoPart(frames=frames_, fingerprint=fingerprint, frame_indices=indices, fps=samples[0].fps)
        entries = [self._video_entry(medium, s, sent=True) for medium, s in zip(group, samples, strict=True)]
        entries[0]["joined_fingerprint"] = fingerprint
        return part, entries

    def _load_image(self, medium, *, resize: bool = True) -> tuple[Image.Image, _Asset, dict]:
        asset = self.asset(medium)
        max_side = self.settings.frame_policy.max_side if resize else 0
        key = (asset.path, asset.checksum, max_side)
        transform = {"max_side": max_side} if max_side else {}
        if key in self._images:
            self._images.move_to_end(key)
            return self._images[key], asset, transform
        try:
            with Image.open(asset.path) as opened:
                image = opened.convert("RGB")
        except OSError as exc:
            raise InputError(f"Cannot read image {medium.role!r} ({asset.path}): {exc}") from exc
        size = resized_size(image.size, max_side)
        if size != image.size:
            image = image.resize(size, frame_sampling.RESAMPLE)
        self._images[key] = image
        if len(self._images) > self._cache_size:
            self._images.popitem(last=False)
        return image, asset, transform

    def _image_part(self, medium) -> tuple[ImagePart, dict]:
        image, asset, transform = self._load_image(medium)
        fingerprint = image_fingerprint(asset.checksum, transform)
        entry = {"role": medium.role, "kind": "image", "asset_id": medium.asset_id, "checksum": asset.checksum,
                 "transform": transform, "size": list(image.size), "fingerprint": fingerprint}
        return ImagePart(image=image, fingerprint=fingerprint), entry

    def _canvas(self, media: list, record: dict) -> ResolvedInputs:
        if any(m.kind != "image" for m in media):
            raise InputError("A combined canvas is made of images only; this request shows a video.")
        shown = [m for m in media if not m.hidden]
        premise = next((m for m in shown if m.role == "premise"), shown[0] if shown else None)
        if premise is None:
            raise InputError("A combined canvas needs at least one visible image.")
        ordered = [premise] + [m for m in shown if m is not premise]
        loaded = [self._load_image(m, resize=False) for m in ordered]  # scaled once, to the panel height
        height = self.settings.frame_policy.max_side or CANVAS_PANEL_HEIGHT
        canvas = draw_canvas([(image, m.label) for (image, _, _), m in zip(loaded, ordered, strict=True)],
                             panel_height=height)
        panels = [{"role": m.role, "label": m.label, "asset_id": m.asset_id, "checksum": asset.checksum}
                  for m, (_, asset, _) in zip(ordered, loaded, strict=True)]
        fingerprint = _digest({"canvas": CANVAS_LAYOUT, "panel_height": height, "panels": panels})
        record["canvas"] = {"layout": CANVAS_LAYOUT, "order": [m.role for m in ordered], "panels": panels,
                            "size": list(canvas.size), "fingerprint": fingerprint}
        record["media"] = [{"role": m.role, "kind": "image", "asset_id": m.asset_id, "in_canvas": True}
                           for m in ordered]
        record["order"] = [m.role for m in ordered]
        part = ImagePart(image=canvas, fingerprint=fingerprint)
        return ResolvedInputs(parts=[part], record=record, per_medium=[(premise, [part])])


def image_fingerprint(checksum: str, transform: dict) -> str:
    return _digest({"source": f"sha256:{checksum}", "transform": transform})


def _digest(record) -> str:
    return hashlib.sha256(json.dumps(record, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def _font(size: int):
    try:
        return ImageFont.load_default(size=size)
    except (TypeError, OSError):  # Pillow without FreeType: the fixed bitmap font
        return ImageFont.load_default()


def draw_canvas(panels: list[tuple[Image.Image, str]], *, panel_height: int = CANVAS_PANEL_HEIGHT) -> Image.Image:
    """Images side by side on a white canvas, each scaled to `panel_height` and labelled above.

    Deterministic: the same images, labels and height give the same pixels (for one Pillow version).
    """
    scaled = []
    for image, _ in panels:
        width = max(1, round(image.width * panel_height / image.height))
        scaled.append(image if image.size == (width, panel_height) else
                      image.resize((width, panel_height), frame_sampling.RESAMPLE))
    total_width = sum(i.width for i in scaled) + CANVAS_GAP * (len(scaled) + 1)
    canvas = Image.new("RGB", (total_width, panel_height + CANVAS_LABEL_HEIGHT + CANVAS_GAP), "white")
    draw = ImageDraw.Draw(canvas)
    font = _font(CANVAS_FONT_SIZE)
    x = CANVAS_GAP
    for image, (_, label) in zip(scaled, panels, strict=True):
        if label:
            left, top, right, bottom = draw.textbbox((0, 0), label, font=font)
            text_x = x + max(0, (image.width - (right - left)) // 2)
            text_y = max(0, (CANVAS_LABEL_HEIGHT - (bottom - top)) // 2 - top)
            draw.text((text_x, text_y), label, fill="black", font=font)
        canvas.paste(image, (x, CANVAS_LABEL_HEIGHT))
        x += image.width + CANVAS_GAP
    return canvas
