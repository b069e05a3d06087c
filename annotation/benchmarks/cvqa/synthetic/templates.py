"""The six question templates of C-VQA-Synthetic (seeds/001 Table 2), worded as the release words them.

Each template asks an original question and its counterfactual about one scene and answers both from
the scene alone. `ask(template, scene, rng)` gives the `Question` (texts without their options), or
None when the scene does not suit the template: the counterfactual answer must differ from the
original one (for template 6 that makes the circle with most dots unique, as the paper requires).

1. flowers outside the {C} polygons → … if all polygons were {C}: the flowers inside no polygon.
2. flowers inside the {C} polygons → … if we removed N flowers in {C} polygons: that count − N.
3. flowers inside the {C1} polygons → … if all flowers in {C2} polygons were removed: inside C1, not C2.
4. dots in all the circles → … if N dots were removed: the total − N.
5. dots in the top three circles (smallest y) → … if the two rightmost circles (largest x) and their
   dots were removed: the top three of the four circles left.
6. most dots in a circle → … if one of the circles with most dots were removed: the next count.
"""

from __future__ import annotations

from dataclasses import dataclass

from annotation.benchmarks.cvqa.synthetic import geometry, scenes

TEMPLATES = (1, 2, 3, 4, 5, 6)
FLOWER_TEMPLATES = (1, 2, 3)


@dataclass(frozen=True)
class Question:
    query: str
    answer: int
    new_query: str
    new_answer: int


def template_type(template: int) -> str:
    return f"abs_counting_{template}"


def draw_scene(template: int, rng) -> dict:
    return scenes.flower_scene(rng) if template in FLOWER_TEMPLATES else scenes.dot_scene(rng)


def ask(template: int, scene: dict, rng) -> Question | None:
    question = ASKERS[template](scene, rng)
    return question if question.answer != question.new_answer else None


# --- Flower counting ---------------------------------------------------------------------------

def _inside(scene: dict) -> list[set[str]]:
    """For each flower, the colours of the polygons its centre lies in."""
    return [{polygon["color"] for polygon in scene["polygons"]
             if geometry.inside_polygon(flower["x"], flower["y"], [tuple(p) for p in polygon["points"]])}
            for flower in scene["flowers"]]


def _colors(scene: dict) -> list[str]:
    return [polygon["color"] for polygon in scene["polygons"]]


def outside_if_all_were(scene: dict, rng) -> Question:
    color = rng.choice(_colors(scene))
    inside = _inside(scene)
    return Question(
        f"How many flowers are outside the {color} polygons?", sum(color not in found for found in inside),
        f"How many flowers would be outside the {color} polygons if all polygons were {color}?",
        sum(not found for found in inside))


def inside_if_some_removed(scene: dict, rng) -> Question:
    color = rng.choice(_colors(scene))
    count = sum(color in found for found in _inside(scene))
    removed = rng.randint(1, count)
    return Question(
        f"How many flowers are inside the {color} polygons?", count,
        f"How many flowers would be inside {color} polygons if we removed {removed} flowers in {color} polygons?",
        count - removed)


def inside_if_other_emptied(scene: dict, rng) -> Question:
    kept, emptied = rng.sample(_colors(scene), 2)
    inside = _inside(scene)
    return Question(
        f"How many flowers are inside the {kept} polygons?", sum(kept in found for found in inside),
        f"How many flowers would be inside {kept} polygons if all flowers in {emptied} polygons were removed?",
        sum(kept in found and emptied not in found for found in inside))


# --- Dot counting ------------------------------------------------------------------------------

def total_if_some_removed(scene: dict, rng) -> Question:
    total = sum(len(circle["dots"]) for circle in scene["circles"])
    removed = rng.randint(1, total) if total else 0
    return Question(
        "How many dots are there in all the circles together?", total,
        f"How many dots would there be in all the circles together if {removed} dots were removed from the circles?",
        total - removed)


def top_three(circles: list[dict]) -> int:
    """Dots in the three circles with the smallest y (nearest the top of the picture)."""
    return sum(len(circle["dots"]) for circle in sorted(circles, key=lambda c: c["y"])[:3])


def top_three_without_rightmost(scene: dict, rng) -> Question:
    circles = scene["circles"]
    kept = sorted(circles, key=lambda c: c["x"])[:-2]
    return Question(
        "How many dots are there in the top three circles together?", top_three(circles),
        "How many dots would there be in the top three circles together if the two rightmost circles and dots "
        "in them were removed from the circles?", top_three(kept))


def most_without_the_fullest(scene: dict, rng) -> Question:
    counts = sorted((len(circle["dots"]) for circle in scene["circles"]), reverse=True)
    return Question(
        "How many dots do a circle contain at most?", counts[0],
        "How many dots would a circle contain at most if one of the circles with most dots were removed?", counts[1])


ASKERS = {1: outside_if_all_were, 2: inside_if_some_removed, 3: inside_if_other_emptied,
          4: total_if_some_removed, 5: top_three_without_rightmost, 6: most_without_the_fullest}
