"""Answer parsers: a model's raw text → (value, status), never a guess.

Every parser returns `Parsed(value, status)` with status `ok` (value found), `empty` (no text) or
`unparsed` (text that does not name exactly one answer: nothing recognisable, or two different
answers). An unparsed answer is scored as wrong and counted; it is never replaced by a default.

Each parser reads the text in tiers, from the most explicit form to the least, and stops at the
first tier that finds anything: if that tier finds two different answers the text is ambiguous
and stays unparsed, even when a later tier would have found one.

- `parse_letter` (A–C BlackSwan MCQ, A–D C-VQA synthetic, A/B MAIA VSV): the text alone is a
  letter ("B", "(B)", "b."); an answer phrase ("Answer: C", "the answer is B", "La risposta è A",
  "Risposta: B"); a phrase naming an option ("option B", "L'affermazione corretta è la A"); a
  phrase calling a letter true ("Vera: A", "È vera la A", "La corretta è la B"); a leading letter
  with a delimiter ("B. He slips…"); a letter after the Italian article ("La B", "Direi la A"),
  unless it is called false ("La A è falsa, la B è vera" reads B); letters in parentheses; the text
  of exactly one option. "A or B" names two letters: unparsed.
- `parse_yes_no` (also true/false): an answer phrase ("the answer is no"), else the first word and
  every clause that is only yes/no ("Yes.", "Based on the frames, yes."), which must agree.
- `parse_number` (C-VQA counting): digits and the number words zero…ten; "no"/"none" mean 0 when
  nothing else is a number. Given the question's presupposition (`presupposition_of`: its
  "if …" part), the answer's repetition of it is set aside first, as is any other "if …" clause
  up to its punctuation, so that "If two cups were added, there would be 5" and "There would be 5
  if two cups were added" read 5 (C-VQA §4, SPEC §2).
- `parse_choice_12` (NL-EYE triplets): which hypothesis, 1 or 2.
- `parse_score` (NL-EYE pairs 1–10, judge scales): "7", "Score: 7", "7/10", "7 out of 10", a
  leading number; values outside the scale are unparsed.
- `parse_free`: open answers, kept as they are (stripped).

`parse_for_request(request, text)` picks the parser from the request's `answer_type`.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

OK, UNPARSED, EMPTY = "ok", "unparsed", "empty"
STATUSES = (OK, UNPARSED, EMPTY)

NUMBER_WORDS = {word: value for value, word in enumerate(
    ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"))}
YES_NO_WORDS = {"yes": "yes", "true": "yes", "no": "no", "false": "no"}
ORDINALS_12 = {"first": 1, "second": 2}


class Parsed(NamedTuple):
    value: Any
    status: str

    @property
    def ok(self) -> bool:
        return self.status == OK


def _clean(text) -> str:
    """The text without markdown emphasis and code marks, stripped; '' for None."""
    return re.sub(r"[*_`#]+", "", str(text or "")).strip()


def _decide(found: list) -> Parsed | None:
    """None when a tier found nothing; ok when it found one distinct value; unparsed for several."""
    if not found:
        return None
    distinct = list(dict.fromkeys(found))
    return Parsed(distinct[0], OK) if len(distinct) == 1 else Parsed(None, UNPARSED)


def _first_decided(tiers) -> Parsed:
    for tier in tiers:
        decided = _decide(tier())
        if decided is not None:
            return decided
    return Parsed(None, UNPARSED)


def _normal(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.lower()))


# --- Letters ----------------------------------------------------------------------------------

_ANSWER_WORDS = r"answer|risposta"
_OPTION_WORDS = r"option|choice|opzione|scelta|lettera|letter|affermazione"
_TRUE_WORDS = r"vera|corretta|giusta|esatta"
_FALSE_AFTER = r"\s*(?:(?:è|e'|is)\s+)?(?:falsa|sbagliata|errata|false|wrong|incorrect)\b"
_LINK_WORDS = (r"is|would\s+be|should\s+be|must\s+be|will\s+be|correct|right|best|final|true|vera|corretta|giusta|"
               r"è|e'|sarebbe|la|il|option|opzione|letter|lettera")


def _letter_class(letters: str) -> str:
    return "[" + re.escape(letters) + "]"


def _marked_letters(text: str, words: str, letters: str) -> list:
    """Letters named right after a marker phrase; a second letter joined by or/and makes it ambiguous."""
    letter = _letter_class(letters)
    pattern = re.compile(
        rf"(?i:\b(?:{words})\b)(?:[^\w\n]{{0,4}}(?i:{_LINK_WORDS})\b)*[^\w\n]{{0,4}}\(?({letter})\)?(?![\w])"
        rf"(\s*(?i:or|and|o|e|/|,)\s*\(?{letter}\)?(?![\w]))?")
    found = []
    for match in pattern.finditer(text):
        found.append(match.group(1))
        if match.group(2):
            found.append(re.search(letter, match.group(2)).group(0))
    return found


def parse_letter(text, letters: str = "ABCD", options: dict[str, str] | None = None) -> Parsed:
    """One of `letters` (upper case), from the forms listed in the module docstring."""
    cleaned = _clean(text)
    if not cleaned:
        return Parsed(None, EMPTY)
    letters = "".join(letters).upper()
    letter = _letter_class(letters)

    def alone():
        match = re.fullmatch(rf"\W*\(?({letter}|{letter.lower()})\)?\W*", cleaned)
        return [match.group(1).upper()] if match else []

    def leading():
        match = re.match(rf"\W*\(?({letter})(?:\)|\]|[.:]|\s+-|\s*$)", cleaned)
        return [match.group(1)] if match else []

    def parenthesised():
        return re.findall(rf"[(\[]({letter})[)\]]", cleaned)

    def italian_article():
        pattern = rf"(?i:\b(?:la|l'|l’)\s*)\(?({letter})\)?(?![\w'’])(?!{_FALSE_AFTER})"
        return re.findall(pattern, cleaned)

    def option_text():
        if not options:
            return []
        said = _normal(cleaned)
        texts = {key: _normal(value) for key, value in options.items() if _normal(value)}
        exact = [key for key, value in texts.items() if value == said]
        return exact or [key for key, value in texts.items() if re.search(rf"\b{re.escape(value)}\b", said)]

    return _first_decided((alone, lambda: _marked_letters(cleaned, _ANSWER_WORDS, letters),
                           lambda: _marked_letters(cleaned, _OPTION_WORDS, letters),
                           lambda: _marked_letters(cleaned, _TRUE_WORDS, letters), leading, italian_article,
                           parenthesised, option_text))


# --- Yes / no ---------------------------------------------------------------------------------

_YES_NO = r"(yes|no|true|false)"


def parse_yes_no(text) -> Parsed:
    """'yes' or 'no' (true/false read as yes/no)."""
    cleaned = _clean(text)
    if not cleaned:
        return Parsed(None, EMPTY)

    def first_word_and_lone_clauses():
        match = re.match(rf"\W*{_YES_NO}\b(?!\s*(?:or|and|/)\s*{_YES_NO}\b)", cleaned, re.I)
        clauses = [c.strip().lower() for c in re.split(r"[.!?;:,\n]+", cleaned)]
        return [YES_NO_WORDS[w] for w in ([match.group(1).lower()] if match else []) + clauses if w in YES_NO_WORDS]

    def answer_phrase():
        pattern = rf"\b(?:answer|risposta)\b(?:\W{{0,4}}(?:is|would\s+be|è)\b)?\W{{0,4}}{_YES_NO}\b"
        return [YES_NO_WORDS[word.lower()] for word in re.findall(pattern, cleaned, re.I)]

    return _first_decided((answer_phrase, first_word_and_lone_clauses))


# --- Numbers ----------------------------------------------------------------------------------

_NUMBER = r"(\d+(?:\.\d+)?|" + "|".join(NUMBER_WORDS) + r")"
_IF_CLAUSE = re.compile(r"\bif\b[^,.;:!?\n]*[,.;:!?]?", re.I)


def _number_value(token: str):
    token = token.lower()
    if token in NUMBER_WORDS:
        return NUMBER_WORDS[token]
    return float(token) if "." in token else int(token)


def _numbers(text: str) -> list:
    return [_number_value(token) for token in re.findall(rf"(?<![\w.]){_NUMBER}(?![\w]|\.\d)", text, re.I)]


def parse_number(text, *, presupposition: str = "") -> Parsed:
    """A count (int, or float for a decimal), from the forms listed in the module docstring."""
    cleaned = _clean(text)
    if not cleaned:
        return Parsed(None, EMPTY)
    if presupposition:
        words = re.findall(r"\w+", presupposition)
        cleaned = re.sub(r"\W+".join(map(re.escape, words)), " ", cleaned, flags=re.I) if words else cleaned
        cleaned = _IF_CLAUSE.sub(" ", cleaned)

    def answer_phrase():
        clauses = re.findall(r"\b(?:answer|risposta)\b(?:\W{0,4}(?:is|would\s+be|è)\b)?((?:[^.!?\n]|\.\d)*)",
                             cleaned, re.I)
        return [value for clause in clauses for value in _numbers(clause)]

    def anywhere():
        return _numbers(cleaned)

    def none_word():
        return [0] if re.search(r"\b(?:no|none)\b", cleaned, re.I) else []

    return _first_decided((answer_phrase, anywhere, none_word))


def presupposition_of(question: str) -> str:
    """The "if …" part of a counterfactual question ('' when it has none), which an answer may repeat."""
    match = re.search(r"\bif\b[^?]*", question or "", re.I)
    return match.group(0).strip(" ,.;:") if match else ""


# --- NL-EYE: hypothesis 1 or 2 ------------------------------------------------------------------

_THING = r"(?:hypothesis|hypotheses|image|option|picture|scenario)"
_MORE = r"(?:more|most)\s+(?:likely|plausible|probable)"
_NOT_BOTH = r"(?!\s*(?:or|and|-|–|/)\s*\(?[12]\b)"  # "1 or 2" names both


def parse_choice_12(text) -> Parsed:
    """1 or 2: which hypothesis the model calls the more plausible."""
    cleaned = _clean(text)
    if not cleaned:
        return Parsed(None, EMPTY)

    def alone():
        match = re.fullmatch(rf"\W*(?:{_THING}\s*(?:image\s*)?)?\(?([12])\)?\W*", cleaned, re.I)
        return [int(match.group(1))] if match else []

    def stated():
        named = rf"(?<!and\s)(?<!or\s)(?:{_THING}\s*(?:image\s*)?#?\s*)?\(?([12])\)?{_NOT_BOTH}"
        ordinal = rf"(?:the\s+)?(first|second)(?:\s+{_THING}|\s+one)?"
        patterns = (
            rf"\b{named}\s+(?:is|seems|appears|would\s+be)\s+(?:the\s+)?{_MORE}",
            rf"\b{ordinal}\s+(?:is|seems|appears|would\s+be)\s+(?:the\s+)?{_MORE}",
            rf"{_MORE}(?:\s+(?:{_THING}|one)){{0,2}}\s*(?:is|:|would\s+be|=)\s*{named}(?!\w)",
            rf"{_MORE}(?:\s+(?:{_THING}|one)){{0,2}}\s*(?:is|:|would\s+be|=)\s*{ordinal}",
            rf"\banswer\b(?:\W{{0,4}}is\b)?\W{{0,4}}{named}(?!\w)",
        )
        found = []
        for pattern in patterns:
            for match in re.finditer(pattern, cleaned, re.I):
                token = match.group(1).lower()
                found.append(ORDINALS_12[token] if token in ORDINALS_12 else int(token))
        return found

    def leading():
        match = re.match(rf"\W*\(?([12])\)?{_NOT_BOTH}(?:[.:),]|\s*[-–]|\s*$)", cleaned)
        return [int(match.group(1))] if match else []

    def mentioned():
        return [int(n) for n in re.findall(rf"\b{_THING}\s*(?:image\s*)?#?\s*([12])\b", cleaned, re.I)]

    return _first_decided((alone, stated, leading, mentioned))


# --- Scores on a scale ------------------------------------------------------------------------

_SCORE = r"(\d+(?:\.\d+)?)"
_NOT_A_RANGE = r"(?!\s*(?:-|–|to|and)\s*\d)"


def _score_value(token: str):
    return float(token) if "." in token else int(token)


def parse_score(text, low: int = 1, high: int = 10) -> Parsed:
    """A score in [low, high] ("7", "Score: 7", "7/10", "7 out of 10", a leading "7."); int unless decimal."""
    cleaned = _clean(text)
    if not cleaned:
        return Parsed(None, EMPTY)

    def alone():
        match = re.fullmatch(rf"\W*{_SCORE}\W*", cleaned)
        return [_score_value(match.group(1))] if match else []

    def out_of():
        pattern = rf"(?<![\w.]){_SCORE}\s*(?:/|out\s+of|su)\s*{high}\b"
        return [_score_value(v) for v in re.findall(pattern, cleaned, re.I)]

    def marked():
        pattern = (rf"\b(?:score|rating|rank(?:ing)?|plausibility|punteggio|voto)\b[^\d\n]{{0,30}}?"
                   rf"(?<![\w.]){_SCORE}(?![\w]|\.\d){_NOT_A_RANGE}")
        return [_score_value(v) for v in re.findall(pattern, cleaned, re.I)]

    def leading():
        match = re.match(rf"\W*{_SCORE}(?![\w]|\.\d){_NOT_A_RANGE}", cleaned)
        return [_score_value(match.group(1))] if match else []

    parsed = _first_decided((alone, out_of, marked, leading))
    if parsed.ok and not low <= parsed.value <= high:
        return Parsed(None, UNPARSED)
    return parsed


def parse_free(text) -> Parsed:
    stripped = str(text or "").strip()
    return Parsed(stripped, OK) if stripped else Parsed(None, EMPTY)


# --- By request -------------------------------------------------------------------------------

def parse_for_request(request, text) -> Parsed:
    """The parser a request's `answer_type` calls for (letter | yes_no | number | choice_12 | score_1_10 | free)."""
    kind = request.answer_type
    if kind == "letter":
        options = request.options or {}
        return parse_letter(text, "".join(options) or "ABCD", options)
    if kind == "yes_no":
        return parse_yes_no(text)
    if kind == "number":
        return parse_number(text, presupposition=presupposition_of(request.text))
    if kind == "choice_12":
        return parse_choice_12(text)
    if kind == "score_1_10":
        return parse_score(text, 1, 10)
    return parse_free(text)
