"""One way to change state: declared transitions per model, one service that applies them.

A model declares its workflow once, as a class attribute::

    STATES = StateMachine("status", {"queued": {"running", "failed"}, "running": {"done"}, ...})

and every change of that field goes through `transition(obj, to, by, reason)`: inside one
transaction it locks and re-reads the row, refuses a move the declaration does not allow
(`TransitionRefused`, HTTP 409 for the API and the pages), saves the new state and appends one
`config.models.StateChange` row (insert-only). Paths that speak SQL for speed (the crowd claim
loop) check their moves against the same declaration (`StateMachine.check`, `sources`) and write
the same table in the statements they already make. A bulk change goes through `transition_many`:
one locking read, one UPDATE and one INSERT of the history for every row it moves, whatever their
number.

A model whose rows have more than one workflow declares each (`STATES` is the main one, the one the
admin offers; e.g. `PARSE_STATES = StateMachine("status", …)` beside it) and names the field when
it moves one of the others: `transition(obj, to, …, state_field="status")`.

This module lives in `config`, below `generation`, `annotation` and `evaluation`, so that each
layer's models can use it while imports still go one way.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from django.contrib.contenttypes.models import ContentType
from django.core.exceptions import ObjectDoesNotExist
from django.db import transaction
from django.db.models import ProtectedError
from django.utils import timezone

from config.models import StateChange


class TransitionRefused(Exception):
    """A state change the model's declaration does not allow (HTTP 409)."""

    status = 409

    def __init__(self, obj, current: str, to: str):
        self.obj, self.current, self.to = obj, current, to
        name = obj._meta.verbose_name if hasattr(obj, "_meta") else type(obj).__name__
        self.message = f"{name.capitalize()} #{obj.pk} is {current or 'new'}; it cannot become {to}."
        super().__init__(self.message)


class StateMachine:
    """The allowed moves of one state field: `{from_state: {to_state, …}}`. States with no way out
    may be listed with an empty set; every state named anywhere is a state of the machine."""

    def __init__(self, field: str, transitions: Mapping[str, Iterable[str]]):
        self.field = field
        self.transitions = {str(source): frozenset(str(t) for t in targets) for source, targets in transitions.items()}
        self.states = frozenset(self.transitions) | frozenset().union(*self.transitions.values())

    def allows(self, current: str, to: str) -> bool:
        return str(to) in self.transitions.get(str(current), ())

    def targets(self, current: str) -> frozenset[str]:
        """Where an object in state `current` may go."""
        return self.transitions.get(str(current), frozenset())

    def sources(self, to: str) -> tuple[str, ...]:
        """The states from which `to` may be reached (sorted), e.g. for a conditional UPDATE's WHERE."""
        return tuple(sorted(source for source, targets in self.transitions.items() if str(to) in targets))

    def source(self, to: str) -> str:
        """The one state from which `to` may be reached; for hot paths whose conditional UPDATE
        names a single source state (a ValueError if the declaration gives none or several)."""
        sources = self.sources(to)
        if len(sources) != 1:
            raise ValueError(f"{self.field} → {to} has {len(sources)} source states, not one: {sources}.")
        return sources[0]

    def extend(self, transitions: Mapping[str, Iterable[str]]) -> None:
        """Add moves to the declaration (a workflow whose parts declare their own stages)."""
        for source, targets in transitions.items():
            self.transitions[str(source)] = self.transitions.get(str(source), frozenset()) | {str(t) for t in targets}
        self.states = frozenset(self.transitions) | frozenset().union(*self.transitions.values())

    def check(self, obj, current: str, to: str) -> None:
        """Raise `TransitionRefused` unless the declaration allows current → to (no database access)."""
        if not self.allows(current, to):
            raise TransitionRefused(obj, current, to)


def machines_of(model) -> list[StateMachine]:
    """Every `StateMachine` a model (or an instance) declares, `STATES` first."""
    model = model if isinstance(model, type) else type(model)
    found = {}
    for klass in reversed(model.__mro__):
        found.update((name, value) for name, value in vars(klass).items() if isinstance(value, StateMachine))
    main = found.pop("STATES", None)
    return ([main] if main is not None else []) + list(found.values())


def machine_of(model, field: str | None = None) -> StateMachine:
    """The `StateMachine` a model (or an instance) declares as `STATES`, or the one it declares for `field`."""
    name = model.__name__ if isinstance(model, type) else type(model).__name__
    if field is None:
        machine = getattr(model, "STATES", None)
        if not isinstance(machine, StateMachine):
            raise TypeError(f"{name} declares no STATES.")
        return machine
    for machine in machines_of(model):
        if machine.field == field:
            return machine
    raise TypeError(f"{name} declares no states for {field!r}.")


def _actor(by):
    return by if by is not None and getattr(by, "pk", None) else None


def record(model, pk: int, from_state: str, to_state: str, *, by=None, reason: str = "", scope=None,
           at=None) -> StateChange:
    """Append one change of object `pk` of `model` to the history, unchecked (creation, or a change
    that is not a move of a declared state field, such as a staged claim's step)."""
    return StateChange.objects.create(
        content_type=ContentType.objects.get_for_model(model), object_id=pk, from_state=from_state or "",
        to_state=to_state, actor=_actor(by), reason=reason or "",
        scope_type=ContentType.objects.get_for_model(type(scope)) if scope is not None else None,
        scope_id=scope.pk if scope is not None else None, created_at=at or timezone.now(),
    )


def transition(obj, to: str, by=None, reason: str = "", *, scope=None, state_field: str | None = None,
               **fields) -> StateChange:
    """Move `obj` to state `to` if its model's declaration allows it from the state the row is in
    now; save it (with any other `fields` given) and record who did it and why, all in one
    transaction. Raises `TransitionRefused` (nothing written) otherwise. `obj` gets the new values.
    `state_field` names the workflow for a model that declares several (default: `STATES`)."""
    model = type(obj)
    machine = machine_of(model, state_field)
    with transaction.atomic():
        current = (model._default_manager.select_for_update().filter(pk=obj.pk)
                   .values_list(machine.field, flat=True).first())
        if current is None:
            raise model.DoesNotExist(f"{model._meta.verbose_name} #{obj.pk} does not exist.")
        machine.check(obj, current, to)
        model._default_manager.filter(pk=obj.pk).update(**{machine.field: to}, **fields)
        change = record(model, obj.pk, current, to, by=by, reason=reason, scope=scope)
    setattr(obj, machine.field, to)
    for name, value in fields.items():
        setattr(obj, name, value)
    return change


def try_transition(obj, to: str, by=None, reason: str = "", *, scope=None, state_field: str | None = None,
                   **fields) -> StateChange | None:
    """`transition`, or None (nothing written) where the row is gone or the declaration does not
    allow the move from the state it is in now: for moves that only apply if nothing else changed
    it first (a job finishing that a user cancelled meanwhile)."""
    try:
        with transaction.atomic():
            return transition(obj, to, by, reason, scope=scope, state_field=state_field, **fields)
    except (TransitionRefused, ObjectDoesNotExist):
        return None


def transition_many(queryset, to: str, by=None, reason: str = "", *, scope=None, state_field: str | None = None,
                    **fields) -> list[int]:
    """Move every row of `queryset` whose current state the declaration allows to become `to`
    (the others are left as they are, like a conditional UPDATE's), with any other `fields`, and
    record one change for each, in one transaction of three statements: the locking read, the
    UPDATE and one INSERT of the history. Returns the ids of the rows moved (in id order)."""
    model = queryset.model
    machine = machine_of(model, state_field)
    with transaction.atomic():
        found = list(queryset.select_for_update(of=("self",)).order_by("pk").values_list("pk", machine.field))
        moved = [(pk, current) for pk, current in found if machine.allows(current, to)]
        if not moved:
            return []
        model._default_manager.filter(pk__in=[pk for pk, _ in moved]).update(**{machine.field: to}, **fields)
        content_type = ContentType.objects.get_for_model(model)
        scope_type = ContentType.objects.get_for_model(type(scope)) if scope is not None else None
        at = timezone.now()
        StateChange.objects.bulk_create([
            StateChange(content_type=content_type, object_id=pk, from_state=current or "", to_state=to,
                        actor=_actor(by), reason=reason or "", scope_type=scope_type,
                        scope_id=scope.pk if scope is not None else None, created_at=at)
            for pk, current in moved])
    return [pk for pk, _ in moved]


class KeepsHistory:
    """Model mixin: an object in whose scope changes were recorded (a study, whose claims and
    submissions changed) or whose own changes were is not deleted, so that no history points at
    nothing. `ProtectedError` before anything is deleted."""

    def delete(self, *args, **kwargs):
        if StateChange.objects.of(self).exists() or StateChange.objects.within(self).exists():
            raise ProtectedError(f"{self._meta.verbose_name.capitalize()} #{self.pk} has recorded history and "
                                 f"cannot be deleted.", {self})
        return super().delete(*args, **kwargs)


def history(obj, state_field: str | None = None):
    """The recorded changes of `obj`, oldest first, with their actors; with `state_field`, only the
    changes of that one of its workflows (for a model that declares several, whose states differ)."""
    changes = StateChange.objects.of(obj).select_related("actor")
    if state_field is not None:
        changes = changes.filter(to_state__in=machine_of(obj, state_field).states)
    return changes
