"""Validation of item payloads against their benchmark's schema.

Each benchmark's items come in a few record kinds (`payload["kind"]`), mirroring the public
release layouts in SPEC.md, so imported and curated versions share one shape. The schema is the
benchmark's pydantic models (`annotation/benchmarks/<slug>/payload.py`); unknown extra fields are
kept as they are. The payload is checked, never rewritten: what is stored is what was sent.
Messages name the benchmark, the kind and the field: `cvqa/real: missing field 'answer'`.
"""

from django.core.exceptions import ValidationError
from pydantic import ValidationError as SchemaError

from annotation.benchmarks import registry
from annotation.benchmarks.types import expected_of_field


def validate_payload(benchmark: str, payload) -> None:
    """Raise ValidationError listing every problem of one item payload."""
    try:
        definition = registry.get(benchmark)
    except registry.UnknownBenchmark:
        raise ValidationError(f"Unknown benchmark {benchmark!r}.") from None
    if not isinstance(payload, dict):
        raise ValidationError("The payload must be a JSON object.")
    kind = payload.get("kind")
    if not isinstance(kind, str) or kind not in definition.kinds:
        raise ValidationError(
            f"{benchmark} payload needs 'kind', one of: {', '.join(sorted(definition.kinds))} (got {kind!r})."
        )
    try:
        definition.payload_adapter.validate_python(payload)
    except SchemaError as exc:
        raise ValidationError([f"{benchmark}/{kind}: {message}"
                               for message in schema_messages(definition.kinds[kind], payload, exc)]) from None


def schema_messages(model, payload: dict, error: SchemaError) -> list[str]:
    """One message per field the schema refuses, in the schema's order: missing, or what it must be."""
    messages: dict[str, str] = {}
    for problem in error.errors():
        location = [part for part in problem["loc"] if part != payload.get("kind")]
        if not location or not isinstance(location[0], str):
            messages.setdefault(problem["msg"], problem["msg"])
            continue
        name = location[0]
        if problem["type"] == "missing":
            messages.setdefault(name, f"missing field '{name}'")
            continue
        field = model.model_fields.get(name)
        must_be = expected_of_field(field) if field else None
        messages.setdefault(name, f"field '{name}' must be {must_be or problem['msg'].lower()} "
                                  f"(got {payload.get(name)!r})")
    return list(messages.values())

