"""NL-EYE item payloads (SPEC §3): a `triplet` of scene descriptions and the more plausible hypothesis,
and a `brief`, a writing slot of the scene-writing study that suggests what to aim for (briefs live
in their own unfrozen version and are never frozen: they have no scenes to evaluate)."""

from typing import Literal

from annotation.benchmarks.nleye.vocabulary import CATEGORY_VALUES, DIRECTION_VALUES, DOMAIN_VALUES, DURATION_VALUES
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


class NleyeBrief(Payload):
    """What an author of a scene triplet is asked to aim for (suggestions, for variety)."""

    kind: Literal["brief"]
    brief: NonEmptyString
    suggested_category: one_of(*CATEGORY_VALUES)
    suggested_direction: one_of(*DIRECTION_VALUES)
    suggested_duration: one_of(*DURATION_VALUES)
    suggested_domain: one_of(*DOMAIN_VALUES)


PAYLOADS = (NleyeTriplet, NleyeBrief)
