"""The registry of LLM judge kinds by name. Each judge module of `evaluation.judges` registers its kind
(`@register` on the `JudgeKind` subclass); a benchmark names the kinds that judge its answers
(`Benchmark.judge_kinds`). `Judgment.kind` is validated against this registry (`validate_name`), so a
new judge kind needs no migration. This module imports nothing of the project, so that the models can
use it."""

from __future__ import annotations

from django.core.exceptions import ValidationError

KINDS: dict = {}  # name → JudgeKind instance, in name order (whichever module registers first)


def register(kind_class):
    """Register an instance of a `JudgeKind` subclass under its `name`; returns the class (a decorator)."""
    kind = kind_class()
    if not kind.name:
        raise ValueError(f"{kind_class.__name__} has no name.")
    found = KINDS.get(kind.name)
    if found is not None and type(found).__qualname__ != kind_class.__qualname__:
        raise ValueError(f"Judge kind {kind.name!r} is already registered by {type(found).__module__}.")
    KINDS[kind.name] = kind
    for name in sorted(KINDS):
        KINDS[name] = KINDS.pop(name)
    return kind_class


def names() -> tuple[str, ...]:
    return tuple(KINDS)


def validate_name(value) -> None:
    """Django validator: `value` names a registered judge kind."""
    if value not in KINDS:
        raise ValidationError(f"Unknown judge kind {value!r}; known: {', '.join(KINDS) or 'none'}.",
                              code="unknown_judge_kind")
