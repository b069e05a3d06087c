"""CVRR-ES's dimensions as data: one `CategoryDefinition` row per dimension of the CVRR-ES benchmark,
with its name, description and the instructions its curation steps use (`instructions["caption"]`:
the caption guideline; `instructions["qa"]`: the QA-generation instruction).

`ensure_dimensions` makes the rows that are missing from the defaults (`dimensions.default_texts`)
and never touches a row that exists, so curators' edits stay. `edit_dimension` saves a curator's
edit (checked by `DimensionForm`; nothing is written when it is refused) with who made it and when.
"""

from __future__ import annotations

from django import forms

from annotation import category_definitions
from annotation.benchmarks.cvrr.dimensions import DIMENSIONS, default_texts
from annotation.benchmarks.cvrr.pools import CurationError, benchmark
from annotation.category_definitions import NAME_LENGTH
from annotation.curation_models import CategoryDefinition

MAX_DESCRIPTION = 5_000
MAX_INSTRUCTION = 10_000
STEPS = (("caption", "Caption guideline"), ("qa", "QA-generation instruction"))


def ensure_dimensions() -> list[CategoryDefinition]:
    """Every dimension's row, the missing ones made from the defaults (existing rows are left as they are;
    a row made here has no `updated_by`: nobody edited it yet)."""
    return category_definitions.ensure_rows(benchmark(), DIMENSIONS, default_texts)


def dimension_rows():
    """The CVRR-ES dimension rows, in the paper's order, with who edited each last."""
    return CategoryDefinition.objects.filter(benchmark__slug=benchmark().slug).select_related("updated_by")


def dimension(key: str) -> CategoryDefinition:
    """The row of dimension `key`; CurationError 404 for a key that is no CVRR-ES dimension."""
    found = dimension_rows().filter(key=key).first() if isinstance(key, str) else None
    if found is None:
        if key in DIMENSIONS:
            return next(row for row in ensure_dimensions() if row.key == key)
        raise CurationError(f"{key!r} is not a CVRR-ES dimension; known: {', '.join(DIMENSIONS)}.", status=404)
    return found


class DimensionForm(forms.Form):
    name = forms.CharField(max_length=NAME_LENGTH, strip=True)
    description = forms.CharField(max_length=MAX_DESCRIPTION, required=False, widget=forms.Textarea(attrs={"rows": 4}))
    caption = forms.CharField(label="Caption guideline", max_length=MAX_INSTRUCTION, widget=forms.Textarea(
        attrs={"rows": 8}), help_text="What annotators read beside each video of the dimension when they write its "
                                      "caption.")
    qa = forms.CharField(label="QA-generation instruction", max_length=MAX_INSTRUCTION, widget=forms.Textarea(
        attrs={"rows": 8}), help_text="What the language model is told, with the video's caption, when it proposes "
                                      "question-answer pairs for the dimension.")


class DimensionInvalid(CurationError):
    """An edit the form refuses; `form` holds the errors per field."""

    def __init__(self, form: DimensionForm):
        super().__init__(f"The dimension was not saved: {category_definitions.problems(form)}", status=400)
        self.form = form


def initial(row: CategoryDefinition) -> dict:
    instructions = row.instructions or {}
    return {"name": row.name, "description": row.description, "caption": instructions.get("caption", ""),
            "qa": instructions.get("qa", "")}


def edit_dimension(key: str, data, user) -> CategoryDefinition:
    """Save the edit of dimension `key` (name, description, caption guideline, QA instruction); 404 for an
    unknown key, 400 (DimensionInvalid, nothing written) for a missing or too long field."""
    return category_definitions.save_edit(
        dimension(key), DimensionForm(data), user, DimensionInvalid,
        lambda clean: {"caption": clean["caption"], "qa": clean["qa"]})


def caption_guideline(key: str) -> str:
    """The caption guideline of dimension `key` as curators last saved it."""
    return (dimension(key).instructions or {}).get("caption", "")
