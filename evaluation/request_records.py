"""What an exported request says about itself: the JSON line of `manage.py export_requests` (`request_line`)
and the records of the media it shows (`media_record`, read from the item's library files by
`item_assets`). The kit formats (`evaluation.kits`) build their rows from the same lines."""

from __future__ import annotations


def item_assets(item) -> dict:
    """(kind, asset id) → the library asset of each medium linked to an item (its media prefetched)."""
    return {(kind, asset.pk): asset for link in item.media.all()
            for kind, asset in (("video", link.video), ("image", link.image)) if asset is not None}


def media_record(medium, assets: dict) -> dict:
    asset = assets.get((medium.kind, medium.asset_id))
    return {"role": medium.role, "kind": medium.kind, "asset_id": medium.asset_id,
            "file": asset.file.name if asset is not None else None,
            "checksum": asset.checksum if asset is not None else None,
            "segment": list(medium.segment) if medium.segment else None, "hidden": medium.hidden,
            "label": medium.label}


def request_line(request, assets: dict, setting: dict) -> dict:
    line = {"request_id": request.request_id, "item_id": request.item_id, "variant": request.variant,
            "source": request.source, "text": request.text}
    if request.options:
        line["options"] = dict(request.options)
    shown = request.extra.get("shown")
    if request.variant == "triplet" and shown:
        line["order"] = "".join(role.removeprefix("hypothesis") for role in shown[1:])
    if request.variant == "pairs" and "hypothesis" in request.extra:
        line["hypothesis"] = request.extra["hypothesis"]
    if request.variant == "vsv" and "order" in request.extra:
        line["statement_order"] = list(request.extra["order"])
    line["gold"] = request.gold
    line["prompt"] = request.prompt
    if request.context_prompt:
        line["context_prompt"] = request.context_prompt
    if request.describe_prompt:
        line["describe_prompt"] = request.describe_prompt
    line.update(answer_type=request.answer_type, n_samples=request.n_samples,
                media=[media_record(medium, assets) for medium in request.media], **setting)
    return line
