"""The worker attributes that eligibility rules read (`WorkerProfile.attributes`) and the rules a
study sets on them (`Study.required_attributes`).

Known attributes (`KNOWN`): native language (ISO 639-1 code, e.g. "it"), country of upbringing
(ISO 3166 alpha-2 code, e.g. "IT") and age (whole years). Other attribute names may still be used;
their values are compared as they are.

A rule maps an attribute to what it must be:
- a value or a list of allowed values: {"native_language": "it", "country_of_upbringing": ["IT", "CH"]};
- a numeric range, both bounds inclusive and either one optional: {"age": {"min": 18, "max": 65}}.
A worker without the attribute, or with a non-numeric value for a range, is refused.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

RANGE_KEYS = ("min", "max")


@dataclass(frozen=True)
class Attribute:
    name: str
    label: str
    numeric: bool = False
    help: str = ""


KNOWN = {a.name: a for a in (
    Attribute("native_language", gettext_lazy("Native language"), help="ISO 639-1 code, e.g. it"),
    Attribute("country_of_upbringing", gettext_lazy("Country of upbringing"), help="ISO 3166 code, e.g. IT"),
    Attribute("age", gettext_lazy("Age"), numeric=True, help="whole years"),
)}

LANGUAGES = {
    "arabic": "ar", "bengali": "bn", "bulgarian": "bg", "catalan": "ca", "chinese": "zh", "mandarin": "zh",
    "cantonese": "zh", "croatian": "hr", "czech": "cs", "danish": "da", "dutch": "nl", "english": "en",
    "estonian": "et", "finnish": "fi", "french": "fr", "german": "de", "greek": "el", "hebrew": "he",
    "hindi": "hi", "hungarian": "hu", "indonesian": "id", "italian": "it", "japanese": "ja", "korean": "ko",
    "latvian": "lv", "lithuanian": "lt", "malay": "ms", "norwegian": "no", "persian": "fa", "farsi": "fa",
    "polish": "pl", "portuguese": "pt", "romanian": "ro", "russian": "ru", "serbian": "sr", "slovak": "sk",
    "slovenian": "sl", "spanish": "es", "swahili": "sw", "swedish": "sv", "tagalog": "tl", "thai": "th",
    "turkish": "tr", "ukrainian": "uk", "urdu": "ur", "vietnamese": "vi", "welsh": "cy", "albanian": "sq",
}

COUNTRIES = {
    "albania": "AL", "argentina": "AR", "australia": "AU", "austria": "AT", "belgium": "BE", "brazil": "BR",
    "bulgaria": "BG", "canada": "CA", "chile": "CL", "china": "CN", "colombia": "CO", "croatia": "HR",
    "cyprus": "CY", "czech republic": "CZ", "czechia": "CZ", "denmark": "DK", "egypt": "EG", "estonia": "EE",
    "finland": "FI", "france": "FR", "germany": "DE", "greece": "GR", "hungary": "HU", "india": "IN",
    "indonesia": "ID", "ireland": "IE", "israel": "IL", "italy": "IT", "japan": "JP", "kenya": "KE",
    "latvia": "LV", "lithuania": "LT", "luxembourg": "LU", "malta": "MT", "mexico": "MX", "morocco": "MA",
    "netherlands": "NL", "new zealand": "NZ", "nigeria": "NG", "norway": "NO", "pakistan": "PK",
    "philippines": "PH", "poland": "PL", "portugal": "PT", "romania": "RO", "russia": "RU",
    "russian federation": "RU", "san marino": "SM", "serbia": "RS", "slovakia": "SK", "slovenia": "SI",
    "south africa": "ZA", "south korea": "KR", "spain": "ES", "sweden": "SE", "switzerland": "CH",
    "turkey": "TR", "ukraine": "UA", "united kingdom": "GB", "uk": "GB", "united states": "US",
    "united states of america": "US", "usa": "US", "vatican city": "VA", "venezuela": "VE", "vietnam": "VN",
}

_LANGUAGE_CODE = re.compile(r"^[A-Za-z]{2}$")
_COUNTRY_CODE = re.compile(r"^[A-Za-z]{2}$")


class RuleError(ValueError):
    """A rule of the wrong shape."""


def label(name: str) -> str:
    known = KNOWN.get(name)
    return str(known.label) if known else name.replace("_", " ")


def is_range(wanted) -> bool:
    return isinstance(wanted, dict)


def number(value) -> float | None:
    """The value as a finite number (a numeric string counts), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, str):
        try:
            found = float(value.strip())
        except ValueError:
            return None
        return found if math.isfinite(found) else None
    return None


def rule_problems(rules) -> list[str]:
    """What is wrong with a study's rules (empty when they may be saved)."""
    if rules in (None, ""):
        return []
    if not isinstance(rules, dict):
        return ['a JSON object of attribute names and what they must be, e.g. {"native_language": "it", '
                '"age": {"min": 18, "max": 65}}']
    found = []
    for name, wanted in rules.items():
        if not str(name).strip():
            found.append("an attribute name is empty")
        elif is_range(wanted):
            found.extend(f"{name}: {problem}" for problem in _range_problems(wanted))
        elif isinstance(wanted, list):
            if not wanted:
                found.append(f"{name}: list at least one allowed value")
            elif not all(isinstance(v, str | int) and not isinstance(v, bool) for v in wanted):
                found.append(f"{name}: allowed values are texts or whole numbers")
        elif not isinstance(wanted, str | int) or isinstance(wanted, bool):
            found.append(f"{name}: a value, a list of values or a range {{\"min\": …, \"max\": …}}")
    return found


def _range_problems(wanted: dict) -> list[str]:
    strange = sorted(set(wanted) - set(RANGE_KEYS))
    if strange:
        return [f"unknown key{'s' if len(strange) != 1 else ''} {', '.join(strange)} in a range; "
                "a range has min and/or max"]
    if not wanted:
        return ["a range needs min, max or both"]
    bounds = {key: number(wanted[key]) if not isinstance(wanted[key], str) else None for key in wanted}
    bad = [key for key, value in bounds.items() if value is None]
    if bad:
        return [f"{key} must be a number" for key in bad]
    if "min" in bounds and "max" in bounds and bounds["min"] > bounds["max"]:
        return [f"min ({wanted['min']}) is greater than max ({wanted['max']})"]
    return []


def check_rules(rules) -> dict:
    """The rules, or RuleError naming every problem."""
    found = rule_problems(rules)
    if found:
        raise RuleError("; ".join(found))
    return rules or {}


def _bounds_text(wanted: dict) -> str:
    low, high = wanted.get("min"), wanted.get("max")
    if low is not None and high is not None:
        return _("between %(low)s and %(high)s") % {"low": low, "high": high}
    return _("at least %(low)s") % {"low": low} if low is not None else _("at most %(high)s") % {"high": high}


def describe_rule(name: str, wanted) -> str:
    """One rule as a person reads it, e.g. "Age between 18 and 65"."""
    if is_range(wanted):
        return f"{label(name)} {_bounds_text(wanted)}"
    allowed = wanted if isinstance(wanted, list) else [wanted]
    return f"{label(name)}: {' or '.join(map(str, allowed))}"


def in_order(rules) -> list[tuple[str, object]]:
    """A study's rules in one order whatever the database kept (PostgreSQL's JSONB does not keep key
    order): the known attributes in their order, then the others by name."""
    known = list(KNOWN)
    return sorted((rules or {}).items(),
                  key=lambda rule: (known.index(rule[0]) if rule[0] in known else len(known), rule[0]))


def describe(rules) -> list[str]:
    return [describe_rule(name, wanted) for name, wanted in in_order(rules)]


def refusal(rules, attributes: dict) -> str:
    """Why a worker with these attributes fails the rules; empty when they meet every one."""
    for name, wanted in in_order(rules):
        have = attributes.get(name)
        if is_range(wanted):
            value = number(have)
            if have is None or value is None:
                needed = {"attribute": label(name).lower(), "bounds": _bounds_text(wanted)}
                if have is None:
                    return _("This study needs workers with %(attribute)s %(bounds)s; your profile has no "
                             "%(attribute)s.") % needed
                return _("This study needs workers with %(attribute)s %(bounds)s; your profile has no numeric "
                         "%(attribute)s.") % needed
            low, high = (number(wanted[key]) if wanted.get(key) is not None else None for key in RANGE_KEYS)
            if (low is not None and value < low) or (high is not None and value > high):
                return _("This study needs workers with %(attribute)s %(bounds)s.") % {
                    "attribute": label(name).lower(), "bounds": _bounds_text(wanted)}
            continue
        allowed = wanted if isinstance(wanted, list) else [wanted]
        if have not in allowed:
            return _("This study needs workers with %(attribute)s %(values)s.") % {
                "attribute": label(name).lower(), "values": f" {_('or')} ".join(map(str, allowed))}
    return ""


def normalise(name: str, value):
    """An attribute's value as it is kept: language and country names become ISO codes, age a whole
    number. ValueError names what cannot be read."""
    text = str(value if value is not None else "").strip()
    if not text:
        raise ValueError("empty")
    if name == "native_language":
        code = LANGUAGES.get(text.lower())
        if code:
            return code
        if _LANGUAGE_CODE.match(text):
            return text.lower()
        raise ValueError(f"unknown language {text!r}")
    if name == "country_of_upbringing":
        code = COUNTRIES.get(text.lower())
        if code:
            return code
        if _COUNTRY_CODE.match(text):
            return text.upper()
        raise ValueError(f"unknown country {text!r}")
    if KNOWN.get(name) and KNOWN[name].numeric:
        found = number(text)
        if found is None or found != int(found):
            raise ValueError(f"{text!r} is not a whole number")
        return int(found)
    return text
