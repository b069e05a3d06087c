"""CVRR-ES item payloads: an open-ended `qa` about a video, in one of the evaluation dimensions (SPEC §4)."""

from typing import Literal

from annotation.benchmarks.registry import Payload
from annotation.benchmarks.types import NonEmptyString, Text, one_of


class CvrrQa(Payload):
    """A question and its reference answer about video `video_id` of `dimension` (the release's folder)."""

    kind: Literal["qa"]
    dimension: NonEmptyString
    video_id: NonEmptyString
    question: NonEmptyString
    answer: NonEmptyString
    caption: Text | None = None
    question_kind: one_of("reasoning", "robustness") | None = None


PAYLOADS = (CvrrQa,)
