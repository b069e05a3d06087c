"""Validation of item payloads, per benchmark.

Each benchmark's items come in a few record kinds (`payload["kind"]`), mirroring the public
release layouts in SPEC.md, so imported and curated versions share one shape. A rule lists the
required fields and a check for each; unknown extra fields are kept as they are.
"""

from collections.abc import Callable

from django.core.exceptions import ValidationError


def _str(value) -> bool:
    return isinstance(value, str) and value.strip() != ""


def _num(value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _str_list(length: int | None = None) -> Callable:
    def check(value) -> bool:
        return isinstance(value, list) and all(isinstance(v, str) for v in value) and (
            length is None or len(value) == length
        )

    check.__doc__ = f"a list of {length} strings" if length else "a list of strings"
    return check


def _one_of(*choices) -> Callable:
    def check(value) -> bool:
        return value in choices

    check.__doc__ = "one of " + ", ".join(repr(c) for c in choices)
    return check


_str.__doc__ = "a non-empty string"
_num.__doc__ = "a number"

RULES: dict[str, dict[str, dict[str, Callable]]] = {
    "blackswan": {
        "video": {"id": _str, "preevent": _num, "event": _num, "postevent": _num},
        "mcq": {"id": _str, "mcq_task": _one_of(1, 2), "mcq_options": _str_list(3), "mcq_label": _one_of(0, 1, 2)},
        "yn": {"id": _str, "def_task": _one_of(1, 2), "exp": _str, "def_label": _one_of("yes", "no")},
    },
    "cvqa": {
        "real": {"query": _str, "answer": _str, "new_query": _str, "new_answer": _str,
                 "type": _one_of("direct", "indirect", "boolean")},
        "synthetic": {"query": _str, "answer": _str, "new_query": _str, "new_answer": _str,
                      "type": _one_of(*(f"abs_counting_{i}" for i in range(1, 7)))},
    },
    "nleye": {
        "triplet": {"premise": _str, "hypothesis1": _str, "hypothesis2": _str, "label": _one_of(1, 2)},
    },
    "cvrr": {
        "qa": {"dimension": _str, "video_id": _str, "question": _str, "answer": _str},
    },
    "maia": {
        "question": {"video": _str, "category": _str, "question": _str, "answers": _str_list(8)},
    },
}


def validate_payload(benchmark: str, payload) -> None:
    """Raise ValidationError listing every problem of one item payload."""
    if benchmark not in RULES:
        raise ValidationError(f"Unknown benchmark {benchmark!r}.")
    if not isinstance(payload, dict):
        raise ValidationError("The payload must be a JSON object.")
    kinds = RULES[benchmark]
    kind = payload.get("kind")
    if kind not in kinds:
        raise ValidationError(
            f"{benchmark} payload needs 'kind', one of: {', '.join(sorted(kinds))} (got {kind!r})."
        )
    errors = []
    for field, check in kinds[kind].items():
        if field not in payload:
            errors.append(f"missing field '{field}'")
        elif not check(payload[field]):
            errors.append(f"field '{field}' must be {check.__doc__} (got {payload[field]!r})")
    if benchmark == "maia":
        for field in ("true_statements", "false_statements"):
            if field in payload and not _str_list(len(payload["answers"]))(payload[field]):
                errors.append(f"field '{field}' must list one statement per answer")
    if errors:
        raise ValidationError([f"{benchmark}/{kind}: {e}" for e in errors])
