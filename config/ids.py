"""Object ids as the outside world gives them: in addresses, query filters and request bodies.

Every table's key is a PostgreSQL `bigint`: a value from 1 to 2^63 - 1 can name a row, and anything else
(0, negative, larger, not a whole number) names none. Such a value must never reach the database, where a
number past the `bigint` range is an error (SQLite has no such limit, so only PostgreSQL shows it). The one
rule lives here and is used everywhere:

- addresses: the path converter `id` (`<id:pk>`; the API's router uses it for every `pk` lookup): a value
  out of range matches no route, so the answer is the plain 404 (JSON under /api/, the page elsewhere);
- query filters: `IdChoiceFilter` (django-filter) and request bodies: `IdField` (DRF): out of range is a
  400 that names the parameter or field;
- anything else that reads an id from a request: `parse_id`.
"""

from django import forms
from django_filters import rest_framework as filters
from rest_framework import serializers

MIN_ID = 1
MAX_ID = 2**63 - 1  # PostgreSQL's bigint, the type of every primary key
OUT_OF_RANGE = f"Ids are whole numbers from {MIN_ID} to {MAX_ID}."


def parse_id(value) -> int | None:
    """The id that `value` (a string of digits or an int) names, or None when it names none."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        number = value
    else:
        text = str(value).strip()
        if not text.isascii() or not text.isdigit() or len(text) > len(str(MAX_ID)):
            return None
        number = int(text)
    return number if MIN_ID <= number <= MAX_ID else None


class IdConverter:
    """The path converter `id`: digits naming an id in range; anything else matches no route (404)."""

    regex = "[0-9]+"

    def to_python(self, value: str) -> int:
        number = parse_id(value)
        if number is None:
            raise ValueError(OUT_OF_RANGE)
        return number

    def to_url(self, value) -> str:
        return str(int(value))


class IdChoiceField(forms.ModelChoiceField):
    """A model choice by id: an id out of range is refused as such before the database is asked."""

    def to_python(self, value):
        if value not in self.empty_values and parse_id(value) is None:
            raise forms.ValidationError(OUT_OF_RANGE, code="invalid_choice")
        return super().to_python(value)


class IdChoiceFilter(filters.ModelChoiceFilter):
    """`?<name>=<id>`: only rows whose foreign key is the object with this id (out of range: a 400)."""

    field_class = IdChoiceField


class IdField(serializers.IntegerField):
    """An id in a request body; out of range is a 400 naming the field."""

    def __init__(self, **kwargs):
        kwargs.setdefault("min_value", MIN_ID)
        kwargs.setdefault("max_value", MAX_ID)
        super().__init__(**kwargs)
