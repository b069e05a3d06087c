"""A submission's answers in readable form: each field of its form as label → text, choices by their
wording, with the certainty and explanation a field may carry. Review queues and study kinds show
answers this way."""

from annotation.crowd import forms

MISSING = "—"


def _readable(kind: str, value, text: dict) -> str:
    """One answer as text: choices by their wording, lists joined with '; ', moments in seconds."""
    if value is None:
        return MISSING
    if kind == "time_mark" and isinstance(value, int | float) and not isinstance(value, bool):
        return f"{value:.3f} s"
    if kind == "single_choice":
        return text.get(str(value), str(value))
    if kind == "multi_select" and isinstance(value, list):
        return "; ".join(text.get(str(v), str(v)) for v in value) or "(none)"
    if kind == "yes_no_statements" and isinstance(value, dict):
        return "; ".join(f"{text.get(str(k), k)}: {v}" for k, v in value.items())
    return str(value)


def format_answers(schema: dict, payload: dict, data: dict) -> list[dict]:
    """The answers of a submission as label → readable text, in the form's order, with the
    certainty and explanation a field may carry."""
    data = data or {}
    rows = []
    for field in forms.render_fields(schema, payload, {}, data):
        name = field["name"]
        text = {c["id"]: c["text"] for c in field.get("choices", []) + field.get("statements", [])}
        extra = [f"{word}: {data[key]}" for word, key in (("certainty", f"{name}_certainty"),
                                                          ("explanation", f"{name}_explanation")) if data.get(key)]
        value = _readable(field.get("type"), data.get(name), text)
        if field.get("type") == "time_mark" and data.get(f"{name}{forms.NONE_SUFFIX}") is True:
            value = str(field.get("none_label") or "nothing to mark")
        rows.append({"label": field.get("label") or name, "value": value, "extra": extra})
    return rows
