"""Type and shape checks of release fields, reported with the file, the row and the field.

A reader describes the fields of one record as `{name: Field}` and calls `check_fields`, which adds
one problem per field that is missing (when required) or of the wrong type or shape, e.g.
`VAR_Data.json[3]: field 'task2_checkboxes' must be a list of 3 marks ("yes"/"no" or true/false)
(got ['yes', 'maybe', 'no'])`. A field that is absent or null and not required is not checked.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from annotation.importers.base import Problems, number

MARKS = ("yes", "no")
SHOWN_CHARACTERS = 80


@dataclass(frozen=True)
class Field:
    accepts: Callable[[object], bool]
    expected: str  # "a text", "a list of 3 texts", … for messages


def _is_text(value) -> bool:
    return isinstance(value, str)


def _is_filled_text(value) -> bool:
    return isinstance(value, str) and value.strip() != ""


def _is_mark(value) -> bool:
    return isinstance(value, bool) or (isinstance(value, str) and value.strip().lower() in MARKS)


TEXT = Field(_is_text, "a text")
FILLED_TEXT = Field(_is_filled_text, "a non-empty text")
NUMBER = Field(lambda value: number(value) is not None, "a number")
WHOLE_NUMBER = Field(lambda value: isinstance(number(value), int), "a whole number")
ID = Field(lambda value: _is_filled_text(value) or (isinstance(value, int) and not isinstance(value, bool)),
           "a text or a whole number")
MARK = Field(_is_mark, 'a mark ("yes"/"no" or true/false)')


def texts(length: int, *, filled: bool = False) -> Field:
    """A list of exactly `length` texts (non-empty ones when `filled`)."""
    each = _is_filled_text if filled else _is_text
    return Field(lambda value: isinstance(value, list) and len(value) == length and all(map(each, value)),
                 f"a list of {length} {'non-empty ' if filled else ''}texts")


def marks(length: int) -> Field:
    return Field(lambda value: isinstance(value, list) and len(value) == length and all(map(_is_mark, value)),
                 f'a list of {length} marks ("yes"/"no" or true/false)')


def shown(value) -> str:
    """The value as the message quotes it, cut short."""
    written = repr(value)
    return written if len(written) <= SHOWN_CHARACTERS else written[:SHOWN_CHARACTERS - 1] + "…"


def check_fields(record: dict, fields: dict[str, Field], where: str, problems: Problems, *,
                 required: tuple[str, ...] = ()) -> bool:
    """Add a problem for every field of `record` that is missing (if required) or not what `fields` says;
    True when there was none."""
    fine = True
    for name, field in fields.items():
        value = record.get(name)
        if value is None or (value == "" and name in required):
            if name in required:
                problems.add(where, f"missing field '{name}'")
                fine = False
            continue
        if not field.accepts(value):
            problems.add(where, f"field '{name}' must be {field.expected} (got {shown(value)})")
            fine = False
    return fine
