"""Forms of the curators' worker pages: one worker's known attributes, the import of a platform's
demographics file, and a study's attribute rules as rows (attribute, allowed values or min/max)."""

from __future__ import annotations

from django import forms

from annotation.crowd import attribute_import, worker_attributes
from annotation.crowd.models import WorkerProfile

BLANK_RULE_ROWS = 2


class WorkerAttributesForm(forms.Form):
    """The known attributes of one worker; an empty value removes it."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for attribute in worker_attributes.KNOWN.values():
            self.fields[attribute.name] = forms.CharField(required=False, label=attribute.label,
                                                          help_text=attribute.help, max_length=100)


class AttributeImportForm(forms.Form):
    file = forms.FileField(label="Demographics export (CSV)",
                           help_text="one row per participant, e.g. Prolific's demographic data export")
    platform = forms.ChoiceField(choices=WorkerProfile.Platform.choices, initial=WorkerProfile.Platform.PROLIFIC,
                                 help_text="workers are matched by their id on this platform")
    mapping = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 4}), label="Mapping (optional)",
        help_text="Column=attribute, one a line; empty: " + ", ".join(
            f"{column}={attribute}" for column, attribute in attribute_import.DEFAULT_MAPPING.items()))

    def clean_mapping(self):
        try:
            return attribute_import.parse_mapping((self.cleaned_data.get("mapping") or "").splitlines())
        except attribute_import.ImportRefused as exc:
            raise forms.ValidationError(exc.message) from None


def _bound(text: str, name: str, errors: list[str], row: int):
    text = (text or "").strip()
    if not text:
        return None
    value = worker_attributes.number(text)
    if value is None:
        errors.append(f"rule {row}: {name} must be a number (got {text!r})")
        return None
    return int(value) if value == int(value) else value


def _values(attribute: str, text: str):
    allowed = [v.strip() for v in (text or "").split(",") if v.strip()]
    if attribute in worker_attributes.KNOWN:
        allowed = [worker_attributes.normalise(attribute, v) for v in allowed]
    allowed = list(dict.fromkeys(allowed))
    return allowed[0] if len(allowed) == 1 else allowed


class AttributeRulesForm(forms.Form):
    """A study's attribute rules as rows: an attribute with allowed values (comma-separated) or a
    min and/or max. `rules` holds the rules the rows give; `has_changed()` says whether they were edited."""

    prefix = "rule"
    MARK = "rule-rows"  # posted with the rows: a request without it leaves the rules as they are

    def __init__(self, *args, rules: dict | None = None, **kwargs):
        rules = rules or {}
        initial = {}
        for row, (name, wanted) in enumerate(worker_attributes.in_order(rules)):
            initial[f"attribute_{row}"] = name
            if worker_attributes.is_range(wanted):
                initial[f"min_{row}"] = str(wanted.get("min", ""))
                initial[f"max_{row}"] = str(wanted.get("max", ""))
            else:
                initial[f"values_{row}"] = ", ".join(map(str, wanted if isinstance(wanted, list) else [wanted]))
        kwargs.setdefault("initial", initial)
        super().__init__(*args, **kwargs)
        self.rows = len(rules) + BLANK_RULE_ROWS
        for row in range(self.rows):
            self.fields[f"attribute_{row}"] = forms.CharField(
                required=False, label="Attribute", max_length=64,
                widget=forms.TextInput(attrs={"list": "known-attributes", "aria-label": f"Rule {row + 1} attribute"}))
            for name, text, length in (("values", "allowed values", 500), ("min", "min", 20), ("max", "max", 20)):
                self.fields[f"{name}_{row}"] = forms.CharField(
                    required=False, label=text.capitalize(), max_length=length,
                    widget=forms.TextInput(attrs={"aria-label": f"Rule {row + 1} {text}"}))
        self.rules = dict(rules)

    def row_fields(self):
        return [[self[f"{name}_{row}"] for name in ("attribute", "values", "min", "max")] for row in range(self.rows)]

    def clean(self):
        cleaned = super().clean()
        rules, errors = {}, []
        for row in range(self.rows):
            name = (cleaned.get(f"attribute_{row}") or "").strip()
            values = cleaned.get(f"values_{row}") or ""
            low = _bound(cleaned.get(f"min_{row}"), "min", errors, row + 1)
            high = _bound(cleaned.get(f"max_{row}"), "max", errors, row + 1)
            given = values.strip() or low is not None or high is not None
            if not name:
                if given:
                    errors.append(f"rule {row + 1}: name the attribute")
                continue
            if name in rules:
                errors.append(f"rule {row + 1}: {name} has a rule already")
            elif values.strip() and (low is not None or high is not None):
                errors.append(f"rule {row + 1}: give allowed values or a range, not both")
            elif low is not None or high is not None:
                rules[name] = {key: bound for key, bound in (("min", low), ("max", high)) if bound is not None}
            elif values.strip():
                try:
                    rules[name] = _values(name, values)
                except ValueError as exc:
                    errors.append(f"rule {row + 1}: {exc}")
            else:
                errors.append(f"rule {row + 1}: give {name} allowed values or a min and/or max")
        errors.extend(worker_attributes.rule_problems(rules) if not errors else [])
        for error in errors:
            self.add_error(None, error)
        self.rules = rules
        return cleaned
