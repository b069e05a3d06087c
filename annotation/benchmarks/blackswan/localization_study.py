"""BlackSwanSuite's localization study: several annotators mark when the unexpected event happens.

A study of kind `blackswan_localization` holds library videos, each once (`StudyItem.video`, with the
video's duration and frame rate in the payload). Its workers watch the whole video and mark the moment
the unexpected event happens with the form's `time_mark` field (frame by frame, in seconds; checked on
the server to lie within the video), or tick "no unexpected event". `K` annotators (3 by default) mark
each video.

`localization_report(study)` reads the marks that count (submissions approved by a reviewer or not
sampled for review, through `final_data`, so a reviewer's correction wins) and applies the authors'
rule per video (`annotation.benchmarks.blackswan.localization`; `rule="spread"` names the other reading of when marks
agree): the aggregated time, which branch of the rule gave it, the agreement, the poor-agreement flag and
the suggested V_pre / V_main / V_post.
`suggestion_for(video)` gives the same for one video from its latest localization study with marks;
the split timeline starts from it.

Studies are made by `create_localization_study` (the command `blackswan_localization create` and the
demo call it). Items added later name a library video: `{"payload": {"video": <video id>}}`.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from django.utils.translation import gettext as _

from annotation.benchmarks.blackswan import localization
from annotation.crowd import answers, forms, kinds, studies
from annotation.crowd.errors import CrowdError
from annotation.crowd.models import Study, StudyItem, Submission
from annotation.models import MediaAsset, Video
from config.roles import ADMIN, CURATOR, has_role

STUDY_KIND = "blackswan_localization"
K = 3  # annotators per video
EVENT = "event_time"
NO_EVENT = f"{EVENT}{forms.NONE_SUFFIX}"
COUNTED = (Submission.Review.APPROVED, Submission.Review.NOT_SAMPLED)

FORM = {"fields": [
    {"name": EVENT, "type": "time_mark", "duration_from": "duration", "fps_from": "fps",
     "label": "When does the unexpected event happen?",
     "help": "Pause the video at the first frame where the unexpected thing happens, then mark it.",
     "none_label": "There is no unexpected event in this video"},
]}

INSTRUCTIONS = """Each item is one short video in which **something unexpected happens** (a fall, a failure, a
surprise).

1. Watch the **whole video** once.
2. Go back to the moment the unexpected event **starts** and pause there. Use the **frame buttons** (or the keys
   `,` and `.`) to find the first frame where it happens.
3. Press **Mark this moment** (or `M`). The marked time, in seconds, and its frame number are shown; you can go
   back to the mark to check it.
4. If nothing unexpected happens in the video, tick **There is no unexpected event in this video** instead.

Several people mark each video; their marks are combined to split the video into what comes before, during and
after the event."""


@dataclass(frozen=True)
class VideoMarks:
    """What the counted answers of one video say."""

    marks: tuple[float, ...]
    no_event: int

    @property
    def answers(self) -> int:
        return len(self.marks) + self.no_event


def is_localization(study: Study) -> bool:
    return study.step_kind == STUDY_KIND


# --- The kind -------------------------------------------------------------------------------------

def clean_answers(_schema: dict, payload: dict, data) -> dict:
    """The mark in seconds (within the video), or no event; InvalidSubmission (400) otherwise."""
    return forms.validate(FORM, payload or {}, data)


def readable(_schema: dict, payload: dict, data: dict) -> list[dict]:
    return answers.format_answers(FORM, payload, data)


def item_rows(payload: dict) -> list[dict]:
    """The task page's rows: the video's title and length (seconds and frames)."""
    rows = []
    if payload.get("title"):
        rows.append({"key": "title", "label": _("Video"), "kind": "text", "value": str(payload["title"])})
    duration, fps = payload.get("duration"), payload.get("fps")
    if isinstance(duration, int | float):
        length = f"{duration:.3f} s"
        if isinstance(payload.get("frame_count"), int) and isinstance(fps, int | float):
            length += " " + _("(%(frames)s frames at %(fps)s fps)") % {"frames": payload["frame_count"],
                                                                      "fps": f"{fps:g}"}
        rows.append({"key": "duration", "label": _("Length"), "kind": "text", "value": length})
    return rows


def video_row(video: Video) -> dict:
    """The study item row of a library video; CrowdError when it cannot be marked (not ready, no length)."""
    if video.status != MediaAsset.Status.READY or not video.file:
        raise CrowdError(f"Video #{video.pk} “{video.title}” is not ready yet.", status=409)
    if not video.duration or not video.fps:
        raise CrowdError(f"Video #{video.pk} “{video.title}” has no known duration and frame rate.", status=409)
    payload = {"title": video.title, "duration": video.duration, "fps": video.fps}
    if video.frame_count:
        payload["frame_count"] = video.frame_count
    return {"external_id": f"video-{video.pk}", "payload": payload, "video": video}


def _video(ident) -> Video:
    ident = getattr(ident, "pk", ident)
    video = Video.objects.filter(pk=ident).first() if str(ident).isdigit() else None
    if video is None:
        raise CrowdError(f"There is no library video #{ident}.", status=404)
    return video


def item_row(study: Study, row: dict) -> str | None:
    """Turn a row added to the study (a library video chosen on the items page, or `{"payload": {"video":
    <video id>}}`) into the video's item row, in place; the row's problem otherwise."""
    payload = row.get("payload") if isinstance(row.get("payload"), dict) else {}
    video = row.get("video")
    if video is None and set(payload) == {"video"}:
        video = payload["video"]
    if video is None or row.get("image") is not None:
        return 'items of a localization study are library videos: {"payload": {"video": <video id>}}'
    try:
        found = video_row(_video(video))
    except CrowdError as exc:
        return exc.message
    if study.items.filter(video=found["video"]).exists():
        return f"the study already has video #{found['video'].pk}"
    row.update(found)
    return None


KIND = kinds.register(kinds.StudyKind(
    STUDY_KIND, readable, clean_answers, uses_form=False, one_item_per_video=True, fixed_form=FORM,
    pages=(("Localization and split suggestions", "blackswan-localization"),), item_rows=item_rows,
    item_row=item_row))


# --- Creating the study --------------------------------------------------------------------------

def create_localization_study(curator, videos, k: int = K, *, name: str = "", slug: str | None = None,
                              instructions: str = INSTRUCTIONS, open_now: bool = True, **fields) -> Study:
    """A localization study over library `videos` (videos or their ids), `k` annotators per video.

    CrowdError, creating nothing: 403 for a user who is no curator, 404 for an unknown video, 409 for
    a video that is not ready or has no duration, 400 for no video, a video given twice or a bad k.
    """
    if not has_role(curator, CURATOR, ADMIN):
        raise CrowdError("Only curators create localization studies.", status=403)
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise CrowdError(f"The number of annotators per video (k) must be a whole number of at least 1 (got {k!r}).")
    chosen = [_video(ident) for ident in videos or []]
    if not chosen:
        raise CrowdError("Choose at least one video to localize.")
    seen = set()
    for video in chosen:
        if video.pk in seen:
            raise CrowdError(f"Video #{video.pk} is given twice.")
        seen.add(video.pk)
    rows = [video_row(video) for video in chosen]
    fields.setdefault("expert_share", 0.0)
    fields.setdefault("expert_first", 0)
    fields.setdefault("estimated_minutes", 1)
    name = name or f"BlackSwanSuite localization: {len(rows)} video{'s' if len(rows) != 1 else ''}"
    return studies.create_study(
        name=name[:200], slug=slug or None, fallback_slug="blackswan-localization", created_by=curator,
        step_kind=STUDY_KIND, rows=rows, form_schema=FORM, state=Study.State.OPEN if open_now else Study.State.DRAFT,
        annotators_per_item=k, instructions=instructions, history_reason="BlackSwanSuite localization study",
        **fields).study


# --- Reading the marks -----------------------------------------------------------------------------

def _counted(submissions) -> tuple[dict[int, VideoMarks], dict]:
    """Per study item: the counted marks and "no event" answers; and how many were left out."""
    marks: dict[int, list[float]] = defaultdict(list)
    none: dict[int, int] = defaultdict(int)
    left_out = {"pending": 0, "rejected": 0}
    for submission in submissions:
        if submission.review_state not in COUNTED:
            left_out["pending" if submission.review_state == Submission.Review.PENDING else "rejected"] += 1
            continue
        data, item_id = submission.final_data or {}, submission.claim.item_id
        value = data.get(EVENT)
        if data.get(NO_EVENT) is True:
            none[item_id] += 1
        elif isinstance(value, int | float) and not isinstance(value, bool):
            marks[item_id].append(float(value))
    found = {item_id: VideoMarks(tuple(marks.get(item_id, ())), none.get(item_id, 0))
             for item_id in set(marks) | set(none)}
    return found, left_out


def _submissions(**filters):
    return (Submission.objects.filter(claim__item__role=StudyItem.Role.REGULAR, **filters)
            .select_related("claim").order_by("submitted_at", "id"))


def video_figures(video_marks: VideoMarks, duration: float | None, rule: str = localization.DEFAULT_RULE) -> dict:
    """The rule applied to one video's marks: aggregate, agreement, flag and the suggested parts."""
    found = localization.aggregate(video_marks.marks, rule)
    suggestion = None
    if found.time is not None and duration:
        suggestion = localization.suggest_parts(found.time, duration).as_dict()
    return {"marks": list(video_marks.marks), "no_event": video_marks.no_event, "n_marks": len(video_marks.marks),
            "aggregate": found.as_dict(), "time": found.time, "agreement": localization.agreement_text(found),
            "poor_agreement": localization.poor_agreement(found), "suggestion": suggestion}


def localization_report(study: Study, rule: str = localization.DEFAULT_RULE) -> dict:
    """Per video of the study: its counted marks, the aggregated time (with the agreement `rule`, the
    authors' by default), the agreement, whether it is flagged for poor agreement, and the suggested parts;
    with counts over the study. CrowdError for another kind of study (409) or an unknown rule (400)."""
    if not is_localization(study):
        raise CrowdError(f"Study {study.slug} is not a localization study.", status=409)
    try:
        rule = localization.check_rule(rule)
    except ValueError as exc:
        raise CrowdError(str(exc)) from None
    found, left_out = _counted(_submissions(claim__study=study))
    videos = []
    for item in study.items.filter(role=StudyItem.Role.REGULAR).select_related("video").order_by("id"):
        duration = (item.payload or {}).get("duration") or (item.video.duration if item.video_id else None)
        row = {"item": item.external_id, "video_id": item.video_id,
               "title": item.video.title if item.video_id else (item.payload or {}).get("title", ""),
               "duration": duration, "fps": (item.payload or {}).get("fps"),
               **video_figures(found.get(item.pk, VideoMarks((), 0)), duration, rule)}
        videos.append(row)
    flagged = [row for row in videos if row["poor_agreement"]]
    return {"study": study.slug, "name": study.name, "annotators_per_video": study.annotators_per_item,
            "videos_in_study": len(videos), "videos_with_time": sum(row["time"] is not None for row in videos),
            "flagged": len(flagged), "left_out": left_out,
            "rule": {"name": rule, "agreeing": localization.RULES[rule], "min_mark": localization.MIN_MARK,
                     "wide_spread_std": localization.WIDE_SPREAD, "pair_std": localization.PAIR_STD,
                     "agreeing_std": localization.AGREEING_STD, "min_earliest": localization.MIN_EARLIEST,
                     "factor": localization.FACTOR, "edge": localization.EDGE,
                     "min_part_seconds": localization.MIN_PART_SECONDS},
            "videos": videos}


def shown_videos(report: dict, *, hide_poor: bool) -> list[dict]:
    """The report's videos, without the poorly agreed ones when `hide_poor`."""
    return [row for row in report["videos"] if not (hide_poor and row["poor_agreement"])]


def suggestion_for(video: Video, duration: float | None = None) -> dict | None:
    """The localization of `video` from its latest localization study with counted answers: the study,
    the marks, the aggregate, agreement, flag and suggested parts; None when no study has marked it."""
    items = (StudyItem.objects.filter(video=video, role=StudyItem.Role.REGULAR, study__step_kind=STUDY_KIND)
             .select_related("study").order_by("-study__created_at", "-id"))
    for item in items:
        found, _left_out = _counted(_submissions(claim__item=item))
        marks = found.get(item.pk)
        if marks is None or not marks.answers:
            continue
        length = duration or (item.payload or {}).get("duration") or video.duration
        return {"study": item.study.slug, "study_name": item.study.name, **video_figures(marks, length)}
    return None
