"""NL-EYE item payloads: a `triplet` of scene descriptions and the more plausible hypothesis (SPEC §3)."""

from typing import Literal

from annotation.benchmarks.registry import Payload
from annotation.benchmarks.types import NonEmptyString, Text, one_of


class NleyeTriplet(Payload):
    """A premise, two hypotheses and `label`, the more plausible one (1 or 2)."""

    kind: Literal["triplet"]
    sample_id: Text | None = None
    premise: NonEmptyString
    hypothesis1: NonEmptyString
    hypothesis2: NonEmptyString
    label: one_of(1, 2)
    human_explanations: list[NonEmptyString] | None = None  # validated human explanations (judge references)


PAYLOADS = (NleyeTriplet,)
