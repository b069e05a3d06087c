"""C-VQA item payloads: a question about a `real` or a `synthetic` image and its counterfactual (SPEC §2)."""

from typing import Literal

from annotation.benchmarks.registry import Payload
from annotation.benchmarks.types import NonEmptyString, Text, one_of

REAL_TYPES = ("direct", "indirect", "boolean")
SYNTHETIC_TYPES = tuple(f"abs_counting_{n}" for n in range(1, 7))


class _Question(Payload):
    img_path: Text | None = None
    query: NonEmptyString
    answer: NonEmptyString
    new_query: NonEmptyString
    new_answer: NonEmptyString


class CvqaReal(_Question):
    """A question about a real image (direct, indirect or boolean)."""

    kind: Literal["real"]
    type: one_of(*REAL_TYPES)


class CvqaSynthetic(_Question):
    """A counting question about a synthetic image; answers are option letters A–D."""

    kind: Literal["synthetic"]
    type: one_of(*SYNTHETIC_TYPES)


PAYLOADS = (CvqaReal, CvqaSynthetic)
