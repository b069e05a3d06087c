"""Duplicating a study: a new draft with the same settings and the same items, none of its work.

The copy is made by the one study-creation service (`annotation.crowd.studies.create_study`), so its
settings pass the same checks; its items start with fresh places (k each), and no claim, draft,
submission, exclusion or history of the original comes along.
"""

from django.db import transaction

from annotation.crowd import studies
from annotation.crowd.models import Study

NOT_COPIED = {"id", "name", "slug", "state", "created_by", "created_at", "step_kind", "form_schema"}
ITEM_FIELDS = ("external_id", "payload", "role", "answer_key", "benchmark_item", "video", "image", "proposal")


def copied_settings(study: Study) -> dict:
    """The study's own settings (concrete fields other than its name, address, state and author)."""
    return {f.name: getattr(study, f.name) for f in Study._meta.concrete_fields
            if f.name not in NOT_COPIED and not f.primary_key}


def duplicate(study: Study, by, *, name: str = "") -> Study:
    """A draft copy of `study` named `name` (default "Copy of …"), with its settings, eligibility
    lists and items; the copy gets its own address."""
    name = (name or f"Copy of {study.name}")[:studies.NAME_LENGTH]
    rows = [{field: getattr(item, field) for field in ITEM_FIELDS}
            for item in study.items.select_related("benchmark_item", "video", "image", "proposal").order_by("id")]
    with transaction.atomic():
        copy = studies.create_study(
            name=name, created_by=by, rows=rows, step_kind=study.step_kind, form_schema=study.form_schema,
            history_reason=f"copied from {study.slug}", **copied_settings(study)).study
        copy.include_workers.set(study.include_workers.all())
        copy.exclude_workers.set(study.exclude_workers.all())
    return copy
