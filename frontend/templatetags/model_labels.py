"""`short_model`: a model id or local path short enough for a table cell — its last one or two path
segments after "…/" when it is long (the page puts the full id in the element's `title`)."""

from django import template

register = template.Library()

LIMIT = 32


@register.filter
def short_model(model_id, limit: int = LIMIT) -> str:
    text = str(model_id or "").rstrip("/")
    if len(text) <= limit:
        return text
    parts = text.split("/")
    tail = parts[-1]
    if len(parts) > 2 and len(parts[-2]) + len(tail) + 3 <= limit:
        tail = f"{parts[-2]}/{tail}"
    shown = f"…/{tail}" if len(parts) > 1 else tail
    return shown if len(shown) <= limit else "…" + text[-(limit - 1):]
