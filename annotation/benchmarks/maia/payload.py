"""MAIA item payloads: a `question` about a video with its 8 answers and, when released, 8 statement pairs
(SPEC §5)."""

from typing import Literal

from pydantic import model_validator
from pydantic_core import PydanticCustomError

from annotation.benchmarks.registry import Payload
from annotation.benchmarks.types import NonEmptyString, Text, strings

N_ANSWERS = 8


class MaiaQuestion(Payload):
    """A question of `category` (with its _A/_B suffix) about `video`; one true and one false statement per answer."""

    kind: Literal["question"]
    video: NonEmptyString
    category: NonEmptyString
    question: NonEmptyString
    answers: strings(N_ANSWERS)
    true_statements: strings() | None = None
    false_statements: strings() | None = None
    link: Text | None = None

    @model_validator(mode="after")
    def one_statement_per_answer(self):
        for name in ("true_statements", "false_statements"):
            value = getattr(self, name)
            if value is not None and len(value) != len(self.answers):
                raise PydanticCustomError("statements_per_answer",
                                          "field '{field}' must list one statement per answer", {"field": name})
        return self


class MaiaQuestionDraft(Payload):
    """A written question of a MAIA curation version still collecting its answers (never exported or
    frozen: see `annotation.benchmarks.maia.stages`)."""

    kind: Literal["question_draft"]
    video: NonEmptyString
    category: NonEmptyString
    question: NonEmptyString
    answers: strings() = []

    @model_validator(mode="after")
    def at_most_a_pool(self):
        if len(self.answers) > N_ANSWERS:
            raise PydanticCustomError("pool_size", "a question collects at most {n} answers", {"n": N_ANSWERS})
        return self


PAYLOADS = (MaiaQuestion, MaiaQuestionDraft)
