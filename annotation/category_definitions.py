"""A benchmark's categories as data (`CategoryDefinition` rows) that curators edit: shared by every
benchmark that keeps its categories this way (CVRR-ES's dimensions, MAIA's categories).

`ensure_rows` makes the rows missing from a benchmark's defaults and never touches a row that exists,
so curators' edits stay. `save_edit` checks a curator's edit with the benchmark's form (nothing is
written when it is refused: `EditRefused`, with the form's errors) and saves it with who made it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from django import forms
from django.db import IntegrityError, transaction

from annotation.curation_models import CategoryDefinition

NAME_LENGTH = CategoryDefinition._meta.get_field("name").max_length


def ensure_rows(benchmark, keys: Iterable[str], defaults: Callable[[str], dict]) -> list[CategoryDefinition]:
    """Every row of `keys` for `benchmark`, in order, the missing ones made from `defaults(key)` (their
    `updated_by` stays empty: nobody edited them yet)."""
    have = {row.key: row for row in
            CategoryDefinition.objects.filter(benchmark=benchmark).select_related("updated_by")}
    for position, key in enumerate(keys):
        if key in have:
            continue
        try:
            with transaction.atomic():
                have[key] = CategoryDefinition.objects.create(benchmark=benchmark, key=key, position=position,
                                                              **defaults(key))
        except IntegrityError:  # made by a concurrent call meanwhile
            have[key] = CategoryDefinition.objects.get(benchmark=benchmark, key=key)
    return sorted(have.values(), key=lambda row: (row.position, row.key))


def problems(form: forms.Form) -> str:
    """A form's errors as one line: `field: message; …`."""
    return "; ".join(f"{name}: {' '.join(errors)}" for name, errors in form.errors.items())


def save_edit(row: CategoryDefinition, form: forms.Form, user, refused: Callable[[forms.Form], Exception],
              instructions: Callable[[dict], dict]) -> CategoryDefinition:
    """Save a curator's edit of `row`: the form's `name` and `description`, and the `instructions` keys
    that `instructions(cleaned data)` gives (other keys stay). A form that does not validate raises
    `refused(form)` and writes nothing."""
    if not form.is_valid():
        raise refused(form)
    clean = form.cleaned_data
    with transaction.atomic():
        row = CategoryDefinition.objects.select_for_update().get(pk=row.pk)
        row.name, row.description = clean["name"], clean["description"]
        row.instructions = {**(row.instructions or {}), **instructions(clean)}
        row.updated_by = user
        row.save()
    return row
