"""Type and shape checks of release fields, reported with the file, the row and the field.

The types are the payload schemas' own (`annotation.benchmarks.types`, pydantic), so a release field
and the payload field it becomes are checked, and named in messages, alike.

A reader describes the fields of one record as `{name: Field}` and calls `check_fields`, which adds
one problem per field that is missing (when required) or of the wrong type or shape, e.g.
`VAR_Data.json[3]: field 'task2_checkboxes' must be a list of 3 marks ("yes"/"no" or true/false)
(got ['yes', 'maybe', 'no'])`. A field that is absent or null and not required is not checked.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from pydantic import TypeAdapter
from pydantic import ValidationError as SchemaError

from annotation.benchmarks import types
from annotation.importers.base import Problems

SHOWN_CHARACTERS = 80


@dataclass(frozen=True)
class Field:
    """A release field of one of the typed kinds in `annotation.benchmarks.types` (the payload schemas' vocabulary)."""

    type: object

    @property
    def expected(self) -> str:
        return types.expected(self.type)

    @cached_property
    def _adapter(self) -> TypeAdapter:
        return TypeAdapter(self.type)

    def accepts(self, value) -> bool:
        try:
            self._adapter.validate_python(value)
        except SchemaError:
            return False
        return True


TEXT = Field(types.Text)
FILLED_TEXT = Field(types.FilledText)
NUMBER = Field(types.NumberLike)
WHOLE_NUMBER = Field(types.WholeNumberLike)
ID = Field(types.Id)
MARK = Field(types.Mark)


def texts(length: int, *, filled: bool = False) -> Field:
    """A list of exactly `length` texts (non-empty ones when `filled`)."""
    return Field(types.texts(length, filled=filled))


def marks(length: int) -> Field:
    return Field(types.marks(length))


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
