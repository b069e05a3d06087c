"""CVRR-ES item payloads: an open-ended `qa` about a video, in one of the evaluation dimensions (SPEC §4),
and, in curation, a `video` assigned to a dimension (its source, metadata and chosen caption)."""

from typing import Literal

from pydantic import Field

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


# where a video came from (seeds/003 §3.1; SPEC "What the papers also did")
VIDEO_SOURCES = ("ssv2", "cater", "charades", "activitynet", "hmdb51", "yfcc100m", "internet", "other")


class CvrrVideo(Payload):
    """A video under curation: its dimension, its source, the metadata that came with it, and the
    caption chosen for QA generation (once a curator merged or picked one)."""

    kind: Literal["video"]
    dimension: NonEmptyString
    video_id: NonEmptyString
    source: one_of(*VIDEO_SOURCES)
    metadata: dict | None = Field(None, description="what came with the video from its source, as it came")
    caption: Text | None = None


PAYLOADS = (CvrrQa, CvrrVideo)
