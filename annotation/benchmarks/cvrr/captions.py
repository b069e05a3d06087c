"""CVRR-ES captioning as a kind of crowd study (seeds/003 §3.2 Stage 1; SPEC §4 "Curation" 2).

A study of kind `cvrr_captions` asks two annotators per video (k = 2, the paper's setup) for a detailed
caption. Its items are video items of the video pool (`video_pool`): each study item links the pool
item (`StudyItem.benchmark_item`) and its library video (`StudyItem.video`), and shows the worker the
video, its dimension, the dimension's caption guideline as curators last saved it
(`CategoryDefinition.instructions["caption"]`, copied into the item when the study is made, so the
study records what its workers read), where the video comes from and the metadata that came with it.

The form is the kind's own (`FORM`): one caption of `MIN_CAPTION` to `MAX_CAPTION` characters, checked
on submit and on a reviewer's edit (`clean_answers`, 400 with a message otherwise). Curators then
merge or pick the caption used for QA generation on the caption page (`caption_choice`).

Items added later (the study's items page, the REST API) name a pool video: `{"payload":
{"video_item": <item id>}}` (`item_row`); anything else is refused.

A study is made by `create_caption_study` (the page `/studies/new/`, the command
`cvrr_caption_study` and the demo call it): over the given pool items, or over every pool video
that has no chosen caption yet.
"""

from __future__ import annotations

from annotation.benchmarks.cvrr import dimension_records, stages, video_pool
from annotation.benchmarks.cvrr.pools import CurationError
from annotation.crowd import answers, forms, kinds, studies
from annotation.crowd.errors import CrowdError, InvalidSubmission
from annotation.crowd.kinds import StudySetup
from annotation.crowd.models import Study
from config.roles import ADMIN, CURATOR, has_role

STUDY_KIND = "cvrr_captions"
CAPTIONERS = 2  # two annotators write a caption for each video (§3.2 Stage 1)
MIN_CAPTION, MAX_CAPTION = 40, 4000

FORM = {"fields": [
    {"name": "caption", "type": "free_text", "label": "Detailed caption of the video",
     "help": "Follow the caption guideline of the video's dimension, shown beside the video.",
     "min_length": MIN_CAPTION, "max_length": MAX_CAPTION},
]}

INSTRUCTIONS = """Watch the whole video, then write **one detailed caption** of it.

- Read the **caption guideline** shown with the video: each CVRR-ES dimension asks for the details its
  questions will need.
- Where the video came with **metadata** from its dataset (its captions, labels, …), start from it,
  check it against the video and complete it. Otherwise describe the video entirely yourself.
- Describe what can be seen, in the order it happens. Do not guess.

Two annotators caption each video; a curator then merges or picks the caption that questions are
written from."""


def is_captioning(study: Study) -> bool:
    return study.step_kind == STUDY_KIND


def clean_answers(_schema: dict, payload: dict, data) -> dict:
    """The caption, trimmed; InvalidSubmission (400) naming the problem otherwise."""
    clean = forms.validate(FORM, payload or {}, data)
    if len(clean["caption"].split()) < 5:
        raise InvalidSubmission("The caption is too short.",
                                details={"caption": "write a detailed caption in full sentences"})
    return clean


def readable(schema: dict, payload: dict, data: dict) -> list[dict]:
    return answers.format_answers(FORM, payload, data)


def item_rows(items) -> list[dict]:
    """Study item rows for pool video items: the video, its dimension's name and caption guideline, its
    source and metadata."""
    rows_by_key = {row.key: row for row in dimension_records.ensure_dimensions()}
    out = []
    for item in items:
        found = video_pool.row(item, {key: row.name for key, row in rows_by_key.items()})
        if found["video"] is None:
            raise CurationError(f"Item {item.external_id} has no video.", status=409)
        definition = rows_by_key.get(found["dimension"])
        payload = {"dimension": found["dimension_name"],
                   "caption_guideline": (definition.instructions or {}).get("caption", "") if definition else "",
                   "video_source": found["source"]}
        if found["metadata"]:
            payload["metadata"] = found["metadata"]
        out.append({"external_id": item.external_id, "payload": payload, "benchmark_item": item,
                    "video": found["video"]})
    return out


def awaiting_caption():
    """The pool's video items with no chosen caption yet."""
    return video_pool.pool_items().filter(curation__stage=stages.VIDEO_ASSIGNED)


def setup(created_by, settings: dict, *, with_rows: bool = True) -> StudySetup:
    """A new captioning study over every pool video without a chosen caption (when it is given no items);
    409 when there is none."""
    if not with_rows:
        return StudySetup()
    try:
        rows = item_rows(awaiting_caption())
    except CurationError as exc:
        raise CrowdError(exc.message, status=exc.status) from None
    if not rows:
        raise CrowdError("No CVRR-ES video awaits a caption: assign videos to dimensions first.", status=409)
    return StudySetup(rows=rows)


def item_row(study: Study, row: dict) -> str | None:
    """Turn a row added to a captioning study (`{"payload": {"video_item": <pool item id>}}`) into the pool
    video's item row, in place; the row's problem otherwise."""
    payload = row.get("payload") if isinstance(row.get("payload"), dict) else {}
    if set(payload) != {"video_item"} or row.get("video") is not None or row.get("image") is not None:
        return ('items of a captioning study are videos of the CVRR-ES video pool: {"payload": {"video_item": '
                '<item id>}}, or create the study on the CVRR-ES captioning page')
    try:
        found = item_rows([video_pool.pool_item(payload["video_item"])])[0]
    except CurationError as exc:
        return exc.message
    if study.items.filter(benchmark_item=found["benchmark_item"]).exists():
        return f"the study already has video {found['benchmark_item'].external_id}"
    row.update(payload=found["payload"], benchmark_item=found["benchmark_item"], video=found["video"])
    return None


def create_caption_study(curator, name: str, *, items=None, slug: str = "", k: int = CAPTIONERS,
                         instructions: str = INSTRUCTIONS, open_now: bool = False, **fields) -> Study:
    """A captioning study over pool video `items` (every video awaiting a caption when None), k annotators
    per video (2 by default). 403 for a user who is no curator, 404 for an item that is no pool video,
    409 when there is nothing to caption. A draft unless `open_now`."""
    if not has_role(curator, CURATOR, ADMIN):
        raise CrowdError("Only curators create studies.", status=403)
    rows = []
    if items is not None:
        try:
            rows = item_rows([video_pool.pool_item(getattr(item, "pk", item)) for item in items])
        except CurationError as exc:
            raise CrowdError(exc.message, status=exc.status) from None
        if not rows:
            raise CrowdError("Choose at least one video to caption.")
    fields.setdefault("expert_share", 0.0)
    fields.setdefault("expert_first", 0)
    fields.setdefault("estimated_minutes", 4)
    return studies.create_study(
        name=name, slug=slug or None, fallback_slug="captions", created_by=curator, step_kind=STUDY_KIND,
        rows=rows, form_schema=FORM, state=Study.State.OPEN if open_now else Study.State.DRAFT,
        annotators_per_item=k, instructions=instructions,
        history_reason="CVRR-ES captioning study", **fields).study


KIND = kinds.register(kinds.StudyKind(
    STUDY_KIND, readable, clean_answers, uses_form=False, fixed_form=FORM, setup=setup,
    pages=(("Captions to merge", "cvrr-caption-study"),), item_row=item_row))
