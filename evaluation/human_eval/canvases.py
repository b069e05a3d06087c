"""Canvases of several images side by side, stored once in the media library."""

from __future__ import annotations

import io

from django.utils.text import slugify
from PIL import Image as PILImage

from annotation.media import Incoming, MediaRejected, ingest
from annotation.models import MediaAsset
from evaluation.human_eval.base import HumanEvalError
from evaluation.inputs import draw_canvas


def canvas_image(panels: list[tuple[object, str]], *, user, title: str):
    """The library Image of these (Image asset, label) panels side by side (evaluation.inputs' canvas),
    stored once: the same panels give the same file, which the library keeps a single time."""
    loaded = []
    for asset, label in panels:
        with asset.file.open("rb") as handle, PILImage.open(handle) as opened:
            loaded.append((opened.convert("RGB"), label))
    buffer = io.BytesIO()
    draw_canvas(loaded).save(buffer, format="PNG")
    size = buffer.tell()
    try:
        return ingest(Incoming(buffer, f"{slugify(title)[:80] or 'canvas'}.png", size), user=user, title=title,
                      source=MediaAsset.Source.DERIVED, probe=False)
    except MediaRejected as exc:
        if exc.existing is not None:
            return exc.existing
        raise HumanEvalError(f"The canvas for {title!r} cannot be stored: {exc.message}") from None


def _images_by_role(benchmark_item) -> dict:
    return {link.role: link.image for link in benchmark_item.media.filter(image__isnull=False).select_related("image")}
