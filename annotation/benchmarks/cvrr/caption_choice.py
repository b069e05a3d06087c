"""The caption each CVRR-ES video's questions are generated from (seeds/003 §3.2 Stage 1 → Stage 2).

Once both annotators of a captioning study (`captions`) have written their caption of a pool video, a
curator compares them beside the video and either picks one as it is or writes a merged text.
`choose_caption` saves it as the video item's payload `caption`, records where it came from in
`CurationRecord.working["caption"] = {"from": [submission ids], "how": "picked" | "merged", "by",
"at"}` and moves the item to stage `stages.CAPTIONED`. A later choice replaces an earlier one while
the pool is unfrozen.

A curator may also write a video's caption themselves, from watching it, with no annotators' captions
(`write_caption`: `"how": "written"`, `"from": []`, with a note saying where the text comes from, e.g.
the demo's captions).

A caption counts while its submission is not rejected (awaiting review, not sampled, or approved),
with a reviewer's correction when there is one.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone

from annotation import curation_stages
from annotation.benchmarks.cvrr import stages, video_pool
from annotation.benchmarks.cvrr.captions import CAPTIONERS, FORM, STUDY_KIND
from annotation.benchmarks.cvrr.pools import CurationError
from annotation.crowd import forms
from annotation.crowd.errors import InvalidSubmission
from annotation.crowd.models import Claim, Study, Submission
from annotation.curation_models import CurationRecord
from annotation.models import BenchmarkItem, FrozenError
from annotation.payloads import validate_payload
from config.roles import ADMIN, CURATOR, has_role

HOW = ("picked", "merged")
WRITTEN = "written"
COUNTED = (Claim.Status.SUBMITTED, Claim.Status.APPROVED)


@dataclass
class Caption:
    submission: Submission
    text: str

    @property
    def id(self) -> int:
        return self.submission.pk


def caption_submissions(item_ids=None):
    """Submissions of captioning studies that count (not rejected), oldest first."""
    found = Submission.objects.filter(claim__study__step_kind=STUDY_KIND, claim__status__in=COUNTED)
    if item_ids is not None:
        found = found.filter(claim__item__benchmark_item_id__in=list(item_ids))
    return found.select_related("claim__worker", "claim__study", "claim__item").order_by("submitted_at", "pk")


def captions(item: BenchmarkItem) -> list[Caption]:
    return [Caption(submission, str((submission.final_data or {}).get("caption", "")))
            for submission in caption_submissions([item.pk])]


def caption_studies():
    """The captioning studies, newest first."""
    return Study.objects.filter(step_kind=STUDY_KIND).order_by("-created_at")


def captioning_study(slug: str) -> Study:
    """A captioning study by its slug; CurationError 404 for anything else."""
    found = caption_studies().filter(slug=slug).first()
    if found is None:
        raise CurationError(f"There is no CVRR-ES captioning study {slug!r}.", status=404)
    return found


def listed(study: Study | None = None, dimension_names: dict | None = None) -> dict:
    """The pool's videos that have captions (of `study` when given): `ready` those with both captions in
    (at least `CAPTIONERS`), `waiting` the others, each with its caption count and chosen caption."""
    counted = Q(studyitem__claims__status__in=COUNTED, studyitem__study__step_kind=STUDY_KIND)
    if study is not None:
        counted &= Q(studyitem__study=study)
    items = video_pool.pool_items().annotate(n_captions=Count("studyitem__claims", filter=counted, distinct=True))
    if study is not None:
        items = items.filter(studyitem__study=study).distinct()
    ready, waiting = [], []
    for item in items:
        row = {**video_pool.row(item, dimension_names), "captions": item.n_captions}
        if item.n_captions >= CAPTIONERS:
            ready.append(row)
        elif study is not None or item.n_captions:
            waiting.append(row)
    return {"ready": ready, "waiting": waiting}


def _ids(raw) -> list[int]:
    values = raw if isinstance(raw, list | tuple) else [raw]
    ids = []
    for value in values:
        text = str(value).strip()
        if not text.isdigit():
            raise CurationError(f"Captions are named by their submission numbers, not {text[:20]!r}.")
        ids.append(int(text))
    if not ids:
        raise CurationError("Name the caption(s) the chosen caption comes from.")
    return sorted(set(ids))


def _merged_text(text) -> str:
    try:
        return forms.validate(FORM, {}, {"caption": text if isinstance(text, str) else ""})["caption"]
    except InvalidSubmission as exc:
        raise CurationError(f"The merged caption: {exc.details.get('caption', exc.message)}.") from None


def choose_caption(item_id, user, *, how: str, sources, text: str = "") -> BenchmarkItem:
    """Save the caption of pool video `item_id` used for QA generation: the caption of submission
    `sources` as it is (`how` "picked", one submission), or `text` written from the captions of
    `sources` ("merged"). 403 for a user who is no curator, 404 for an item that is no pool video,
    400 for an unknown `how`, a submission that is no caption of this video or a merged text out of
    the length limits, 409 when the pool is frozen; nothing is written then."""
    if not has_role(user, CURATOR, ADMIN):
        raise CurationError("Only curators choose captions.", status=403)
    item = video_pool.pool_item(item_id)
    if item.version.frozen:
        raise CurationError(f"Version {item.version} is frozen: its videos' captions can no longer change.",
                            status=409)
    if how not in HOW:
        raise CurationError(f"Pick one caption or merge them: how must be one of {', '.join(HOW)}.")
    ids = _ids(sources)
    by_id = {caption.id: caption for caption in captions(item)}
    foreign = [number for number in ids if number not in by_id]
    if foreign:
        raise CurationError(f"Submission #{foreign[0]} is not a caption of {item.external_id}.")
    if how == "picked":
        if len(ids) != 1:
            raise CurationError("Pick exactly one caption (or merge them into a new text).")
        chosen = by_id[ids[0]].text
    else:
        chosen = _merged_text(text)
    return _save(item, user, chosen, {"from": ids, "how": how})


def write_caption(item_id, user, text: str, *, note: str) -> BenchmarkItem:
    """Save a caption the curator wrote from watching pool video `item_id` (no annotators' captions), with
    `note` saying where the text comes from. The same checks and refusals as `choose_caption`."""
    if not has_role(user, CURATOR, ADMIN):
        raise CurationError("Only curators choose captions.", status=403)
    item = video_pool.pool_item(item_id)
    if item.version.frozen:
        raise CurationError(f"Version {item.version} is frozen: its videos' captions can no longer change.",
                            status=409)
    note = (note or "").strip()
    if not note:
        raise CurationError("Say where the written caption comes from.")
    return _save(item, user, _merged_text(text), {"from": [], "how": WRITTEN, "note": note})


def _save(item: BenchmarkItem, user, chosen: str, provenance: dict) -> BenchmarkItem:
    with transaction.atomic():
        record = CurationRecord.objects.select_for_update().get(item=item)
        item = BenchmarkItem.objects.select_related("version__benchmark").get(pk=item.pk)
        payload = {**item.payload, "caption": chosen}
        try:
            validate_payload(item.version.benchmark.slug, payload)
            item.payload = payload
            item.save(update_fields=["payload"])
        except FrozenError as exc:
            raise CurationError(" ".join(exc.messages), status=409) from None
        except ValidationError as exc:
            raise CurationError("The caption does not fit the video's item: " + "; ".join(exc.messages)) from None
        curation_stages.move(record, stages.CAPTIONED, by=user, reason="caption chosen", working={
            **(record.working or {}), "caption": {**provenance, "by": user.get_username(),
                                                  "at": timezone.now().isoformat()}})
    return item
