"""What the version page shows: a version's items, searched and paged, each payload as labelled
fields (the labels come from the benchmark's payload schema: a field's title, else its name in
words), previews of the media each item uses (permission-checked file URLs) and the benchmark's own
pages about the version (`BenchmarkDefinition.version_links`)."""

import json

from django.core.paginator import Paginator
from django.db.models import CharField, Q
from django.db.models.functions import Cast

from annotation import selectors
from annotation.benchmarks import registry
from annotation.crowd import review_media

ITEMS_PER_PAGE = 25


def _label(name: str, field) -> str:
    title = getattr(field, "title", None) if field is not None else None
    return title or str(name).replace("_", " ").capitalize()


def _text(value) -> tuple[str, str]:
    """(how to show it, the value as text): a list of plain values joined, a table kept as JSON."""
    if value is None:
        return "text", "—"
    if isinstance(value, bool):
        return "text", "yes" if value else "no"
    if isinstance(value, list) and all(isinstance(v, str | int | float) for v in value):
        return "list", [str(v) for v in value]
    if isinstance(value, dict | list):
        return "json", json.dumps(value, indent=2, ensure_ascii=False)
    return "text", str(value)


def readable_payload(benchmark_slug: str, payload: dict) -> list[dict]:
    """A payload as [{label, kind, value}] in the schema's field order, extra fields after; `kind`
    (the record kind) is left out: the page shows it in its own column."""
    payload = payload if isinstance(payload, dict) else {}
    try:
        model = registry.get(benchmark_slug).kinds.get(payload.get("kind"))
    except registry.UnknownBenchmark:
        model = None
    fields = dict(model.model_fields) if model is not None else {}
    names = [name for name in fields if name in payload] + [name for name in payload if name not in fields]
    rows = []
    for name in names:
        if name == "kind":
            continue
        shown, value = _text(payload[name])
        rows.append({"name": name, "label": _label(name, fields.get(name)), "kind": shown, "value": value})
    return rows


def item_media(item) -> list[dict]:
    """Previews of the media an item uses, under their roles."""
    out = []
    for link in item.media.all():
        if link.video_id:
            out.append(review_media.video_entry(link.video, link.role))
        elif link.image_id:
            out.append(review_media.image_entry(link.image, link.role))
    return out


def version_page(version, query: str = "", page_number=None) -> dict:
    """One page of a version's items matching `query` (in the external id or anywhere in the payload)."""
    items = selectors.version_items(version).prefetch_related("media__video", "media__image").order_by("pk")
    query = (query or "").strip()
    if query:
        items = items.annotate(payload_text=Cast("payload", CharField())).filter(
            Q(external_id__icontains=query) | Q(payload_text__icontains=query))
    page = Paginator(items, ITEMS_PER_PAGE).get_page(page_number)
    for item in page:
        item.fields = readable_payload(version.benchmark.slug, item.payload)
        item.previews = item_media(item)
    return {"version": version, "items": page, "query": query, "links": version_links(version)}


def version_links(version) -> list[tuple[str, str]]:
    """(label, URL) of the pages the version's benchmark links its versions to (its curation pages)."""
    try:
        return registry.get(version.benchmark.slug).version_links(version)
    except registry.UnknownBenchmark:
        return []
