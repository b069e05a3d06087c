"""Random scenes of C-VQA-Synthetic (seeds/001 §3.3), as the `scenes.jsonl` objects hold them.

Flower scenes: two overlapping polygons of different colours split the picture into four regions
(inside both, inside one only, inside neither), each holding at least one flower. A flower is the
disc of radius `r` around its centre; it is inside a polygon when its centre is, and its disc keeps
`EDGE_CLEARANCE` pixels away from every polygon side, so no flower crosses an edge. Flowers do not
overlap and stay inside the picture.

Dot scenes: six circles that do not overlap, no two of them sharing a row or a column within
`AXIS_GAP` pixels (so "top" and "rightmost" are never a tie), each holding 0–9 dots that lie inside
it and do not overlap.

All coordinates are integer pixels, y growing downward. A draw that cannot be completed (a region
with no room left) is dropped and drawn again with the same generator, so a seed gives one scene.
"""

from __future__ import annotations

import math

from annotation.benchmarks.cvqa.synthetic import geometry

WIDTH = HEIGHT = 512
MARGIN = 4  # pixels between any drawn shape and the picture's border
COLORS = {"red": (220, 40, 40), "orange": (245, 140, 20), "yellow": (230, 200, 0), "green": (40, 160, 60),
          "blue": (40, 90, 220), "purple": (140, 60, 190), "pink": (240, 120, 190), "black": (30, 30, 30)}

POLYGON_RADIUS = (130, 190)
POLYGON_CORNERS = (5, 8)
FLOWER_RADIUS = (11, 15)
EDGE_CLEARANCE = 4  # polygon outlines are drawn 3 pixels wide
FLOWER_GAP = 3
# flowers per region: (inside the first polygon, inside the second) → (fewest, most)
REGION_FLOWERS = {(True, True): (1, 5), (True, False): (1, 8), (False, True): (1, 8), (False, False): (1, 8)}
PLACEMENT_TRIES = 400

CIRCLES = 6
CIRCLE_RADIUS = (42, 62)
CIRCLE_GAP = 10
AXIS_GAP = 12
DOT_RADIUS = 5
DOT_GAP = 3
DOTS_PER_CIRCLE = (0, 9)


def flower_scene(rng) -> dict:
    """{"polygons": [two polygons], "flowers": [...], "circles": []}."""
    while True:
        first, second = rng.sample(sorted(COLORS), 2)
        shapes = _overlapping_polygons(rng)
        flowers = _place_flowers(rng, shapes)
        if flowers is not None:
            polygons = [{"color": color, "points": [list(point) for point in points]}
                        for color, points in zip((first, second), shapes, strict=True)]
            return {"polygons": polygons, "flowers": flowers, "circles": []}


def dot_scene(rng) -> dict:
    """{"polygons": [], "flowers": [], "circles": [six circles with their dots]}."""
    while True:
        circles = _place_circles(rng)
        if circles is None:
            continue
        for circle in circles:
            circle["dots"] = _place_dots(rng, circle, rng.randint(*DOTS_PER_CIRCLE))
        if all(circle["dots"] is not None for circle in circles):
            return {"polygons": [], "flowers": [], "circles": circles}


def _polygon(rng, cx: int, cy: int, radius: int) -> list[tuple[int, int]]:
    return geometry.star_polygon(rng, cx, cy, radius, rng.randint(*POLYGON_CORNERS))


def _overlapping_polygons(rng) -> list[list[tuple[int, int]]]:
    """Two polygons inside the picture whose centres are close enough for them to overlap."""
    while True:
        radii = [rng.randint(*POLYGON_RADIUS) for _ in range(2)]
        centres = [(rng.randint(r + MARGIN, WIDTH - r - MARGIN), rng.randint(r + MARGIN, HEIGHT - r - MARGIN))
                   for r in radii]
        distance = math.dist(*centres)
        if 0.35 * sum(radii) <= distance <= 0.8 * sum(radii):
            return [_polygon(rng, cx, cy, r) for (cx, cy), r in zip(centres, radii, strict=True)]


def _search_box(region: tuple[bool, bool], shapes) -> tuple[int, int, int, int]:
    """Where to look for a point of the region: the bounding box of the polygons it is inside."""
    box = (0, 0, WIDTH, HEIGHT)
    for inside, points in zip(region, shapes, strict=True):
        if inside:
            left, top, right, bottom = geometry.bounding_box(points)
            box = (max(box[0], left), max(box[1], top), min(box[2], right), min(box[3], bottom))
    return box


def _place_flowers(rng, shapes) -> list[dict] | None:
    flowers: list[dict] = []
    for region, (fewest, most) in REGION_FLOWERS.items():
        left, top, right, bottom = _search_box(region, shapes)
        for _ in range(rng.randint(fewest, most)):
            for _ in range(PLACEMENT_TRIES):
                r = rng.randint(*FLOWER_RADIUS)
                low_x, high_x = max(left, r + MARGIN), min(right, WIDTH - r - MARGIN)
                low_y, high_y = max(top, r + MARGIN), min(bottom, HEIGHT - r - MARGIN)
                if low_x > high_x or low_y > high_y:
                    return None
                x, y = rng.randint(low_x, high_x), rng.randint(low_y, high_y)
                if _fits_flower(x, y, r, region, shapes, flowers):
                    flowers.append({"x": x, "y": y, "r": r})
                    break
            else:
                return None
    return flowers


def _fits_flower(x: int, y: int, r: int, region, shapes, flowers: list[dict]) -> bool:
    for inside, points in zip(region, shapes, strict=True):
        if geometry.inside_polygon(x, y, points) != inside:
            return False
        if geometry.edge_distance(x, y, points) <= r + EDGE_CLEARANCE:
            return False
    return all(math.hypot(x - f["x"], y - f["y"]) >= r + f["r"] + FLOWER_GAP for f in flowers)


def _place_circles(rng) -> list[dict] | None:
    circles: list[dict] = []
    for _ in range(CIRCLES):
        for _ in range(PLACEMENT_TRIES):
            r = rng.randint(*CIRCLE_RADIUS)
            x = rng.randint(r + MARGIN, WIDTH - r - MARGIN)
            y = rng.randint(r + MARGIN, HEIGHT - r - MARGIN)
            if all(math.hypot(x - c["x"], y - c["y"]) >= r + c["r"] + CIRCLE_GAP
                   and abs(x - c["x"]) >= AXIS_GAP and abs(y - c["y"]) >= AXIS_GAP for c in circles):
                circles.append({"x": x, "y": y, "r": r})
                break
        else:
            return None
    return circles


def _place_dots(rng, circle: dict, count: int) -> list[list[int]] | None:
    """`count` dots inside the circle, their discs inside it and apart from each other."""
    reach = circle["r"] - DOT_RADIUS - DOT_GAP
    dots: list[list[int]] = []
    for _ in range(count):
        for _ in range(PLACEMENT_TRIES):
            x, y = geometry.random_point_in_disc(rng, circle["x"], circle["y"], reach)
            if all(math.hypot(x - dx, y - dy) >= 2 * DOT_RADIUS + DOT_GAP for dx, dy in dots):
                dots.append([x, y])
                break
        else:
            return None
    return dots
