"""C-VQA item payloads: a question about a `real` or a `synthetic` image and its counterfactual (SPEC §2),
and a `source` question (an image's original VQA question with its answers, from which counterfactual
questions are written; never frozen: `sources.freeze_check`)."""

from typing import Literal

from annotation.benchmarks.registry import Payload
from annotation.benchmarks.types import NonEmptyString, Text, one_of, strings

REAL_TYPES = ("direct", "indirect", "boolean")
SYNTHETIC_TYPES = tuple(f"abs_counting_{n}" for n in range(1, 7))
SOURCE_TYPES = ("numerical", "boolean")


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


class CvqaSource(Payload):
    """An original VQA question about a real image: its answers as given, the majority `answer` and its type."""

    kind: Literal["source"]
    question: NonEmptyString
    answers: strings()
    answer: NonEmptyString
    type: one_of(*SOURCE_TYPES)
    question_id: Text | None = None
    image_id: Text | None = None


PAYLOADS = (CvqaReal, CvqaSynthetic, CvqaSource)
