"""Named answer parsers: `authors` (the default) reproduces each benchmark's released scoring rules,
`strict` is the platform's stricter reading (`evaluation.parsing`). Results record which one was used.

`reader(benchmark_slug, name)` gives a function `read(request, text) -> Parsed`; `parse(slug, request,
text, name)` reads one text. Where the authors released no rule for a benchmark or an answer type,
`authors` reads it as `strict` does (the name still records the choice):

- C-VQA (authors' `format_response.py` / `calc_acc.py`, SPEC "Fidelity rules"): numbers and yes/no
  follow `cvqa_number` and `cvqa_yes_no` below; the synthetic letters have no released rule and are
  read strictly.
- BlackSwan MCQ and Y/N, NL-EYE, CVRR-ES and MAIA: no released answer-parsing rule; read strictly.
  The strict letter parser reads MAIA's Italian answers ("La B", "È vera la A", "Vera: A",
  "Risposta: B", "L'affermazione corretta è la A").
- Free-text answers are kept as they are under both names.

`differs(slug, request, text)` gives both readings when the two parsers read a text differently.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from evaluation import parsing
from evaluation.parsing import EMPTY, OK, UNPARSED, Parsed

AUTHORS, STRICT = "authors", "strict"
NAMES = (AUTHORS, STRICT)
DEFAULT = AUTHORS

Reader = Callable[[Any, str | None], Parsed]

_CVQA_NUMBER_WORDS = {"no": 0, "zero": 0, "none": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5,
                      "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10}
_CVQA_NO = ("no", "false", "not")
_CVQA_YES = ("yes", "true", "be", "is", "are")


def _tokens(text: str) -> list[str]:
    """Lower-cased word tokens (`\\b\\w+\\b`), with commas kept as separators."""
    return re.findall(r"\b\w+\b|,", text.lower())


def cvqa_number(text) -> Parsed:
    """C-VQA's released numerical rule: if the first token is "if", read from the first comma on
    (no comma, or nothing after it: unparsed); otherwise, if "if" occurs, read only what comes before
    it; the answer is the first token that is all digits or one of no/zero/none (0), one…ten (1–10)."""
    if not str(text or "").strip():
        return Parsed(None, EMPTY)
    tokens = _tokens(str(text))
    if tokens[:1] == ["if"]:
        tokens = tokens[tokens.index(",") + 1:] if "," in tokens else []
    elif "if" in tokens:
        tokens = tokens[:tokens.index("if")]
    for token in tokens:
        if re.fullmatch(r"[0-9]+", token):
            return Parsed(int(token), OK)
        if token in _CVQA_NUMBER_WORDS:
            return Parsed(_CVQA_NUMBER_WORDS[token], OK)
    return Parsed(None, UNPARSED)


def cvqa_yes_no(text) -> Parsed:
    """C-VQA's released boolean rule: "no", "false" or "not" anywhere → no; else "yes", "true", "be",
    "is" or "are" anywhere → yes; else unparsed."""
    if not str(text or "").strip():
        return Parsed(None, EMPTY)
    words = set(_tokens(str(text)))
    if words.intersection(_CVQA_NO):
        return Parsed("no", OK)
    if words.intersection(_CVQA_YES):
        return Parsed("yes", OK)
    return Parsed(None, UNPARSED)


def strict(request, text) -> Parsed:
    """The platform's strict reading of the request's answer type (`evaluation.parsing`)."""
    return parsing.parse_for_request(request, text)


def _cvqa_authors(request, text) -> Parsed:
    """C-VQA's released rules for numbers and yes/no; synthetic letters (no released rule) read strictly."""
    if request.answer_type == "number":
        return cvqa_number(text)
    if request.answer_type == "yes_no":
        return cvqa_yes_no(text)
    return strict(request, text)


# benchmark slug → the authors' reader, where it differs from the strict one
_AUTHORS: dict[str, Reader] = {"cvqa": _cvqa_authors}


def check(name: str) -> str:
    """The parser name itself; ValueError naming the known ones for anything else."""
    if name not in NAMES:
        raise ValueError(f"Unknown parser {name!r}; known: {', '.join(NAMES)}.")
    return name


def reader(benchmark_slug: str, name: str = DEFAULT) -> Reader:
    """The function that reads a request's answer text under parser `name` for that benchmark."""
    if check(name) == STRICT:
        return strict
    return _AUTHORS.get(benchmark_slug, strict)


def parse(benchmark_slug: str, request, text, name: str = DEFAULT) -> Parsed:
    return reader(benchmark_slug, name)(request, text)


def reading(parsed: Parsed) -> dict:
    """How a reading is stored (`Prediction.parses[name]`)."""
    return {"value": parsed.value, "status": parsed.status}


def differs(benchmark_slug: str, request, text) -> tuple[Parsed, Parsed] | None:
    """(authors' reading, strict reading) when the two differ, else None."""
    first, second = parse(benchmark_slug, request, text, AUTHORS), parse(benchmark_slug, request, text, STRICT)
    return None if first == second else (first, second)

