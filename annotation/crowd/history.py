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
