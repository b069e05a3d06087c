"""Answer keys of gold and attention items: what a key may hold (checked whenever a key is set: the API, the
study's items page, the admin) and how a worker's answers are checked against it.

A key is `{"fields": {field name: expected}}` (other top-level keys are kept as they are, e.g. `source`). For
each field, `expected` is either
- the expected answer itself (the short form): a text, number or boolean is compared `exact`, a list
  `set_equal`, an object `mapping`; or
- a rule: `{"answer": …, "rule": …, "tolerance": …}` (an object whose keys are among these, with `answer`):
  `exact` (the default: the same text, ignoring case and surrounding spaces), `one_of` (answer: a list),
  `set_equal` (a list; the worker's answer a list with the same members), `within` (a number, and a
  `tolerance` of at least 0), `contains` (the worker's text contains it, ignoring case), `mapping` (an
  object, equal to the worker's).
A field the study's form does not have is refused (for a study whose workers fill in its form). A gold or
attention item needs a key with at least one field.
"""

import logging
import numbers

from annotation.crowd import forms, kinds
from annotation.crowd.models import StudyItem

logger = logging.getLogger(__name__)

RULES = ("exact", "one_of", "set_equal", "within", "contains", "mapping")
RULE_KEYS = frozenset({"answer", "rule", "tolerance"})
NEEDS_FIELDS = "gold and attention items need an answer_key with 'fields'"


def field_rule(expected) -> dict:
    """The rule of one keyed field, from either form (see the module's text)."""
    if isinstance(expected, dict) and "answer" in expected and set(expected) <= RULE_KEYS:
        return {"rule": "exact", **expected}
    if isinstance(expected, list):
        return {"rule": "set_equal", "answer": expected}
    if isinstance(expected, dict):
        return {"rule": "mapping", "answer": expected}
    return {"rule": "exact", "answer": expected}


def _number(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _rule_problem(rule: dict) -> str | None:
    kind, answer = rule.get("rule"), rule.get("answer")
    if kind not in RULES:
        return f"unknown rule {kind!r} (the rules: {', '.join(RULES)})"
    if kind in ("one_of", "set_equal") and not (isinstance(answer, list) and answer):
        return f"the rule {kind!r} needs a non-empty list as its answer"
    if kind == "mapping" and not (isinstance(answer, dict) and answer):
        return "the rule 'mapping' needs a non-empty object as its answer"
    if kind in ("exact", "contains") and not (isinstance(answer, str | bool) or _number(answer)):
        return f"the rule {kind!r} needs a text, a number or true/false as its answer (got {answer!r})"
    tolerance = rule.get("tolerance", 0)
    if kind == "within" and not (_number(answer) and _number(tolerance) and tolerance >= 0):
        return "the rule 'within' needs a number as its answer and a tolerance of at least 0"
    if kind != "within" and "tolerance" in rule:
        return f"a tolerance is for the rule 'within', not {kind!r}"
    return None


def problems(answer_key, *, role: str = StudyItem.Role.REGULAR, study=None) -> list[str]:
    """What is wrong with an item's answer key (empty when nothing is); `study` names its form's fields."""
    if not isinstance(answer_key, dict):
        return ["answer_key must be a JSON object"]
    if "fields" not in answer_key or answer_key["fields"] in ({}, None):
        return [NEEDS_FIELDS] if role != StudyItem.Role.REGULAR else []
    fields = answer_key["fields"]
    if not isinstance(fields, dict):
        return ["answer_key 'fields' must be an object: field name → the expected answer, or a rule "
                '{"answer": …, "rule": …}']
    found = [f"answer_key field {name!r}: {text}" for name, expected in fields.items()
             if (text := _rule_problem(field_rule(expected)))]
    if study is not None and kinds.of(study).uses_form and (study.form_schema or {}).get("fields"):
        names = sorted(forms.unknown_fields(study.form_schema, fields))
        if names:
            known = ", ".join(field.get("name", "?") for field in study.form_schema["fields"])
            found += [f"answer_key field {name!r} is not a field of the study's form (its fields: {known})"
                      for name in names]
    return found


def _compare(rule: dict, value) -> bool:
    kind, expected = rule["rule"], rule["answer"]
    if kind == "exact":
        return str(value).strip().lower() == str(expected).strip().lower()
    if kind == "one_of":
        return str(value).strip().lower() in {str(e).strip().lower() for e in expected}
    if kind == "set_equal":
        return isinstance(value, list) and {str(v) for v in value} == {str(e) for e in expected}
    if kind == "within":
        try:
            return abs(float(value) - float(expected)) <= float(rule.get("tolerance", 0))
        except (TypeError, ValueError):
            return False
    if kind == "contains":
        return str(expected).strip().lower() in str(value).lower()
    if kind == "mapping":
        return isinstance(value, dict) and {str(k): v for k, v in value.items()} == {
            str(k): v for k, v in expected.items()}
    raise ValueError(f"unknown comparison rule {kind!r}")


def passes(answer_key, data: dict) -> bool | None:
    """Whether `data` matches every keyed field (False for a key without fields). None when the key cannot be
    read (one stored before keys were checked): the check is then left undecided rather than failing the
    submission."""
    fields = answer_key.get("fields") if isinstance(answer_key, dict) else None
    if not fields:
        return False
    if not isinstance(fields, dict) or any(_rule_problem(field_rule(expected)) for expected in fields.values()):
        logger.warning("An answer key that cannot be read was left undecided: %r", answer_key)
        return None
    return all(_compare(field_rule(expected), data.get(name)) for name, expected in fields.items())
