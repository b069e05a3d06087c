"""The reviews of the staged-reveal claims a BlackSwanSuite version was built from: people's decisions on its
items (the benchmark's registry hook, `human_decisions`).

A version built from a staged study (`annotation.benchmarks.blackswan.versions.staged_pairs`) names the claim each video
came from in its `video` item: `source.built_by.origin` is `claim_origin(study, claim)`, "study <slug>, claim
<id>". The video's MCQ and Y/N items (same `id`) come from the same claim. A reviewer's approval or rejection
of that claim (`annotation.decisions.claim_reviews`, from the claim's history) is a decision on all of them, so
a claim rejected after the preview was built keeps its video and questions out of the frozen version.
"""

from __future__ import annotations

import re

from annotation import decisions

QUESTION = "the staged answers"
_ORIGIN = re.compile(r"study (?P<study>\S+), claim (?P<claim>\d+)")


def claim_origin(study_slug: str, claim_id: int) -> str:
    """How a preview names the staged claim a record came from."""
    return f"study {study_slug}, claim {claim_id}"


def claim_of(origin) -> int | None:
    """The id of the staged claim an origin names, or None (a release record, a file)."""
    found = _ORIGIN.fullmatch(origin) if isinstance(origin, str) else None
    return int(found["claim"]) if found else None


def _origin(payload: dict):
    source = payload.get("source") if isinstance(payload.get("source"), dict) else {}
    built_by = source.get("built_by") if isinstance(source.get("built_by"), dict) else {}
    return built_by.get("origin")


def human_decisions(version) -> list[decisions.Decision]:
    """The reviews of the staged claims the version's videos and their questions came from."""
    items = list(version.items.values_list("pk", "payload"))
    claim_of_video = {payload.get("id"): claim for _pk, payload in items
                      if payload.get("kind") == "video" and (claim := claim_of(_origin(payload))) is not None}
    item_claims = {pk: claim_of_video[payload.get("id")] for pk, payload in items
                   if payload.get("id") in claim_of_video}
    return decisions.claim_reviews(item_claims, QUESTION)
