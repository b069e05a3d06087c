"""Moving an item under curation from stage to stage (`CurationRecord.stage`), through the one
transition service (`config.state`) and its history.

Each benchmark's pipeline declares the moves between its stages where it names them
(`declare({from_stage: {to_stage, …}})`, which adds them to `CurationRecord.STATES`). A record is
created at its first stage with `start` (recorded as a change from nothing), moved with `move` (its
working fields saved with it; a move the declarations do not allow raises `TransitionRefused`), and
many at once with `move_many` (one UPDATE and one INSERT of the history for them all).
"""

from django.utils import timezone

from annotation.curation_models import CurationRecord
from config import state


def declare(moves: dict) -> None:
    """Add a pipeline's moves between its stages to `CurationRecord.STATES`."""
    CurationRecord.STATES.extend(moves)


def start(*, by=None, reason: str = "", **fields) -> CurationRecord:
    """Create a record (`item`, `stage` and its other fields) and record its first stage."""
    record = CurationRecord.objects.create(**fields)
    state.record(CurationRecord, record.pk, "", record.stage, by=by, reason=reason)
    return record


def move(record: CurationRecord, stage: str, *, by=None, reason: str = "", **fields) -> CurationRecord:
    """Save `fields` (e.g. `working`) on the record and move it to `stage` if it is at another one
    (checked against the row's stage and recorded). The record gets the new values."""
    if stage == record.stage:
        for name, value in fields.items():
            setattr(record, name, value)
        record.save(update_fields=[*fields, "updated_at"])
        return record
    state.transition(record, stage, by, reason, updated_at=timezone.now(), **fields)
    return record


def move_many(records, stage: str, *, by=None, reason: str = "") -> list[int]:
    """Move every record of the queryset `records` whose stage may become `stage`; the ids moved."""
    return state.transition_many(records, stage, by, reason, updated_at=timezone.now())
