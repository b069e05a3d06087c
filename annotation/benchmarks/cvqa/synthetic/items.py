"""The items of a synthetic set: for each template, `per_template` scenes with their original and
counterfactual questions, options and answer letters, all drawn from the seed.

Item `index` (from 0) of a template draws from its own generator, seeded with (seed, template, index),
so a larger set begins with the items of a smaller one made with the same seed. Pictures are numbered
across the set in template order, `abs_counting_000001.png` upward, as in the release.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from annotation.benchmarks.cvqa.synthetic import options, scenes, templates

MAX_DRAWS = 1000  # scenes drawn for one item before giving up (a template no scene suits is a bug)


@dataclass(frozen=True)
class SyntheticItem:
    scene: dict  # the scenes.jsonl object: img_path, type, width, height, polygons, flowers, circles
    query: str
    answer: str
    new_query: str
    new_answer: str

    @property
    def row(self) -> dict:
        """The release CSV row."""
        return {"img_path": self.scene["img_path"], "query": self.query, "answer": self.answer,
                "new query": self.new_query, "new answer": self.new_answer, "type": self.scene["type"]}


def generate(per_template: int, seed: int):
    """Every item of the set, template 1 first."""
    number = 0
    for template in templates.TEMPLATES:
        for index in range(per_template):
            number += 1
            yield make_item(template, index, seed, f"abs_counting_{number:06d}.png")


def make_item(template: int, index: int, seed: int, img_path: str) -> SyntheticItem:
    rng = random.Random(f"cvqa-synthetic:{seed}:{template}:{index}")
    for _ in range(MAX_DRAWS):
        drawn = templates.draw_scene(template, rng)
        question = templates.ask(template, drawn, rng)
        if question is not None:
            break
    else:
        raise RuntimeError(f"No scene suited template {template} in {MAX_DRAWS} draws.")
    scene = {"img_path": img_path, "type": templates.template_type(template), "width": scenes.WIDTH,
             "height": scenes.HEIGHT, **drawn}
    letter = options.correct_letter(seed, template, "original", index)
    new_letter = options.correct_letter(seed, template, "counterfactual", index)
    offered = options.choices(rng, question.answer, letter)
    new_offered = options.choices(rng, question.new_answer, new_letter, tempting=question.answer)
    return SyntheticItem(scene=scene, query=options.with_options(question.query, offered), answer=letter,
                         new_query=options.with_options(question.new_query, new_offered), new_answer=new_letter)
