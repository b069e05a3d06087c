"""Multiple-choice options A–D as the release writes them inside the query text
("…? Select the correct answer:A:16  B:17  C:12  D:13"), with balanced correct letters.

The correct letter comes from a deck: each run of four items of one template and question form uses
the four letters once, in an order drawn from (seed, template, form, run), so every letter is correct
for a quarter of the items, give or take one per template and form. The three distractors are
distinct counts near the answer (within `SPREAD`, never negative); a counterfactual question also
offers the original answer when it differs, the count a model gets by ignoring the presupposition.
"""

from __future__ import annotations

import random

LETTERS = ("A", "B", "C", "D")
SELECT = "Select the correct answer:"
SPREAD = 6


def correct_letter(seed: int, template: int, form: str, index: int) -> str:
    """The correct letter of the `index`-th item (from 0) of a template's original or counterfactual form."""
    order = list(LETTERS)
    random.Random(f"cvqa-synthetic-letters:{seed}:{template}:{form}:{index // len(LETTERS)}").shuffle(order)
    return order[index % len(LETTERS)]


def choices(rng, answer: int, letter: str, tempting: int | None = None) -> dict[str, int]:
    """{letter: count}: `answer` under `letter`, three distinct distractors under the others."""
    distractors = [tempting] if tempting is not None and tempting != answer and tempting >= 0 else []
    near = [value for value in range(max(0, answer - SPREAD), answer + SPREAD + 1)
            if value != answer and value not in distractors]
    distractors += rng.sample(near, len(LETTERS) - 1 - len(distractors))
    rng.shuffle(distractors)
    distractors.insert(LETTERS.index(letter), answer)
    return dict(zip(LETTERS, distractors, strict=True))


def with_options(question: str, options: dict[str, int]) -> str:
    return f"{question} {SELECT}" + "  ".join(f"{letter}:{value}" for letter, value in options.items())
