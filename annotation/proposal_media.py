"""Library media and model proposals: which picture or video a proposal was made from, and proposal
inputs made from library media.

A proposal records its inputs (`generation.models.Proposal.inputs`). They name library media in two
ways, both read here: an integer `video_id` or `image_id` (the library's primary key, as review
studies read them) and media specs (`{"type": "video" | "image", "path": ..., "checksum": ...,
"segment": [start, end]}`, one or a list under `media`), found by their checksum, or else by their
stored path. A spec whose file is not in the library shows nothing: the curator still sees the
proposal and its other inputs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

from annotation.models import Image, Video
from generation import frames

DEFAULT_FRAMES = "uniform:8"
KINDS = {"video": Video, "image": Image}


class ProposalInputError(ValueError):
    """Library media that cannot become proposal inputs (the message says why)."""


@dataclass(frozen=True)
class ProposalMedia:
    """One library asset a proposal was made from; `segment` (seconds) when only a part was shown."""

    kind: str  # video | image
    asset: Video | Image
    segment: tuple[float, float] | None = None

    @property
    def fragment(self) -> str:
        """A media fragment (`#t=start,end`) that makes the player show the segment."""
        return f"#t={self.segment[0]:g},{self.segment[1]:g}" if self.segment else ""


def _specs(inputs: dict) -> list[dict]:
    media = inputs.get("media")
    specs = media if isinstance(media, list) else [media]
    return [spec for spec in specs if isinstance(spec, dict) and spec.get("type") in KINDS]


def _primary_key(value) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _segment(spec: dict) -> tuple[float, float] | None:
    segment = spec.get("segment")
    if isinstance(segment, list | tuple) and len(segment) == 2 and all(
            isinstance(v, int | float) and not isinstance(v, bool) for v in segment):
        return float(segment[0]), float(segment[1])
    return None


def _stored_name(path) -> str:
    try:
        return str(Path(str(path)).resolve().relative_to(Path(settings.MEDIA_ROOT).resolve()))
    except (ValueError, OSError):
        return ""


def media_for(proposals) -> dict[int, list[ProposalMedia]]:
    """{proposal id: the library media it was made from}, with one query per kind of media."""
    proposals = list(proposals)
    wanted = {kind: {"pk": set(), "checksum": set(), "file": set()} for kind in KINDS}
    for proposal in proposals:
        inputs = proposal.inputs if isinstance(proposal.inputs, dict) else {}
        for kind in KINDS:
            pk = _primary_key(inputs.get(f"{kind}_id"))
            if pk is not None:
                wanted[kind]["pk"].add(pk)
        for spec in _specs(inputs):
            if spec.get("checksum"):
                wanted[spec["type"]]["checksum"].add(str(spec["checksum"]))
            elif spec.get("path"):
                wanted[spec["type"]]["file"].add(_stored_name(spec["path"]))
    found = {}
    for kind, model in KINDS.items():
        keys = wanted[kind]
        assets = list(model.objects.filter(pk__in=keys["pk"])) + list(
            model.objects.filter(checksum__in=keys["checksum"])) + list(model.objects.filter(file__in=keys["file"]))
        found[kind] = {"pk": {a.pk: a for a in assets}, "checksum": {a.checksum: a for a in assets},
                       "file": {a.file.name: a for a in assets}}
    shown = {}
    for proposal in proposals:
        inputs = proposal.inputs if isinstance(proposal.inputs, dict) else {}
        media, seen = [], set()
        for spec in _specs(inputs):
            by = "checksum" if spec.get("checksum") else "file"
            key = str(spec["checksum"]) if by == "checksum" else _stored_name(spec.get("path", ""))
            asset = found[spec["type"]][by].get(key)
            if asset is not None and (spec["type"], asset.pk) not in seen:
                seen.add((spec["type"], asset.pk))
                media.append(ProposalMedia(spec["type"], asset, _segment(spec) if spec["type"] == "video" else None))
        for kind in KINDS:
            asset = found[kind]["pk"].get(_primary_key(inputs.get(f"{kind}_id")))
            if asset is not None and (kind, asset.pk) not in seen:
                seen.add((kind, asset.pk))
                media.append(ProposalMedia(kind, asset))
        shown[proposal.pk] = media
    return shown


def library_entries(video_ids, image_ids, *, frames_policy: str = DEFAULT_FRAMES) -> list[dict]:
    """Proposal entries, one per library video or image (`{"key", "inputs": {"video_id" | "image_id",
    "media": spec}}`): the inputs of a kind that asks for `media`. Videos are shown to the model as
    frames under `frames_policy`. ProposalInputError for an unknown id, a bad policy or no media."""
    try:
        frames.FramePolicy.parse(frames_policy)
    except ValueError as exc:
        raise ProposalInputError(f"Bad frame policy {frames_policy!r}: {exc}") from None
    entries = []
    for kind, ids in (("video", video_ids), ("image", image_ids)):
        ids = [int(pk) for pk in ids]
        assets = {asset.pk: asset for asset in KINDS[kind].objects.filter(pk__in=ids)}
        missing = [str(pk) for pk in ids if pk not in assets]
        if missing:
            raise ProposalInputError(f"No {kind} with id {', '.join(missing)} in the library.")
        for pk in ids:
            asset = assets[pk]
            spec = {"type": kind, "path": asset.file.path, "checksum": asset.checksum}
            if kind == "video":
                spec["policy"] = frames_policy
            entries.append({"key": f"{kind}-{pk}", "inputs": {f"{kind}_id": pk, "media": spec}})
    if not entries:
        raise ProposalInputError("Choose at least one video or image from the library.")
    return entries
