"""The shared pieces of the judges: parse statuses, `JudgeError`, one judge call (`Case`), the
reading of one answer (`Reading`) and the `JudgeKind` interface every judge kind implements."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from evaluation.models import Judgment
from generation.backends.base import ChatRequest, GenerationParams, Message, TextPart

OK, UNPARSED, FAILED = Judgment.ParseStatus.OK.value, Judgment.ParseStatus.UNPARSED.value, \
    Judgment.ParseStatus.FAILED.value
EMPTY = "empty"  # a verdict given without a call, because the response is empty
CHAT_BACKENDS = ("causal_lm", "openai", "transformers")
DEFAULT_BACKEND = "causal_lm"
DEFAULT_MAX_NEW_TOKENS = 256
# How a judge's answer is produced: `free` generation, as the authors' scripts do (the default), or
# `choices`: the judge model's most likely answer among those its kind's format allows
# (`JudgeKind.answer_choices`), each scored by its mean token log-probability after the prompt. It
# gives a readable verdict from a model that does not follow the format (a small or untuned one).
FREE, CHOICES = "free", "choices"
DECODINGS = (FREE, CHOICES)


class JudgeError(ValueError):
    """A judge call failed, or a judge was asked about something it does not judge."""


def _clean(text: str) -> str:
    """The text without markdown emphasis and code marks, stripped."""
    return re.sub(r"[*_`#]+", "", str(text or "")).strip()


def _one(found: list) -> tuple[Any, bool]:
    """(value, decided): decided when the list names exactly one distinct value."""
    distinct = list(dict.fromkeys(found))
    return (distinct[0], True) if len(distinct) == 1 else (None, False)



# --- One call --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Case:
    """One judge call: the messages for one (response, reference or reference set)."""

    reference_key: str
    user: str
    system: str = ""
    references: tuple = ()  # what the call compares with, where the kind records it: ({"source", "text"}, …)

    def chat(self, params: GenerationParams, request_id: str = "") -> ChatRequest:
        messages = [Message("system", (TextPart(self.system),))] if self.system else []
        messages.append(Message("user", (TextPart(self.user),)))
        return ChatRequest(messages=messages, params=GenerationParams(**params.as_dict()), request_id=request_id)


@dataclass(frozen=True)
class Reading:
    """What one judge answer says: status ok | unparsed, and the parsed fields (None when unread)."""

    status: str
    value: dict

    @property
    def ok(self) -> bool:
        return self.status == OK


# --- The four judges -------------------------------------------------------------------------------

class JudgeKind:
    """An LLM judge of open answers. Each kind registers itself (`evaluation.judge_registry.register`);
    the benchmarks it judges name it in their `judge_kinds`."""

    name = ""
    default_model = ""  # the judge the authors used, when `--judge-model` names none ("" : none is implied)
    default_params: dict = {}  # the authors' generation parameters; given ones override them
    answer_choices: tuple[str, ...] = ()  # every complete answer the format allows (`choices` decoding)
    # the labels a person picks from when they give their own verdict on an answer (pages); () : none
    human_labels: tuple[str, ...] = ()

    def applies(self, request) -> bool:
        """Whether this judge judges the request's responses at all."""
        raise NotImplementedError

    def selects(self, request, text: str) -> bool:
        """Whether this particular response is judged (all of them, unless the paper says otherwise)."""
        return True

    def cases(self, request, text: str) -> list[Case]:
        raise NotImplementedError

    def parse(self, raw: str) -> Reading:
        raise NotImplementedError

    def combine(self, readings: list[tuple[Case, Reading]]) -> dict:
        """The scorer's verdict from the readings of one response's cases (all of them answered)."""
        (_, reading), = readings
        return {**reading.value, "status": reading.status}

    def empty_verdict(self) -> dict:
        """The verdict of an empty response, given without a call."""
        raise NotImplementedError

    def text_request(self, references: list[str], question: str = ""):
        """The request `judge_texts` judges a plain-text response on, made from the ground truth (`references`)
        and the question, for a kind that judges its own kind of request; None (the default): `judge_texts`
        makes it."""
        return None

    def label(self, verdict: dict | None):
        """A verdict as a label comparable with a human's (None when it has none)."""
        raise NotImplementedError

    def human_label(self, value):
        """A human verdict in the same label space; ValueError for a value this judge has no label for."""
        raise NotImplementedError

    def correct(self, verdict: dict | None) -> bool | None:
        """Whether the verdict says the answer is right (None: it says neither, or it has no such reading)."""
        return None
