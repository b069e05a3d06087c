"""The typed fields benchmark schemas are written in, each carrying the phrase its messages use.

Two vocabularies, both pydantic types, so that a field's check, its JSON schema and its message come
from one place:

- payload fields (what a stored item holds, JSON types checked strictly): `NonEmptyString`,
  `Number`, `strings(n)`, `one_of(...)`;
- release fields (what a release file may hold, as the importers read it): `Text`, `FilledText`,
  `NumberLike` (a number or a numeric text), `WholeNumberLike`, `Id`, `Mark`, `texts(n)`, `marks(n)`.

`expected(annotation)` gives a type's phrase ("a non-empty string", "a list of 3 marks …") for
messages such as `field 'mcq_label' must be one of 0, 1, 2 (got 5)`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, get_args, get_origin

from pydantic import AfterValidator, Field, StrictBool, StrictFloat, StrictInt, StrictStr, StringConstraints

MARKS = ("yes", "no")


class Expected:
    """Annotated metadata: how a message names what the field must be."""

    def __init__(self, text: str):
        self.text = text

    def __repr__(self):
        return f"Expected({self.text!r})"


def expected(annotation: Any) -> str | None:
    """The phrase of the first `Expected` found in `annotation` (looking inside unions and Optional)."""
    if get_origin(annotation) is Annotated:
        for meta in annotation.__metadata__:
            if isinstance(meta, Expected):
                return meta.text
    for inner in get_args(annotation):
        found = expected(inner)
        if found:
            return found
    return None


def expected_of_field(field) -> str | None:
    """The phrase of a pydantic model field (its metadata holds the outer `Expected`)."""
    for meta in field.metadata:
        if isinstance(meta, Expected):
            return meta.text
    return expected(field.annotation)


def as_number(value) -> float | int | None:
    """A JSON number or numeric string as int/float; None when it is neither (booleans are not numbers)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return value
    if isinstance(value, str):
        try:
            parsed = float(value.strip())
        except ValueError:
            return None
        return int(parsed) if parsed.is_integer() and "." not in value else parsed
    return None


def _numeric_text(value: str) -> str:
    if as_number(value) is None:
        raise ValueError("not a number")
    return value


def _whole(value):
    if not isinstance(as_number(value), int):
        raise ValueError("not a whole number")
    return value


def _is_mark(value: str) -> str:
    if value.strip().lower() not in MARKS:
        raise ValueError("not yes or no")
    return value


_NonBlank = StringConstraints(pattern=r"\S")
_NumericText = Annotated[StrictStr, AfterValidator(_numeric_text)]

# --- Payload fields -------------------------------------------------------------------------------

NonEmptyString = Annotated[StrictStr, _NonBlank, Expected("a non-empty string")]
Number = Annotated[StrictInt | StrictFloat, Expected("a number")]


def strings(length: int | None = None):
    """A list of strings (exactly `length` of them when given)."""
    phrase = f"a list of {length} strings" if length else "a list of strings"
    return Annotated[list[StrictStr], Field(min_length=length, max_length=length), Expected(phrase)]


def one_of(*choices):
    """Exactly one of `choices` (as the release writes them)."""
    return Annotated[Literal[choices], Expected("one of " + ", ".join(repr(choice) for choice in choices))]


# --- Release fields -------------------------------------------------------------------------------

Text = Annotated[StrictStr, Expected("a text")]
FilledText = Annotated[StrictStr, _NonBlank, Expected("a non-empty text")]
NumberLike = Annotated[StrictInt | StrictFloat | _NumericText, Expected("a number")]
WholeNumberLike = Annotated[StrictInt | _NumericText, AfterValidator(_whole), Expected("a whole number")]
Id = Annotated[Annotated[StrictStr, _NonBlank] | StrictInt, Expected("a text or a whole number")]
_MarkValue = StrictBool | Annotated[StrictStr, AfterValidator(_is_mark)]
Mark = Annotated[_MarkValue, Expected('a mark ("yes"/"no" or true/false)')]


def texts(length: int, *, filled: bool = False):
    """A list of exactly `length` texts (non-empty ones when `filled`)."""
    each = Annotated[StrictStr, _NonBlank] if filled else StrictStr
    phrase = f"a list of {length} {'non-empty ' if filled else ''}texts"
    return Annotated[list[each], Field(min_length=length, max_length=length), Expected(phrase)]


def marks(length: int):
    """A list of exactly `length` marks."""
    return Annotated[list[_MarkValue], Field(min_length=length, max_length=length),
                     Expected(f'a list of {length} marks ("yes"/"no" or true/false)')]
