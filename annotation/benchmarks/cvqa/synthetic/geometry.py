"""Plane geometry of the synthetic scenes, in integer pixels with y growing downward."""

from __future__ import annotations

import math

Point = tuple[int, int]


def inside_polygon(x: float, y: float, points: list[Point]) -> bool:
    """Whether (x, y) lies inside the polygon (even-odd rule, by a horizontal ray)."""
    inside = False
    for (x1, y1), (x2, y2) in edges(points):
        if (y1 > y) != (y2 > y) and x < x1 + (y - y1) * (x2 - x1) / (y2 - y1):
            inside = not inside
    return inside


def edges(points: list[Point]):
    """The polygon's sides as (start, end) pairs, the last one closing it."""
    return zip(points, points[1:] + points[:1], strict=True)


def segment_distance(x: float, y: float, start: Point, end: Point) -> float:
    """Distance from (x, y) to the segment start–end."""
    (x1, y1), (x2, y2) = start, end
    dx, dy = x2 - x1, y2 - y1
    length = dx * dx + dy * dy
    t = 0.0 if length == 0 else max(0.0, min(1.0, ((x - x1) * dx + (y - y1) * dy) / length))
    return math.hypot(x - (x1 + t * dx), y - (y1 + t * dy))


def edge_distance(x: float, y: float, points: list[Point]) -> float:
    """Distance from (x, y) to the polygon's outline."""
    return min(segment_distance(x, y, start, end) for start, end in edges(points))


def star_polygon(rng, cx: int, cy: int, radius: int, corners: int) -> list[Point]:
    """A simple polygon around (cx, cy): corners at increasing angles, each at 55–100 % of `radius`
    from the centre (star-shaped about it, so its sides never cross)."""
    step = 2 * math.pi / corners
    points = []
    for k in range(corners):
        angle = (k + rng.uniform(0.15, 0.85)) * step
        reach = radius * rng.uniform(0.55, 1.0)
        points.append((round(cx + reach * math.cos(angle)), round(cy + reach * math.sin(angle))))
    return points


def bounding_box(points: list[Point]) -> tuple[int, int, int, int]:
    xs, ys = [x for x, _ in points], [y for _, y in points]
    return min(xs), min(ys), max(xs), max(ys)


def random_point_in_disc(rng, cx: int, cy: int, radius: float) -> Point:
    """A uniformly drawn integer point at most `radius` from (cx, cy)."""
    while True:
        x, y = rng.randint(-int(radius), int(radius)), rng.randint(-int(radius), int(radius))
        if x * x + y * y <= radius * radius:
            return cx + x, cy + y
