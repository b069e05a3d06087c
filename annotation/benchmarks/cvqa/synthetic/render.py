"""Pictures of the synthetic scenes (Pillow): translucent polygons with solid outlines, flower icons,
circles with dots; PNG bytes that depend on the scene only (no timestamp or other metadata)."""

from __future__ import annotations

import io
import math

from PIL import Image, ImageDraw

from annotation.benchmarks.cvqa.synthetic.scenes import COLORS, DOT_RADIUS

BACKGROUND = (255, 255, 255)
POLYGON_FILL_ALPHA = 60
POLYGON_OUTLINE = 3
PETALS = 5
PETAL = (255, 255, 255)
HEART = (250, 190, 40)
INK = (60, 60, 60)
CIRCLE_OUTLINE = 3
DOT = (20, 20, 20)


def render(scene: dict) -> bytes:
    image = Image.new("RGBA", (scene["width"], scene["height"]), BACKGROUND + (255,))
    for polygon in scene["polygons"]:
        layer = Image.new("RGBA", image.size, (0, 0, 0, 0))
        ImageDraw.Draw(layer).polygon(_points(polygon), fill=COLORS[polygon["color"]] + (POLYGON_FILL_ALPHA,))
        image = Image.alpha_composite(image, layer)
    image = image.convert("RGB")
    draw = ImageDraw.Draw(image)
    for polygon in scene["polygons"]:
        draw.polygon(_points(polygon), outline=COLORS[polygon["color"]], width=POLYGON_OUTLINE)
    for flower in scene["flowers"]:
        _flower(draw, flower["x"], flower["y"], flower["r"])
    for circle in scene["circles"]:
        x, y, r = circle["x"], circle["y"], circle["r"]
        draw.ellipse((x - r, y - r, x + r, y + r), outline=INK, width=CIRCLE_OUTLINE)
        for dx, dy in circle["dots"]:
            draw.ellipse((dx - DOT_RADIUS, dy - DOT_RADIUS, dx + DOT_RADIUS, dy + DOT_RADIUS), fill=DOT)
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def _points(polygon: dict) -> list[tuple[int, int]]:
    return [tuple(point) for point in polygon["points"]]


def _flower(draw: ImageDraw.ImageDraw, x: int, y: int, r: int) -> None:
    """Petals around a heart, all within the disc of radius r around (x, y)."""
    petal, reach = 0.45 * r, 0.55 * r
    for k in range(PETALS):
        angle = 2 * math.pi * k / PETALS - math.pi / 2
        px, py = x + reach * math.cos(angle), y + reach * math.sin(angle)
        draw.ellipse((px - petal, py - petal, px + petal, py + petal), fill=PETAL, outline=INK)
    heart = 0.3 * r
    draw.ellipse((x - heart, y - heart, x + heart, y + heart), fill=HEART, outline=INK)
