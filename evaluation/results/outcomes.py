"""How the first response of a request was scored (`Outcome`), and the error for a path that names no metric."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from evaluation import answer_parsing, scoring

# How the first response of a request was scored (`Outcome.status`).
CORRECT, WRONG, UNPARSED, EMPTY, MISSING, ANSWERED = "correct", "wrong", "unparsed", "empty", "missing", "answered"
OUTCOMES = (CORRECT, WRONG, UNPARSED, EMPTY, MISSING, ANSWERED)
DISCRETE_TYPES = ("letter", "yes_no", "number", "choice_12")
# The outcomes that are a plain right or wrong (an unparsed or empty answer is wrong); the others say
# neither: `answered` (ratings, open answers no judge verdict calls right or wrong) and `missing`.
RIGHT_OR_WRONG = {CORRECT: True, WRONG: False, UNPARSED: False, EMPTY: False}


class UnknownMetric(LookupError):
    """The path names no metric of the run."""


@dataclass(frozen=True)
class Outcome:
    """The first response of a request as scored: status (see OUTCOMES) and the parsed value."""

    status: str
    value: Any = None
    verdict: dict | None = None


def verdict_outcome(verdict: dict | None) -> str | None:
    """correct / wrong from a judge's verdict that says so (MAIA `correct`, CVRR-ES `pred`); else None."""
    if not isinstance(verdict, dict):
        return None
    if isinstance(verdict.get("correct"), bool):
        return CORRECT if verdict["correct"] else WRONG
    pred = str(verdict.get("pred") or "").strip().lower()
    return {"correct": CORRECT, "incorrect": WRONG}.get(pred)


def right_or_wrong(status: str | None) -> bool | None:
    """True or False for an outcome that is a plain right or wrong, None for any other (or none): the
    `correct` of the kits' files and of the predictions export."""
    return RIGHT_OR_WRONG.get(status)


def outcome(request, responses) -> Outcome:
    """How the request's first response was scored: discrete answers right or wrong as the scorer reads
    them; free text as judged when a verdict says right or wrong, else answered."""
    response = scoring.first_response(responses)
    if response is None:
        return Outcome(MISSING)
    if request.answer_type in DISCRETE_TYPES:
        found = scoring.answer(request, responses)
        unread = {answer_parsing.UNPARSED: UNPARSED, answer_parsing.EMPTY: EMPTY}
        status = CORRECT if found.correct else unread.get(found.status, WRONG)
        return Outcome(status, found.value)
    if request.answer_type != "free":
        parsed = answer_parsing.parse_for_request(request, response.text)
        status = ANSWERED if parsed.ok else {answer_parsing.EMPTY: EMPTY}.get(parsed.status, UNPARSED)
        return Outcome(status, parsed.value)
    if not (response.text or "").strip():
        return Outcome(EMPTY)
    return Outcome(verdict_outcome(response.judgment) or ANSWERED, None, response.judgment)
