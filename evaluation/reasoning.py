"""How often chain-of-thought responses hold any reasoning (BlackSwanSuite §7.2: "on LLaVA-Video, only 14/300
answers actually produced a reason at all").

A request was asked with chain of thought when its prompt ends with the `cot` cue (`prompting.COT_SUFFIX`).
For those with a closed answer (an option letter, yes/no, a number, 1/2, a score: what a parser reads), each
response is checked by `has_reasoning`:

- the text before the answer: everything before the last place the parsed answer is stated (the option
  letter as a capital standing alone, the yes/no word, the number); the whole text when it cannot be parsed;
- minus the words of the shown options (a model that restates "B. The man falls" gives no reason) and the
  words that only announce an answer (`ANSWER_WORDS`: "the answer is", "option", "final", …);
- holds reasoning when at least `MIN_WORDS` words remain.

`reasoning_rate` reports `{"responses", "with_reasoning", "rate", "min_words", "by_variant"}` over every
response (all samples), or None when no request was asked with chain of thought.
"""

from __future__ import annotations

import re

from evaluation import prompting

MIN_WORDS = 5
CLOSED_TYPES = ("letter", "yes_no", "number", "choice_12", "score_1_10")
ANSWER_WORDS = frozenset({
    "a", "an", "the", "answer", "answers", "is", "are", "final", "option", "options", "choice", "correct",
    "so", "therefore", "thus", "hence", "i", "my", "it", "would", "be", "choose", "select", "selected",
    "pick", "picked", "of", "to", "yes", "no"
})
_WORD = re.compile(r"[A-Za-z0-9']+")


def is_cot(request) -> bool:
    return str(request.prompt or "").rstrip().endswith(prompting.COT_SUFFIX)


def _answer_at(text: str, value, answer_type: str) -> int | None:
    """Where the last statement of the parsed answer starts in `text`, or None."""
    if value is None:
        return None
    value = str(value)
    if answer_type == "letter":
        pattern = rf"(?<![A-Za-z]){re.escape(value.upper())}(?![A-Za-z])"
        flags = 0
    else:
        pattern = rf"(?<![A-Za-z0-9]){re.escape(value)}(?![A-Za-z0-9])"
        flags = re.IGNORECASE
    found = list(re.finditer(pattern, text, flags))
    return found[-1].start() if found else None


def reasoning_words(text: str, request, parsed=None) -> list[str]:
    """The words before the answer that neither restate an option nor only announce the answer."""
    text = str(text or "")
    value = parsed.value if parsed is not None and parsed.ok else None
    end = _answer_at(text, value, request.answer_type)
    before = text if end is None else text[:end]
    option_words = {word.lower() for option in (request.options or {}).values() for word in _WORD.findall(option)}
    return [word for word in _WORD.findall(before)
            if word.lower() not in ANSWER_WORDS and word.lower() not in option_words]


def has_reasoning(text: str, request, parsed=None) -> bool:
    return len(reasoning_words(text, request, parsed)) >= MIN_WORDS


def reasoning_rate(requests, responses: dict) -> dict | None:
    """The share of chain-of-thought responses (closed answers) that hold reasoning, overall and per variant."""
    asked = [request for request in requests if is_cot(request) and request.answer_type in CLOSED_TYPES]
    if not asked:
        return None
    counts: dict[str, list[int]] = {}
    for request in asked:
        for response in responses.get(request.request_id) or []:
            if not response.text or not response.text.strip():
                continue
            tally = counts.setdefault(request.variant, [0, 0])
            tally[0] += 1
            tally[1] += has_reasoning(response.text, request, response.parsed)
    total, reasoned = sum(n for n, _ in counts.values()), sum(k for _, k in counts.values())
    return {"responses": total, "with_reasoning": reasoned, "rate": reasoned / total if total else None,
            "min_words": MIN_WORDS,
            "by_variant": {variant: {"responses": n, "with_reasoning": k, "rate": k / n if n else None}
                           for variant, (n, k) in sorted(counts.items())}}
