"""Named answer parsers: `authors` (the default) reproduces each benchmark's released scoring rules,
`strict` is the platform's stricter reading (`evaluation.answer_parsing`). Results record which one was used.

`reader(benchmark_slug, name)` gives a function `read(request, text) -> Parsed`; `parse(slug, request,
text, name)` reads one text. A benchmark whose authors released answer-parsing rules declares them as
its `authors_parser` (in its own module, `evaluation.benchmarks.<slug>`); where the authors released
no rule for a benchmark or an answer type, `authors` reads it as `strict` does (the name still records
the choice). The strict letter parser also reads Italian answers ("La B", "È vera la A", "Vera: A",
"Risposta: B", "L'affermazione corretta è la A"). Free-text answers are kept as they are under both
names.

`differs(slug, request, text)` gives both readings when the two parsers read a text differently.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from evaluation import answer_parsing, benchmarks
from evaluation.answer_parsing import Parsed

AUTHORS, STRICT = "authors", "strict"
NAMES = (AUTHORS, STRICT)
DEFAULT = AUTHORS

Reader = Callable[[Any, str | None], Parsed]

def strict(request, text) -> Parsed:
    """The platform's strict reading of the request's answer type (`evaluation.answer_parsing`)."""
    return answer_parsing.parse_for_request(request, text)


def check(name: str) -> str:
    """The parser name itself; ValueError naming the known ones for anything else."""
    if name not in NAMES:
        raise ValueError(f"Unknown parser {name!r}; known: {', '.join(NAMES)}.")
    return name


def reader(benchmark_slug: str, name: str = DEFAULT) -> Reader:
    """The function that reads a request's answer text under parser `name` for that benchmark."""
    if check(name) == STRICT:
        return strict
    benchmark = benchmarks.find(benchmark_slug)
    return getattr(benchmark, "authors_parser", None) or strict


def parse(benchmark_slug: str, request, text, name: str = DEFAULT) -> Parsed:
    return reader(benchmark_slug, name)(request, text)


def reading(parsed: Parsed) -> dict:
    """How a reading is stored (`Prediction.parses[name]`)."""
    return {"value": parsed.value, "status": parsed.status}


def differs(benchmark_slug: str, request, text) -> tuple[Parsed, Parsed] | None:
    """(authors' reading, strict reading) when the two differ, else None."""
    first, second = parse(benchmark_slug, request, text, AUTHORS), parse(benchmark_slug, request, text, STRICT)
    return None if first == second else (first, second)

