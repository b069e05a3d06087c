"""Human-judgment forms configured per study, validated on the server.

A study's `form_schema` is {"fields": [field, ...]}. Field types:
- single_choice: {"name", "label", "options": [...] | "options_from": "payload key",
                  "explanation": "none"|"optional"|"required", "certainty": true|false,
                  "required": true|false (default true; an optional choice left open is no answer)}
- multi_select:  {"name", "label", "candidates_from": "payload key" | "options": [...], "shuffle": true,
                  "min_selected": 0}  (candidates are shown in an order recorded per worker)
- likert:        {"name", "label", "min": 1, "max": 5, "labels": {"1": "…", "5": "…"}}
- free_text:     {"name", "label", "min_length": 0, "max_length": 2000}
- yes_no_statements: {"name", "label", "statements_from": "payload key" | "statements": [...]}
- time_mark:     {"name", "label", "duration_from": "payload key" | "max": seconds, "fps_from": "payload key",
                  "none_label": "…" (optional: a checkbox saying there is nothing to mark), "required": true}
                 (a moment of the item's video in seconds, from 0 to its duration; with the checkbox ticked
                 the answer is null and `<name>_none` is true)
Options and candidates are strings, or objects {"id", "text"} (ids are what answers store).
"""

import hashlib
import math
import random

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from annotation.crowd.errors import InvalidSubmission

CERTAINTY = ["certain", "somewhat certain", "uncertain"]
CERTAINTY_LABELS = {"certain": gettext_lazy("certain"), "somewhat certain": gettext_lazy("somewhat certain"),
                    "uncertain": gettext_lazy("uncertain")}
FIELD_TYPES = {"single_choice", "multi_select", "likert", "free_text", "yes_no_statements", "time_mark"}
NONE_SUFFIX = "_none"  # a time_mark's side answer: nothing to mark


def _choices(field: dict, payload: dict, key_list: str, key_from: str) -> list[dict]:
    raw = field.get(key_list)
    if raw is None and field.get(key_from):
        raw = payload.get(field[key_from], [])
    out = []
    for index, entry in enumerate(raw or []):
        if isinstance(entry, dict):
            out.append({"id": str(entry.get("id", index)), "text": str(entry.get("text", ""))})
        else:
            out.append({"id": str(entry), "text": str(entry)})
    return out


def validate_schema(schema: dict) -> list[str]:
    problems = []
    fields = schema.get("fields") if isinstance(schema, dict) else None
    if not isinstance(fields, list) or not fields:
        return ["the form needs a non-empty 'fields' list"]
    names = set()
    for index, field in enumerate(fields):
        name = field.get("name") if isinstance(field, dict) else None
        if not name or not isinstance(name, str):
            problems.append(f"field {index + 1} has no name")
            continue
        if name in names:
            problems.append(f"field name '{name}' is used twice")
        names.add(name)
        if not isinstance(field.get("type"), str) or field["type"] not in FIELD_TYPES:
            problems.append(f"field '{name}' has unknown type {field.get('type')!r}")
        if field.get("type") == "likert":
            problems.extend(_likert_problems(name, field))
    return problems


def _likert_problems(name: str, field: dict) -> list[str]:
    try:
        low, high = int(field.get("min", 1)), int(field.get("max", 5))
    except (TypeError, ValueError):
        return [f"field '{name}': min and max must be whole numbers"]
    return [f"field '{name}': min must be below max"] if low >= high else []


def unknown_fields(schema: dict, data: dict) -> dict[str, str]:
    """Keys of `data` (answers or a draft) that are no answer of the form: field → "unknown field"."""
    known = set()
    for field in (schema or {}).get("fields", []):
        known |= {field["name"], f"{field['name']}_explanation", f"{field['name']}_certainty"}
        if field.get("type") == "time_mark":
            known.add(f"{field['name']}{NONE_SUFFIX}")
    return dict.fromkeys(sorted(set(data) - known), _("unknown field"))


def presentation_for(schema: dict, payload: dict, *, seed: str) -> dict:
    """What one worker is shown: the shuffled order of each shuffled field, seeded and recorded."""
    orders = {}
    for field in (schema or {}).get("fields", []):
        if field.get("type") == "multi_select" and field.get("shuffle", True):
            ids = [c["id"] for c in _choices(field, payload, "options", "candidates_from")]
            rng = random.Random(int(hashlib.sha256(f"{seed}:{field['name']}".encode()).hexdigest()[:12], 16))
            rng.shuffle(ids)
            orders[field["name"]] = ids
    return {"orders": orders} if orders else {}


def render_fields(schema: dict, payload: dict, presentation: dict, values: dict | None = None) -> list[dict]:
    """The fields as the template draws them, in the worker's order, with saved values filled in."""
    values = values or {}
    out = []
    for field in (schema or {}).get("fields", []):
        kind = field.get("type")
        entry = {**field, "value": values.get(field["name"]), "input_name": field["name"]}
        if kind == "single_choice":
            entry["choices"] = _choices(field, payload, "options", "options_from")
            entry["certainty_levels"] = CERTAINTY if field.get("certainty") else []
        elif kind == "multi_select":
            choices = {c["id"]: c for c in _choices(field, payload, "options", "candidates_from")}
            order = (presentation or {}).get("orders", {}).get(field["name"], list(choices))
            entry["choices"] = [choices[i] for i in order if i in choices]
        elif kind == "likert":
            low, high = int(field.get("min", 1)), int(field.get("max", 5))
            labels = field.get("labels", {})
            entry["scale"] = [{"value": v, "label": labels.get(str(v), "")} for v in range(low, high + 1)]
        elif kind == "yes_no_statements":
            entry["statements"] = _choices(field, payload, "statements", "statements_from")
        elif kind == "time_mark":
            entry["duration"] = time_mark_limit(field, payload)
            entry["fps"] = _positive((payload or {}).get(field["fps_from"])) if field.get("fps_from") else None
            entry["none"] = values.get(f"{field['name']}{NONE_SUFFIX}") is True
        out.append(entry)
    return out


def validate(schema: dict, payload: dict, data) -> dict:
    """Return the cleaned answers or raise InvalidSubmission with a message per field."""
    if not isinstance(data, dict):
        raise InvalidSubmission(_("The answers must be a JSON object."))
    errors, clean = {}, {}
    for field in (schema or {}).get("fields", []):
        name, kind = field["name"], field.get("type")
        value = data.get(name)
        try:
            clean.update(_CLEANERS[kind](field, payload, value, data))
        except ValueError as exc:
            errors[name] = str(exc)
    errors.update(unknown_fields(schema, data))
    if errors:
        raise InvalidSubmission(_("Some answers are missing or invalid."), details=errors)
    return clean


def validate_questions(schema: dict, payload: dict, data, questions, summary: str) -> dict:
    """`validate` for a form of numbered questions: an unanswered question among `questions` says "answer
    this question", and the refusal's message is `summary`."""
    try:
        return validate(schema, payload, data)
    except InvalidSubmission as exc:
        if not isinstance(exc.details, dict):
            raise
        unanswered = _("choose one of the options")
        errors = {name: (_("answer this question") if name in questions and message == unanswered else message)
                  for name, message in exc.details.items()}
        raise InvalidSubmission(summary, details=errors) from None


def _clean_single(field, payload, value, data):
    ids = [c["id"] for c in _choices(field, payload, "options", "options_from")]
    if value in (None, "") and field.get("required", True) is False:
        return {}
    if value is None or str(value) not in ids:
        raise ValueError(_("choose one of the options"))
    out = {field["name"]: str(value)}
    explanation_mode = field.get("explanation", "none")
    if explanation_mode != "none":
        text = str(data.get(f"{field['name']}_explanation") or "").strip()
        if explanation_mode == "required" and not text:
            raise ValueError(_("an explanation is required"))
        if len(text) > int(field.get("max_length", 2000)):
            raise ValueError(_("the explanation is too long"))
        out[f"{field['name']}_explanation"] = text
    if field.get("certainty"):
        certainty = data.get(f"{field['name']}_certainty")
        if certainty not in CERTAINTY:
            raise ValueError(_("say how certain you are"))
        out[f"{field['name']}_certainty"] = certainty
    return out


def _clean_multi(field, payload, value, data):
    ids = {c["id"] for c in _choices(field, payload, "options", "candidates_from")}
    if value is None:
        value = []
    if not isinstance(value, list) or not all(str(v) in ids for v in value):
        raise ValueError(_("select among the listed candidates only"))
    chosen = sorted({str(v) for v in value})
    if len(chosen) < int(field.get("min_selected", 0)):
        raise ValueError(_("select at least %(count)s") % {"count": field.get("min_selected")})
    return {field["name"]: chosen}


def _clean_likert(field, payload, value, data):
    low, high = int(field.get("min", 1)), int(field.get("max", 5))
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise ValueError(_("pick a value from %(low)s to %(high)s") % {"low": low, "high": high}) from None
    if isinstance(value, bool) or not low <= number <= high or str(value).strip() != str(number):
        raise ValueError(_("pick a value from %(low)s to %(high)s") % {"low": low, "high": high})
    return {field["name"]: number}


def _clean_text(field, payload, value, data):
    text = "" if value is None else str(value).strip()
    low, high = int(field.get("min_length", 1)), int(field.get("max_length", 2000))
    if len(text) < low:
        raise ValueError(_("this answer is required") if low <= 1
                         else _("write at least %(count)s characters") % {"count": low})
    if len(text) > high:
        raise ValueError(_("write at most %(count)s characters") % {"count": high})
    return {field["name"]: text}


def _clean_yes_no(field, payload, value, data):
    ids = [s["id"] for s in _choices(field, payload, "statements", "statements_from")]
    if not isinstance(value, dict) or set(map(str, value)) != set(ids):
        raise ValueError(_("answer yes or no for every statement"))
    if any(v not in ("yes", "no") for v in value.values()):
        raise ValueError(_("answer yes or no for every statement"))
    return {field["name"]: {str(k): v for k, v in value.items()}}


def _positive(value) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        number = float(value)
    except ValueError:
        return None
    return number if math.isfinite(number) and number > 0 else None


def time_mark_limit(field: dict, payload: dict) -> float | None:
    """The latest moment a time_mark field takes: the item's duration (`duration_from`), else `max`."""
    if field.get("duration_from"):
        found = _positive((payload or {}).get(field["duration_from"]))
        if found is not None:
            return found
    return _positive(field.get("max"))


def _ticked(value) -> bool:
    return value is True or (isinstance(value, str) and value.strip().lower() in ("true", "1", "on", "yes"))


def _clean_time_mark(field, payload, value, data):
    name, limit = field["name"], time_mark_limit(field, payload)
    if field.get("none_label") and _ticked(data.get(f"{name}{NONE_SUFFIX}")):
        if value not in (None, ""):
            raise ValueError(_("either mark the moment or say there is nothing to mark, not both"))
        return {name: None, f"{name}{NONE_SUFFIX}": True}
    if value in (None, ""):
        if field.get("required", True) is False:
            return {}
        raise ValueError(_("mark the moment in the video"))
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ValueError(_("the mark must be a number of seconds"))
    try:
        seconds = float(value)
    except ValueError:
        raise ValueError(_("the mark must be a number of seconds")) from None
    if not math.isfinite(seconds) or seconds < 0 or (limit is not None and seconds > limit + 1e-6):
        if limit is None:
            raise ValueError(_("the mark must be 0 s or later"))
        raise ValueError(_("mark a moment from 0 to %(end)s s") % {"end": f"{limit:.3f}"})
    clean = {name: round(seconds, 4)}
    if field.get("none_label"):
        clean[f"{name}{NONE_SUFFIX}"] = False
    return clean


_CLEANERS = {
    "single_choice": _clean_single,
    "multi_select": _clean_multi,
    "likert": _clean_likert,
    "free_text": _clean_text,
    "yes_no_statements": _clean_yes_no,
    "time_mark": _clean_time_mark,
}
