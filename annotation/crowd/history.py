"""The crowd engine's writes to the one state history (`config.StateChange`).

Changes of a declared state field go through `config.state.transition` (or, in the claim loop, a
conditional UPDATE whose move is checked against the model's `STATES`); this module appends the
rows, with the study as their scope: one at a time, or several in one INSERT for the hot path.
"""

from django.contrib.contenttypes.models import ContentType
from django.utils import timezone

from annotation.crowd import rows
from config import state
from config.models import StateChange


def record(model, pk: int, from_state: str, to_state: str, *, actor=None, study=None,
           reason: str = "") -> StateChange:
    """Append one change of object `pk` of `model` that happened in `study`."""
    return state.record(model, pk, from_state, to_state, by=actor, reason=reason, scope=study)


def for_object(model, pk: int):
    return StateChange.objects.of(model, pk).select_related("actor", "content_type")


def record_many(changes: list[tuple], *, actor=None, study=None, reason: str = "", now=None) -> None:
    """Append several (model, id, from, to) changes by one actor in one statement (content types
    come from Django's per-process cache: no query)."""
    now = rows.adapt_time(now or timezone.now())
    actor_id = actor.pk if actor is not None and actor.pk else None
    scope_type = ContentType.objects.get_for_model(type(study)).pk if study is not None else None
    study_id = study.pk if study is not None else None
    names = ["content_type", "object_id", "scope_type", "scope_id", "from_state", "to_state", "actor", "reason",
             "created_at"]
    columns = ", ".join(rows.column(StateChange, name) for name in names)
    marks = ", ".join(["(" + ", ".join(["%s"] * len(names)) + ")"] * len(changes))
    values = [v for model, pk, old, new in changes
              for v in (ContentType.objects.get_for_model(model).pk, pk, scope_type, study_id, old or "", new,
                        actor_id, reason, now)]
    rows.execute_count(f"INSERT INTO {rows.table(StateChange)} ({columns}) VALUES {marks}", values)
