"""How pages show dates, times and durations, the same way on every page.

A date-time is shown ISO-like (``2025-03-01 14:05 UTC``) in a ``<time>`` element: the server writes it
in the platform's time zone and names the zone; ``app.js`` rewrites it into the viewer's own zone
(read from the browser) in the same format. A duration in seconds is shown in words ("45 minutes"), a
share as a percentage ("25.0%"), a note's `code` between backticks as code.
"""

import html
import re
from datetime import datetime

from django import template
from django.utils import timezone
from django.utils.html import format_html
from django.utils.safestring import mark_safe

register = template.Library()

NOTHING = "—"
UNITS = [("day", 86400), ("hour", 3600), ("minute", 60), ("second", 1)]


def when_text(value: datetime, seconds: bool = False) -> str:
    """The date-time in the current time zone, ISO-like, with the zone named."""
    if timezone.is_aware(value):
        value = timezone.localtime(value)
    pattern = "%Y-%m-%d %H:%M:%S" if seconds else "%Y-%m-%d %H:%M"
    zone = value.tzname() or ""
    return f"{value.strftime(pattern)} {zone}".strip()


@register.filter
def when(value, precision: str = ""):
    """``<time>`` for a date-time or an ISO 8601 string (``{{ x|when }}``, or ``{{ x|when:"seconds" }}``);
    "—" for anything else."""
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            return NOTHING
    if not isinstance(value, datetime):
        return NOTHING
    return format_html('<time datetime="{}" data-when="{}">{}</time>', value.isoformat(),
                       "seconds" if precision == "seconds" else "minutes", when_text(value, precision == "seconds"))


def duration_text(seconds) -> str:
    """A number of seconds in words, at most two units: "45 minutes", "1 hour 30 minutes", "2 days"."""
    try:
        remaining = int(round(float(seconds)))
    except (TypeError, ValueError):
        return NOTHING
    if remaining <= 0:
        return "0 seconds"
    parts = []
    for name, size in UNITS:
        count, remaining = divmod(remaining, size)
        if count:
            parts.append(f"{count} {name}{'' if count == 1 else 's'}")
        if len(parts) == 2 or (parts and remaining == 0):
            break
    return " ".join(parts)


@register.filter
def duration(seconds) -> str:
    """``{{ study.lease_seconds|duration }}`` → "45 minutes"."""
    return duration_text(seconds)


@register.filter
def percent(value) -> str:
    """A fraction as a percentage with one decimal (``{{ 0.25|percent }}`` → "25.0%"); "—" for None."""
    try:
        return f"{float(value) * 100:.1f}%"
    except (TypeError, ValueError):
        return NOTHING


CODE_SPAN = re.compile(r"`([^`]+)`")


@register.filter
def code_spans(text) -> str:
    """Plain text of an element's content with its `code` between backticks as ``<code>`` (``<``, ``>`` and
    ``&`` escaped; quotes stay, as they are harmless outside attributes)."""
    return mark_safe(CODE_SPAN.sub(r"<code>\1</code>", html.escape(str(text or ""), quote=False)))  # noqa: S308
