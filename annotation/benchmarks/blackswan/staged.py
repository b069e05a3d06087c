"""BlackSwanSuite's staged reveal as a kind of crowd study (seeds/000 §4.2, SPEC §1).

A study of kind `blackswan_staged` holds one item per video; each item names a finished
`VideoSplit` (payload `{"split_id": …}`, the item's `video` is the parent video). One claim walks
three steps, strictly in order, recorded in `Claim.step`:

    "" (claimed, not opened yet) → forecaster → detective → reporter → done

1. **Forecaster**: only V_pre plays; the worker writes three scenarios of what happens next.
2. **Detective**: V_pre and V_post play, V_main stays hidden; each forecast is marked valid or
   invalid, and every invalid one gets a new hypothesis of what happened in the middle.
3. **Reporter**: the full video plays; each Detective hypothesis (a valid forecast or the new
   hypothesis written in its place) is marked valid or invalid, and a caption of the whole event
   is written.

Each step keeps its own autosaved draft and its own submission in a `StagedStep` row (one per claim
and step). A submitted step is frozen: the service only ever writes the current step, and the
database refuses any update of a submitted row (a trigger, migration 0007). Time per step is kept
as active seconds (sent by the page, counted only while it is visible and focused) and wall
seconds (from the step's opening to its submission). Every step change is appended to the
history (entity "claim", from step to step); the lease is renewed at each step while it runs (a
draft or a submit after it ran out is refused with 409 and renews nothing). Submitting the
last step ends the claim like any other: a `Submission` holding the three steps' answers, with
the engine's expert sampling deciding whether an expert reviews it.

What a worker may stream is decided here (`may_stream`, registered as the kind's media grant,
`clips_of_current_step`): V_pre in every step, V_post from the Detective step, V_main and the
full clip only in the Reporter step, the Detective clip (the whole video with V_main blacked out,
made for models) never. The parent video is never streamed to workers of a staged study. While the
claim runs, no claim of the worker in any other study streams what its step still hides either
(`annotation.benchmarks.blackswan.reveal_guard`).

`release_record(claim)` turns a finished claim into BlackSwanSuite's release record, the shape
`annotation.benchmarks.blackswan.importer` imports and `evaluation.benchmarks.blackswan` reads.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from django.db import IntegrityError, transaction
from django.db.models import F, Q
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from annotation.access import media_grant
from annotation.benchmarks.blackswan.models import StagedStep
from annotation.crowd import assignment, history, quality, review_media, studies, study_settings
from annotation.crowd.errors import ClaimNotActive, CrowdError, InvalidSubmission, NotYourClaim
from annotation.crowd.models import Claim, Study, StudyItem, Submission
from annotation.models import Video, VideoSplit
from config.roles import ADMIN, CURATOR, has_role

STUDY_KIND = "blackswan_staged"
FORECASTER, DETECTIVE, REPORTER, DONE = "forecaster", "detective", "reporter", "done"
STEPS = StagedStep.STEPS
STEP_LABELS = dict(StagedStep.STEP_CHOICES)
NEXT_STEP = {FORECASTER: DETECTIVE, DETECTIVE: REPORTER, REPORTER: DONE}
HYPOTHESES = 3
MIN_TEXT, MAX_TEXT, MAX_CAPTION = 5, 1000, 2000
MAX_ACTIVE_SECONDS_PER_SAVE = 3600
MARKS = ("yes", "no")
SAVE = "be saved"  # what a refused draft wanted (`_check_order`; submitting is assignment.SUBMIT)

# The clips of a split (VideoSplit fields) a worker may stream in each step.
PART_FIELDS = {"pre": "pre_video", "main": "main_video", "post": "post_video", "detective": "detective_video",
               "full": "full_video"}
STREAMABLE = {FORECASTER: frozenset({"pre"}), DETECTIVE: frozenset({"pre", "post"}),
              REPORTER: frozenset({"pre", "post", "main", "full"}), DONE: frozenset()}
# The players each step's page shows (a subset of what it may stream).
SHOWN = {FORECASTER: ("pre",), DETECTIVE: ("pre", "post"), REPORTER: ("full",), DONE: ()}
PART_LABELS = {"pre": gettext_noop("Beginning of the video"), "post": gettext_noop("End of the video"),
               "main": gettext_noop("Middle of the video"), "full": gettext_noop("The whole video")}

# The answers of each step: list fields hold one entry per hypothesis.
STEP_FIELDS = {
    FORECASTER: {"scenarios": "text"},
    DETECTIVE: {"forecast_valid": "mark", "new_hypotheses": "text"},
    REPORTER: {"hypothesis_valid": "mark", "caption": "caption"},
}


# --- The study kind ------------------------------------------------------------------------------

def is_staged(study: Study) -> bool:
    return study.step_kind == STUDY_KIND


def step_label(step: str) -> str:
    """The step's name in the active language, for the worker (records keep STEP_LABELS)."""
    return _(STEP_LABELS[step]) if step in STEP_LABELS else ""


def _check_splits(splits, study: Study | None = None) -> list[VideoSplit]:
    """Finished splits, at most one per video, and none of a video the study holds already."""
    found, problems, videos = [], [], set()
    for split in splits:
        if not isinstance(split, VideoSplit):
            split = VideoSplit.objects.filter(pk=split).first() if str(split).isdigit() else None
            if split is None:
                problems.append("no such split")
                continue
        if split.status != VideoSplit.Status.DONE:
            problems.append(f"split #{split.pk} is {split.get_status_display().lower()}, not done")
        elif split.video_id in videos:
            problems.append(f"split #{split.pk}: video #{split.video_id} is already in the study (one item per video)")
        videos.add(split.video_id)
        found.append(split)
    if study is not None:
        for video in study_settings.videos_already_held(study, videos):
            problems.append(f"video #{video} is already in the study (one item per video)")
    if problems:
        raise InvalidSubmission("Some splits cannot be annotated.", details=problems)
    if not found:
        raise InvalidSubmission("A staged study needs at least one finished split.")
    return found


def item_rows(splits, study: Study | None = None) -> list[dict]:
    """Study item rows (for `assignment.add_items`) of finished splits, one per video; with `study`,
    a video it holds already (through this split or another) is refused."""
    return [{"external_id": f"video-{split.video_id}", "payload": {"split_id": split.pk}, "video": split.video}
            for split in _check_splits(splits, study)]


ROW_SHAPE = '{"payload": {"split_id": …}}'


def check_rows(study: Study, rows: list[dict]) -> list[str | None]:
    """The rows of one batch of the study's items page, each turned into its video's item row (in place), or
    its problem: a row names a finished split, one per video, of a video the study does not hold yet."""
    videos, problems = set(), []
    for row in rows:
        problems.append(_check_row(study, row, videos))
    return problems


def _check_row(study: Study, row: dict, videos: set) -> str | None:
    if set(row.get("payload", {})) != {"split_id"}:
        return f"items of a staged study are {ROW_SHAPE}"
    try:
        found = item_rows([row["payload"]["split_id"]], study)[0]
    except InvalidSubmission as exc:
        return "; ".join(exc.details) if isinstance(exc.details, list) else exc.message
    if found["video"].pk in videos:
        return f"video #{found['video'].pk} is named twice (one item per video)"
    videos.add(found["video"].pk)
    row.update(payload=found["payload"], video=found["video"])
    return None


def api_rows(study: Study, rows: list[dict]) -> list[dict]:
    """The rows posted to the API as the videos' item rows; 400 for the whole batch unless each names a
    finished split, one per video, of a video the study does not hold yet."""
    if any(set(row["payload"]) != {"split_id"} for row in rows):
        raise CrowdError(f"Items of a staged study are {ROW_SHAPE}.", status=400)
    videos = item_rows([row["payload"]["split_id"] for row in rows], study)
    return [{**row, "payload": found["payload"], "video": found["video"]}
            for row, found in zip(rows, videos, strict=True)]


def create_staged_study(splits, name: str, curator, *, slug: str = "", k: int = 1,
                        instructions: str = "", lease_seconds: int = 45 * 60, estimated_minutes: float = 6,
                        open_now: bool = False, **fields) -> Study:
    """A `blackswan_staged` study over finished splits (VideoSplit objects or ids), one item per video.

    The study starts as a draft unless `open_now`; other `Study` fields (pay_per_item, expert_share,
    completion_code, …) pass through. The engine's expert sampling applies as to any study. Its
    address is `slug` (409 when taken) or made from the name (`annotation.crowd.studies`).
    """
    if not has_role(curator, CURATOR, ADMIN):
        raise CrowdError("Only curators create studies.", status=403)
    rows = item_rows(splits)
    return studies.create_study(
        name=name, slug=slug or None, fallback_slug=None, created_by=curator, step_kind=STUDY_KIND, form_schema={},
        state=Study.State.OPEN if open_now else Study.State.DRAFT, rows=rows, annotators_per_item=k,
        instructions=instructions, lease_seconds=lease_seconds, estimated_minutes=estimated_minutes, gold_share=0.0,
        history_reason=f"BlackSwanSuite staged study over {len(rows)} videos", **fields).study


def split_of(item: StudyItem) -> VideoSplit:
    split_id = (item.payload or {}).get("split_id")
    split = (VideoSplit.objects.filter(pk=split_id, status=VideoSplit.Status.DONE).first()
             if str(split_id).isdigit() else None)
    if split is None:
        raise CrowdError(_("This item has no finished video split; it cannot be shown."), status=409)
    return split


# --- Steps ---------------------------------------------------------------------------------------

def current_step(claim: Claim) -> str:
    """The step the claim is in ("done" after the last one); a claim not opened yet is in the first."""
    return claim.step or FORECASTER


def step_number(step: str) -> int:
    return STEPS.index(step) + 1 if step in STEPS else len(STEPS) + 1


def _own(claim: Claim, worker) -> None:
    if claim.worker_id != worker.pk:
        raise NotYourClaim(_("This item is not assigned to you."))


def _staged_claim(claim: Claim) -> None:
    if not is_staged(claim.study):
        raise CrowdError(_("This item is not part of a staged study."), status=404)


def _active(claim: Claim, doing: str) -> None:
    """409 unless the claim is active and its lease still runs (an expired lease is never renewed)."""
    if claim.status != Claim.Status.ACTIVE:
        state = {"status": claim.get_status_display().lower()}
        if doing == assignment.SUBMIT:
            raise ClaimNotActive(_("This item is %(status)s; it can no longer be submitted.") % state)
        raise ClaimNotActive(_("This item is %(status)s; it can no longer change.") % state)
    if assignment.lease_ran_out(claim, timezone.now()):
        raise assignment.refusal(claim, doing)


def start(claim: Claim) -> str:
    """Open the first step of a newly claimed item (recorded once); return the current step."""
    if claim.step or claim.status != Claim.Status.ACTIVE:
        return current_step(claim)
    with transaction.atomic():
        opened = Claim.objects.filter(pk=claim.pk, status=Claim.Status.ACTIVE, step="").update(step=FORECASTER)
        if opened:
            StagedStep.objects.get_or_create(claim_id=claim.pk, step=FORECASTER,
                                             defaults={"started_at": claim.claimed_at})
            history.record(Claim, claim.pk, "", FORECASTER, actor=claim.worker, study=claim.study,
                           reason="step 1 of 3 (Forecaster) opened")
    claim.refresh_from_db(fields=["step", "status", "lease_expires_at"])
    return current_step(claim)


def _check_order(claim: Claim, step: str, doing: str) -> None:
    """409 unless `step` is the claim's current step."""
    if step not in STEPS:
        raise CrowdError(_("There is no step '%(step)s'; the steps are %(steps)s.")
                         % {"step": step, "steps": ", ".join(STEPS)}, status=404)
    current = current_step(claim)
    if step == current:
        return
    wanted, now = step_number(step), step_number(current)
    if wanted < now:
        raise CrowdError(_("Step %(number)s (%(label)s) is already submitted; submitted steps cannot change.")
                         % {"number": wanted, "label": step_label(step)}, status=409)
    values = {"number": wanted, "label": step_label(step), "current": now, "current_label": step_label(current)}
    if doing == SAVE:
        raise CrowdError(_("Step %(number)s (%(label)s) opens after you submit step %(current)s (%(current_label)s); "
                           "it cannot be saved yet.") % values, status=409)
    raise CrowdError(_("Step %(number)s (%(label)s) opens after you submit step %(current)s (%(current_label)s); "
                       "it cannot be submitted yet.") % values, status=409)


def _active_seconds(value) -> float:
    try:
        return max(0.0, min(float(value or 0), MAX_ACTIVE_SECONDS_PER_SAVE))
    except (TypeError, ValueError):
        return 0.0


def _lease(claim: Claim, now):
    return now + timedelta(seconds=claim.study.lease_seconds)


def save_step_draft(claim: Claim, worker, step: str, data, *, active_seconds: float = 0) -> StagedStep:
    """Autosave the current step's answers as they stand; a later save wins. Renews the lease."""
    _own(claim, worker)
    _staged_claim(claim)
    _active(claim, assignment.CHANGE)
    _check_order(claim, step, SAVE)
    draft = check_draft(step, data)
    now = timezone.now()
    with transaction.atomic():
        start(claim)
        renewed = Claim.objects.filter(pk=claim.pk, status=Claim.Status.ACTIVE, step=step,
                                       lease_expires_at__gt=now).update(lease_expires_at=_lease(claim, now))
        saved = renewed and StagedStep.objects.filter(claim_id=claim.pk, step=step, submitted_at__isnull=True).update(
            draft=draft, draft_revision=F("draft_revision") + 1, draft_saved_at=now,
            active_seconds=F("active_seconds") + _active_seconds(active_seconds))
        if not saved:
            transaction.set_rollback(True)
    if not saved:
        claim.refresh_from_db(fields=["step", "status", "lease_expires_at"])
        _active(claim, assignment.CHANGE)
        _check_order(claim, step, SAVE)
        raise CrowdError(_("This step changed meanwhile; reload the page."), status=409)
    return StagedStep.objects.get(claim_id=claim.pk, step=step)


@dataclass(frozen=True)
class StepResult:
    step: str
    next_step: str
    answers: dict
    submission: Submission | None = None
    feedback: dict | None = None

    @property
    def finished(self) -> bool:
        return self.next_step == DONE


def submit_step(claim: Claim, worker, step: str, data, *, active_seconds: float = 0) -> StepResult:
    """Submit the current step: its answers are frozen, the next step opens (or the claim ends)."""
    _own(claim, worker)
    _staged_claim(claim)
    _active(claim, assignment.SUBMIT)
    _check_order(claim, step, assignment.SUBMIT)
    answers = clean_step(step, data)
    now = timezone.now()
    following = NEXT_STEP[step]
    row = StagedStep.objects.filter(claim_id=claim.pk, step=step).first()
    try:
        with transaction.atomic():
            start(claim)  # a step submitted straight through the API opens it in the same transaction
            moved = Claim.objects.filter(pk=claim.pk, status=Claim.Status.ACTIVE, step=step,
                                         lease_expires_at__gt=now).update(step=following,
                                                                          lease_expires_at=_lease(claim, now))
            if not moved:
                raise _Raced()
            started = row.started_at if row else claim.claimed_at
            frozen = StagedStep.objects.filter(claim_id=claim.pk, step=step, submitted_at__isnull=True).update(
                answers=answers, submitted_at=now, wall_seconds=max(0.0, (now - started).total_seconds()),
                active_seconds=F("active_seconds") + _active_seconds(active_seconds))
            if not frozen:
                raise _Raced()
            history.record(Claim, claim.pk, step, following, actor=worker, study=claim.study,
                           reason=f"step {step_number(step)} of 3 ({STEP_LABELS[step]}) submitted")
            if following == DONE:
                submission, feedback = _finish(claim, worker, now)
                result = StepResult(step, following, answers, submission, feedback)
            else:
                StagedStep.objects.create(claim_id=claim.pk, step=following, started_at=now)
                result = StepResult(step, following, answers)
    except (_Raced, IntegrityError):
        claim.refresh_from_db(fields=["step", "status", "lease_expires_at"])
        _active(claim, assignment.SUBMIT)
        _check_order(claim, step, assignment.SUBMIT)
        raise CrowdError(_("This step was submitted meanwhile; reload the page."), status=409) from None
    claim.step = following
    if following == DONE:
        claim.status, claim.finished_at = Claim.Status.SUBMITTED, now
    return result


class _Raced(Exception):
    """A concurrent request changed the claim between the checks and the writes."""


def _finish(claim: Claim, worker, now) -> tuple[Submission, dict]:
    """End the claim after its last step: one Submission with every step's answers, as any study's."""
    steps = {row.step: row for row in StagedStep.objects.filter(claim_id=claim.pk)}
    data = {step: steps[step].answers for step in STEPS}
    source = Claim.STATES.source(Claim.Status.SUBMITTED)
    ended = Claim.objects.filter(pk=claim.pk, status=source).update(status=Claim.Status.SUBMITTED, finished_at=now)
    if not ended:
        raise _Raced()
    verdict = quality.assess(claim.study, claim.item, worker, data)
    submission = Submission.objects.create(
        claim_id=claim.pk, data=data, review_state=verdict.review_state, review_queue=verdict.review_queue,
        check_passed=verdict.check_passed, active_seconds=sum(row.active_seconds for row in steps.values()),
        wall_seconds=max(0.0, (now - claim.claimed_at).total_seconds()))
    StudyItem.objects.filter(pk=claim.item_id).update(completed_count=F("completed_count") + 1)
    history.record(Claim, claim.pk, source, Claim.Status.SUBMITTED, actor=worker, study=claim.study)
    history.record(Submission, submission.pk, "", submission.review_state, actor=worker, study=claim.study)
    return submission, quality.feedback(claim.study, claim.item, worker, verdict)


def steps_of(claim: Claim) -> dict[str, StagedStep]:
    return {row.step: row for row in StagedStep.objects.filter(claim_id=claim.pk)}


def step_times(claim: Claim) -> list[dict]:
    """Time per step: active and wall seconds, opening and submission times."""
    rows = steps_of(claim)
    return [{"step": step, "active_seconds": rows[step].active_seconds, "wall_seconds": rows[step].wall_seconds,
             "started_at": rows[step].started_at, "submitted_at": rows[step].submitted_at}
            for step in STEPS if step in rows]


# --- Answers -------------------------------------------------------------------------------------

def _text(value, key: str, errors: dict, *, low: int = MIN_TEXT, high: int = MAX_TEXT) -> str:
    text = value.strip() if isinstance(value, str) else ""
    if value is not None and not isinstance(value, str):
        errors[key] = _("write text here")
    elif len(text) < low:
        errors[key] = _("this answer is required") if not text else _("write at least %(count)s characters") % {
            "count": low}
    elif len(text) > high:
        errors[key] = _("write at most %(count)s characters") % {"count": high}
    return text


def _list(data: dict, key: str, errors: dict) -> list:
    value = data.get(key)
    if value is None:
        return [None] * HYPOTHESES
    if not isinstance(value, list) or len(value) != HYPOTHESES:
        errors[key] = _("give %(count)s entries") % {"count": HYPOTHESES}
        return [None] * HYPOTHESES
    return value


def _unknown(step: str, data: dict, errors: dict) -> None:
    for key in sorted(set(data) - set(STEP_FIELDS[step])):
        errors[key] = _("unknown field")


def clean_step(step: str, data) -> dict:
    """The step's answers, cleaned; InvalidSubmission (400) with a message per field otherwise."""
    if not isinstance(data, dict):
        raise InvalidSubmission(_("The answers must be a JSON object."))
    errors: dict = {}
    _unknown(step, data, errors)
    if step == FORECASTER:
        scenarios = [_text(v, f"scenarios.{i}", errors) for i, v in enumerate(_list(data, "scenarios", errors))]
        seen = {}
        for index, text in enumerate(scenarios):
            key = " ".join(text.lower().split())
            if key and key in seen and f"scenarios.{index}" not in errors:
                errors[f"scenarios.{index}"] = _("the same as scenario %(number)s: write a different one") % {
                    "number": seen[key] + 1}
            seen.setdefault(key, index)
        clean = {"scenarios": scenarios}
    elif step == DETECTIVE:
        marks = _marks(data, "forecast_valid", errors)
        news = _list(data, "new_hypotheses", errors)
        # a new hypothesis is written for each invalidated forecast only
        clean = {"forecast_valid": marks,
                 "new_hypotheses": [_text(news[i], f"new_hypotheses.{i}", errors) if marks[i] == "no" else ""
                                    for i in range(HYPOTHESES)]}
    else:
        clean = {"hypothesis_valid": _marks(data, "hypothesis_valid", errors),
                 "caption": _text(data.get("caption"), "caption", errors, high=MAX_CAPTION)}
    if errors:
        raise InvalidSubmission(_("Some answers are missing or invalid."), details=errors)
    return clean


def _marks(data: dict, key: str, errors: dict) -> list:
    marks = _list(data, key, errors)
    for index, mark in enumerate(marks):
        if mark not in MARKS:
            errors[f"{key}.{index}"] = _("mark it valid or invalid")
    return marks


def check_draft(step: str, data) -> dict:
    """A draft may be incomplete, but only the step's own fields, of the right kinds and sizes."""
    if not isinstance(data, dict):
        raise InvalidSubmission(_("A draft must be a JSON object."))
    errors: dict = {}
    _unknown(step, data, errors)
    for key, kind in STEP_FIELDS[step].items():
        value = data.get(key)
        if value is None:
            continue
        if kind == "caption":
            if not isinstance(value, str) or len(value) > MAX_CAPTION:
                errors[key] = _("text of at most %(count)s characters") % {"count": MAX_CAPTION}
            continue
        if not isinstance(value, list) or len(value) > HYPOTHESES:
            errors[key] = _("a list of at most %(count)s entries") % {"count": HYPOTHESES}
            continue
        for index, entry in enumerate(value):
            if kind == "mark" and entry not in (*MARKS, None):
                errors[f"{key}.{index}"] = _("yes, no or nothing")
            elif kind == "text" and not (entry is None or (isinstance(entry, str) and len(entry) <= MAX_TEXT)):
                errors[f"{key}.{index}"] = _("text of at most %(count)s characters") % {"count": MAX_TEXT}
    if errors:
        raise InvalidSubmission(_("This draft cannot be saved."), details=errors)
    return data


def detective_hypotheses(forecaster: dict, detective: dict) -> list[str]:
    """Per forecast: itself if the Detective step kept it, else the new hypothesis written in its place."""
    return [forecast if mark == "yes" else new for forecast, mark, new in
            zip(forecaster["scenarios"], detective["forecast_valid"], detective["new_hypotheses"], strict=True)]


def earlier_answers(claim: Claim, step: str, rows: dict | None = None) -> dict:
    """What the worker wrote in the steps before `step` (their own, frozen answers)."""
    rows = rows if rows is not None else steps_of(claim)
    done = {name: row.answers for name, row in rows.items() if row.submitted_at}
    out = {}
    if step in (DETECTIVE, REPORTER, DONE) and FORECASTER in done:
        out["forecasts"] = done[FORECASTER]["scenarios"]
    if step in (REPORTER, DONE) and DETECTIVE in done:
        out["forecast_valid"] = done[DETECTIVE]["forecast_valid"]
        out["hypotheses"] = detective_hypotheses(done[FORECASTER], done[DETECTIVE])
    return out


# --- What a worker may see -----------------------------------------------------------------------

def may_stream(user, video) -> bool:
    """Whether one of the user's active staged claims is in a step that shows this clip."""
    clauses = Q()
    for field in PART_FIELDS.values():
        clauses |= Q(**{field: video})
    parts: dict[int, set[str]] = {}
    for split in VideoSplit.objects.filter(clauses).values("pk", *PART_FIELDS.values()):
        parts[split["pk"]] = {part for part, field in PART_FIELDS.items() if split[field] == video.pk}
    if not parts:
        return False
    claims = Claim.objects.filter(worker=user, status=Claim.Status.ACTIVE, study__step_kind=STUDY_KIND,
                                  item__payload__split_id__in=list(parts))
    for step, split_id in claims.values_list("step", "item__payload__split_id"):
        if parts.get(split_id, set()) & STREAMABLE[step or FORECASTER]:
            return True
    return False


@media_grant
def clips_of_current_step(user, asset) -> bool:
    return isinstance(asset, Video) and may_stream(user, asset)


def visible_parts(claim: Claim, split: VideoSplit | None = None) -> list[dict]:
    """The players of the claim's current step: only clips the step may show (no URL of any other)."""
    step = current_step(claim)
    if claim.status != Claim.Status.ACTIVE or not SHOWN[step]:
        return []
    split = split or split_of(claim.item)
    out = []
    for part in SHOWN[step]:
        clip = getattr(split, PART_FIELDS[part])
        out.append({"part": part, "label": _(PART_LABELS[part]), "video_id": clip.pk,
                    "url": reverse("media-video-file", kwargs={"pk": clip.pk}),
                    "poster_url": reverse("media-video-poster", kwargs={"pk": clip.pk}) if clip.poster else "",
                    "duration": clip.duration})
    return out


def stage_state(claim: Claim) -> dict:
    """The claim as its worker may see it now: the step, its players, its draft, the earlier answers."""
    _staged_claim(claim)
    step = start(claim)
    rows = steps_of(claim)
    row = rows.get(step)
    return {
        "claim": claim.pk, "status": claim.status, "step": step, "step_number": step_number(step),
        "steps": [{"step": s, "label": step_label(s), "number": i + 1,
                   "state": "submitted" if s in rows and rows[s].submitted_at else ("current" if s == step
                                                                                   else "upcoming")}
                  for i, s in enumerate(STEPS)],
        "parts": visible_parts(claim),
        "draft": row.draft if row and not row.submitted_at else {},
        "draft_revision": row.draft_revision if row else 0,
        "earlier": earlier_answers(claim, step, rows),
    }


# --- Output --------------------------------------------------------------------------------------

def part_starts(split: VideoSplit) -> dict[str, float]:
    """Start times in seconds of V_pre, V_main and V_post within the video (from the cut clips)."""
    fps = split.fps or (split.video.fps if split.video_id else None)
    frames = {"pre": (split.parameters or {}).get("pre_start_frame", 0), "main": split.main_start_frame,
              "post": split.main_end_frame}
    starts = {}
    for part, frame in frames.items():
        clip = getattr(split, PART_FIELDS[part])
        start = (clip.provenance or {}).get("start_time") if clip is not None else None
        if start is None:
            if frame is None or not fps:
                raise ValueError(f"Split #{split.pk} does not say where {part} starts.")
            start = frame / fps
        starts[part] = round(float(start), 6)
    return starts


def post_end(split: VideoSplit) -> float:
    """Where V_post ends within the video, in seconds (from its clip)."""
    end = (split.post_video.provenance or {}).get("end_time") if split.post_video_id else None
    if end is None:
        raise ValueError(f"Split #{split.pk} does not say where V_post ends.")
    return round(float(end), 6)


def release_record(claim: Claim) -> dict:
    """The BlackSwanSuite release record of a finished staged claim (reviewers' corrections included).

    `id` is the item's id; `preevent`, `event`, `postevent` the start times in seconds of V_pre,
    V_main and V_post (and `end`, where V_post ends, when the split trimmed the end of the video);
    `task1_gt` the three forecasts; `task2_checkboxes` whether the Detective step kept each forecast
    ("yes"/"no"); `task2_gt` the Detective hypotheses (the forecast itself when kept, else the new
    hypothesis); `task3_checkboxes` the Reporter's marks of those three; `task3_gt` the caption.
    """
    if not is_staged(claim.study):
        raise ValueError(f"Claim {claim.pk} is not part of a staged study.")
    if claim.status not in (Claim.Status.SUBMITTED, Claim.Status.APPROVED):
        raise ValueError(f"Claim {claim.pk} is {claim.get_status_display().lower()}: only finished, "
                         "not rejected claims make release records.")
    data = Submission.objects.get(claim_id=claim.pk).final_data
    forecaster, detective, reporter = data[FORECASTER], data[DETECTIVE], data[REPORTER]
    split = split_of(claim.item)
    starts = part_starts(split)
    trimmed_end = {"end": post_end(split)} if split.trim_end else {}
    return {
        "id": claim.item.external_id,
        "preevent": starts["pre"], "event": starts["main"], "postevent": starts["post"], **trimmed_end,
        "task1_gt": list(forecaster["scenarios"]),
        "task2_checkboxes": list(detective["forecast_valid"]),
        "task2_gt": detective_hypotheses(forecaster, detective),
        "task3_checkboxes": list(reporter["hypothesis_valid"]),
        "task3_gt": reporter["caption"],
    }


def readable_answers(data: dict) -> list[dict]:
    """A finished claim's answers as label → text rows, in the shape `answers.format_answers` gives."""
    rows = []
    forecaster, detective, reporter = (data or {}).get(FORECASTER), (data or {}).get(DETECTIVE), \
        (data or {}).get(REPORTER)
    if forecaster:
        rows += [{"label": f"Forecast {i + 1}", "value": text, "extra": []}
                 for i, text in enumerate(forecaster["scenarios"])]
    if forecaster and detective:
        for i, mark in enumerate(detective["forecast_valid"]):
            extra = [] if mark == "yes" else [f"new hypothesis: {detective['new_hypotheses'][i]}"]
            rows.append({"label": f"Detective: forecast {i + 1}", "value": "valid" if mark == "yes" else "invalid",
                         "extra": extra})
    if reporter:
        rows += [{"label": f"Reporter: hypothesis {i + 1}", "value": "valid" if mark == "yes" else "invalid",
                  "extra": []} for i, mark in enumerate(reporter["hypothesis_valid"])]
        rows.append({"label": "Caption", "value": reporter["caption"], "extra": []})
    return rows


def clean_answers(_schema: dict, _payload: dict, data) -> dict:
    """A whole staged submission (the three steps' answers) checked step by step, for a reviewer's edit."""
    if not isinstance(data, dict) or set(data) != set(STEPS):
        raise InvalidSubmission(f"A staged submission holds the answers of the steps {', '.join(STEPS)}.")
    return {step: clean_step(step, data[step]) for step in STEPS}


def entry_at(values: dict, key: str, index: int):
    """The `index`-th entry of the list `values[key]`, or None."""
    entries = (values or {}).get(key)
    return entries[index] if isinstance(entries, list) and index < len(entries) else None


def seen_parts(item: StudyItem) -> list[dict]:
    """For a reviewer: each clip the worker saw, once, with the steps that showed it (no hidden clip,
    so the middle is only shown as part of the whole video the Reporter step played)."""
    split_id = (item.payload or {}).get("split_id")
    shown = {PART_FIELDS[part] for step in STEPS for part in SHOWN[step]}
    found = VideoSplit.objects.select_related(*shown).filter(status=VideoSplit.Status.DONE)
    split = found.filter(pk=split_id).first() if str(split_id).isdigit() else None
    if split is None:
        return []
    steps_of_part: dict[str, list[int]] = {}
    for step in STEPS:
        for part in SHOWN[step]:
            steps_of_part.setdefault(part, []).append(step_number(step))
    media = []
    for part, numbers in steps_of_part.items():
        clip = getattr(split, PART_FIELDS[part])
        if clip is not None:
            steps = " and ".join(str(n) for n in numbers)
            media.append(review_media.video_entry(clip, f"{PART_LABELS[part]} (step{'s' if len(numbers) > 1 else ''} "
                                                        f"{steps})"))
    return media


def edit_form(_schema: dict, _payload: dict, data: dict) -> dict:
    """The reviewer's edit form: per hypothesis the forecast, its Detective mark and new hypothesis and
    the Reporter's mark, then the caption; each input names its place in the answers (`step.field.index`)."""
    forecaster, detective, reporter = ((data or {}).get(step) or {} for step in STEPS)
    rows = [{"index": i, "number": i + 1, "forecast": entry_at(forecaster, "scenarios", i) or "",
             "forecast_valid": entry_at(detective, "forecast_valid", i),
             "new_hypothesis": entry_at(detective, "new_hypotheses", i) or "",
             "hypothesis_valid": entry_at(reporter, "hypothesis_valid", i)} for i in range(HYPOTHESES)]
    return {"template": "crowd/_edit_staged.html", "shape": "paths", "rows": rows,
            "caption": reporter.get("caption") or "", "limits": {"max_text": MAX_TEXT, "max_caption": MAX_CAPTION}}

