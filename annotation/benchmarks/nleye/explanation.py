"""Explaining and categorizing an NL-EYE triplet (SPEC §3 Curation 4; paper §3 "Explanation").

A curator writes the gold explanation (why the labelled hypothesis is the more plausible one) and the
triplet's final categorization: reasoning category, temporal direction, temporal duration (a parallel
triplet is short) and domain, each from `vocabulary`. They go into the item's payload, under the
release's column names, checked by the payload schema; who wrote them is recorded on the item's
curation record (`working["explained_by"]`, `["explained_at"]` and every writer so far in
`["explanation_authors"]`), so that the validation can ask for someone else. A triplet with its three
images moves on to stage `explained`.
"""

from __future__ import annotations

from django import forms
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from annotation import curation_stages
from annotation.benchmarks.nleye import stages, triplets, validation, vocabulary
from annotation.curation_models import CurationRecord
from annotation.models import BenchmarkItem, FrozenError
from annotation.payloads import validate_payload

FIELDS = ("explanation", *validation.CATEGORY_FIELDS)
MAX_EXPLANATION = 2000
STAGE_ORDER = [stage for stage, _label in stages.STAGES]


def _choices(pairs):
    return [("", "— choose —"), *pairs]


class ExplanationForm(forms.Form):
    explanation = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 4}), max_length=MAX_EXPLANATION,
        help_text="Why the plausible hypothesis is more plausible, e.g. “Usually, X tends to Y”.")
    reasoning_category = forms.ChoiceField(choices=_choices(vocabulary.CATEGORIES),
                                           label="Reasoning category")
    time_direction = forms.ChoiceField(choices=_choices(vocabulary.DIRECTIONS), label="Time direction")
    time_duration = forms.ChoiceField(choices=_choices(vocabulary.DURATIONS), label="Time duration",
                                      help_text="A parallel triplet is short.")
    domain = forms.ChoiceField(choices=_choices(vocabulary.DOMAINS), label="Domain")

    def clean(self):
        cleaned = super().clean()
        if (cleaned.get("time_direction") == vocabulary.PARALLEL
                and cleaned.get("time_duration") not in (None, vocabulary.SHORT)):
            self.add_error("time_duration", "A parallel triplet's scenes happen at the same time: its duration is "
                                            f"{vocabulary.SHORT}.")
        return cleaned


class ExplanationInvalid(ValidationError):
    """The explanation form has errors; `form` holds them by field."""

    def __init__(self, form: ExplanationForm):
        super().__init__([f"{name}: {message}" if name != "__all__" else message
                          for name, messages in form.errors.items() for message in messages])
        self.form = form


def initial(item) -> dict:
    """The form's starting values: the payload's, else what the curation record holds under the same names
    (e.g. the category the scene's author proposed)."""
    record = validation.curation_record(item)
    working = record.working if record is not None and isinstance(record.working, dict) else {}
    values = {}
    for name in FIELDS:
        value = item.payload.get(name)
        if value in (None, ""):
            value = working.get(name)
        if isinstance(value, str):
            values[name] = value
    return values


def _before(stage: str, other: str) -> bool:
    """Whether `stage` comes before `other` in the pipeline (a stage the pipeline does not name does not)."""
    return stage in STAGE_ORDER and STAGE_ORDER.index(stage) < STAGE_ORDER.index(other)


def write_explanation(item_id: int, data, user) -> BenchmarkItem:
    """Check `data` (the form's fields) and write it into the triplet's payload; record `user` as its writer.

    Raises ExplanationInvalid (with the form) on bad values, FrozenError when the version is frozen and
    ValidationError when the payload schema refuses the result."""
    form = ExplanationForm(data)
    if not form.is_valid():
        raise ExplanationInvalid(form)
    values = {name: form.cleaned_data[name].strip() if name == "explanation" else form.cleaned_data[name]
              for name in FIELDS}
    with transaction.atomic():
        item = BenchmarkItem.objects.select_for_update().select_related("version__benchmark").get(pk=item_id)
        if item.version.frozen:
            raise FrozenError(f"Version {item.version} is frozen: write the explanation in a new version.")
        payload = {**item.payload, **values}
        validate_payload(item.version.benchmark.slug, payload)
        item.payload = payload
        item.save(update_fields=["payload"])
        record = (CurationRecord.objects.select_for_update().filter(item=item).first()
                  or curation_stages.start(item=item, stage=stages.EXPLAINED, by=user))
        working = dict(record.working) if isinstance(record.working, dict) else {}
        authors = [pk for pk in working.get("explanation_authors", []) if isinstance(pk, int)]
        working.update({"explained_by": user.pk, "explained_at": timezone.now().isoformat(),
                        "explanation_authors": sorted({*authors, user.pk})})
        record.working = working
        record.save(update_fields=["working", "updated_at"])
        state = validation.triplet_state(triplets.triplet_items().get(pk=item.pk))
        if len(state.images) == len(validation.SLOTS) and _before(record.stage, stages.EXPLAINED):
            curation_stages.move(record, stages.EXPLAINED, by=user, reason="explanation written")
        validation.refresh_stage(record, state, by=user)
    return item
