from django.utils import timezone

from annotation.crowd import rows
from annotation.crowd.models import HistoryEntry


def record(entity: str, entity_id: int, from_state: str, to_state: str, *, actor=None, study=None,
           reason: str = "") -> HistoryEntry:
    """Append one state change to the insert-only history."""
    return HistoryEntry.objects.create(
        entity=entity, entity_id=entity_id, from_state=from_state or "", to_state=to_state,
        actor=actor if actor is not None and actor.pk else None, study=study, reason=reason,
    )


def for_object(entity: str, entity_id: int):
    return HistoryEntry.objects.filter(entity=entity, entity_id=entity_id).select_related("actor")


def record_many(changes: list[tuple[str, int, str, str]], *, actor=None, study=None, reason: str = "",
                now=None) -> None:
    """Append several (entity, id, from, to) changes by one actor in one statement."""
    now = rows.adapt_time(now or timezone.now())
    actor_id = actor.pk if actor is not None and actor.pk else None
    study_id = study.pk if study is not None else None
    names = ["entity", "entity_id", "study", "from_state", "to_state", "actor", "reason", "created_at"]
    columns = ", ".join(rows.column(HistoryEntry, name) for name in names)
    marks = ", ".join(["(" + ", ".join(["%s"] * len(names)) + ")"] * len(changes))
    values = [v for entity, pk, old, new in changes
              for v in (entity, pk, study_id, old or "", new, actor_id, reason, now)]
    rows.execute_count(f"INSERT INTO {rows.table(HistoryEntry)} ({columns}) VALUES {marks}", values)
