"""What a worker is shown: the task page (the item, its form with the saved draft, the instructions),
the read-only preview of a Mechanical Turk HIT, the completion page and the "My tasks" list.
Staged studies (BlackSwanSuite) have a page per step instead (`staged_task_context`), which holds
only the clips the claim's current step shows.

Each function returns the template context as a plain dict; the views in `frontend.crowd_views`
only parse the request, check roles and render.
"""

import json

from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation.benchmarks.blackswan import staged
from annotation.crowd import assignment, consent, eligibility, forms, kinds, platforms, progress
from annotation.crowd.errors import CrowdError
from annotation.crowd.instructions import render_markdown
from annotation.crowd.models import Claim, Draft, Study, StudyItem, Submission

# payload keys whose lists the form draws itself (as options, candidates or statements)
_FORM_SOURCE_KEYS = ("options_from", "candidates_from", "statements_from")
FINISHED = (Claim.Status.SUBMITTED, Claim.Status.APPROVED, Claim.Status.REJECTED)


def _source_keys(schema: dict) -> set[str]:
    return {field[key] for field in (schema or {}).get("fields", []) for key in _FORM_SOURCE_KEYS if field.get(key)}


def payload_rows(payload: dict, schema: dict) -> list[dict]:
    """The item's payload as rows to show, without the lists the form itself draws."""
    hidden = _source_keys(schema)
    rows = []
    for key, value in (payload or {}).items():
        if key in hidden:
            continue
        row = {"key": key, "label": str(key).replace("_", " ").capitalize()}
        if isinstance(value, list) and all(isinstance(v, str | int | float) for v in value):
            row.update(kind="list", value=[str(v) for v in value])
        elif isinstance(value, dict | list):
            row.update(kind="json", value=json.dumps(value, indent=2, ensure_ascii=False))
        else:
            row.update(kind="text", value="" if value is None else str(value))
        rows.append(row)
    return rows


def item_media(item: StudyItem, study: Study | None = None) -> dict:
    """URLs of the item's image and video (served behind the media permission checks), or the players
    of the study's kind (`StudyKind.task_media`) as `videos` when it has its own."""
    shown = kinds.of(study).task_media if study is not None else None
    if shown is not None:
        return {"videos": shown(item)}
    media = {}
    if item.image_id:
        media["image_url"] = reverse("media-image-file", kwargs={"pk": item.image_id})
    if item.video_id:
        media["video_url"] = reverse("media-video-file", kwargs={"pk": item.video_id})
    return media


def _decorate_single_choice(entry: dict, field: dict, value, values: dict) -> None:
    name = field["name"]
    entry["choices"] = [{**c, "checked": value is not None and str(value) == c["id"]}
                        for c in field.get("choices", [])]
    entry["explanation_mode"] = field.get("explanation", "none")
    entry["explanation_value"] = values.get(f"{name}_explanation") or ""
    entry["explanation_max"] = int(field.get("max_length", 2000))
    certainty = values.get(f"{name}_certainty")
    entry["certainty"] = [{"value": level, "label": forms.CERTAINTY_LABELS.get(level, level),
                           "checked": level == certainty} for level in field.get("certainty_levels", [])]


def _decorate_multi_select(entry: dict, field: dict, value, values: dict) -> None:
    chosen = {str(v) for v in value} if isinstance(value, list) else set()
    entry["choices"] = [{**c, "checked": c["id"] in chosen} for c in field.get("choices", [])]


def _decorate_likert(entry: dict, field: dict, value, values: dict) -> None:
    scale = field.get("scale", [])
    entry["scale"] = [{**point, "checked": value is not None and str(value) == str(point["value"])}
                      for point in scale]
    entry["low_label"] = scale[0]["label"] if scale else ""
    entry["high_label"] = scale[-1]["label"] if scale else ""


def _decorate_free_text(entry: dict, field: dict, value, values: dict) -> None:
    entry["text"] = "" if value is None else str(value)
    entry["max_length"] = int(field.get("max_length", 2000))
    entry["min_length"] = int(field.get("min_length", 1))


def _decorate_yes_no(entry: dict, field: dict, value, values: dict) -> None:
    answers = value if isinstance(value, dict) else {}
    entry["statements"] = [{**s, "answer": answers.get(s["id"])} for s in field.get("statements", [])]


def _decorate_time_mark(entry: dict, field: dict, value, values: dict) -> None:
    seconds = value if isinstance(value, int | float) and not isinstance(value, bool) else None
    entry["seconds"] = "" if seconds is None else f"{seconds:.4f}".rstrip("0").rstrip(".")
    entry["max_seconds"] = "" if field.get("duration") is None else f"{field['duration']:.4f}".rstrip("0").rstrip(".")
    entry["fps_value"] = "" if field.get("fps") is None else repr(float(field["fps"]))
    entry["none_checked"] = bool(field.get("none"))


_DECORATORS = {
    "single_choice": _decorate_single_choice,
    "multi_select": _decorate_multi_select,
    "likert": _decorate_likert,
    "free_text": _decorate_free_text,
    "yes_no_statements": _decorate_yes_no,
    "time_mark": _decorate_time_mark,
}


def decorate_fields(fields: list[dict], values: dict) -> list[dict]:
    """What the template needs beyond `forms.render_fields`: checked flags, DOM ids and the side answers."""
    values = values or {}
    out = []
    for index, field in enumerate(fields):
        entry = {**field, "dom_id": f"field-{index + 1}"}
        decorate = _DECORATORS.get(field.get("type"))
        if decorate is not None:
            decorate(entry, field, field.get("value"), values)
        out.append(entry)
    return out


def item_rows(study: Study, item: StudyItem) -> list[dict]:
    """The item as the worker reads it: the kind's own rows (`StudyKind.item_rows`) or every payload key."""
    shown = kinds.of(study).item_rows
    return shown(item.payload or {}) if shown is not None else payload_rows(item.payload, study.form_schema)


def _item_context(study: Study, item: StudyItem, presentation: dict, values: dict) -> dict:
    return {
        "study": study, "item": item,
        "fields": decorate_fields(forms.render_fields(study.form_schema, item.payload, presentation, values), values),
        "payload": item_rows(study, item),
        "instructions": render_markdown(study.instructions),
    }


def task_context(study: Study, claim: Claim) -> dict:
    """The task page of a worker's claim: its item, the form filled with the saved draft, instructions
    (opened for a worker's first item only)."""
    draft = Draft.objects.filter(claim=claim).first()
    values = draft.data if draft else {}
    earlier = Claim.objects.filter(study=study, worker_id=claim.worker_id).exclude(pk=claim.pk).count()
    return {
        **_item_context(study, claim.item, claim.presentation, values),
        "claim": claim, "draft": draft, "preview": False, "show_instructions": earlier == 0,
        "items_done": earlier, **item_media(claim.item, study), **_standing(study, claim.worker),
    }


def start_context(study: Study, worker, visit=None) -> dict:
    """The page a worker without an item in hand sees: the study, where they stand, and a button that
    claims the next item (`/work/<slug>/` with POST). StudyNotOpen / NotEligible when they may not claim."""
    assignment.check_may_claim(study, eligibility.standing(study, worker))
    return {"study": study, "visit": visit, **_standing(study, worker)}


def _standing(study: Study, worker) -> dict:
    """The worker's "item X of N" and pay earned so far in the study."""
    return {"progress": progress.progress(study, worker), "earnings": progress.earnings(study, worker)}


def needs_consent(study: Study, user) -> bool:
    """Whether the worker must see the study's consent / introduction page before their first item
    (`annotation.crowd.consent`: agreed once, kept in the database)."""
    return consent.needs_consent(study, user)


def give_consent(study: Study, user) -> None:
    """Record that the worker agreed to the study's consent page."""
    consent.give(study, user)


def consent_context(study: Study) -> dict:
    return {"study": study, "consent": render_markdown(study.consent_text),
            "instructions": render_markdown(study.instructions)}


def preview_context(study: Study) -> dict:
    """A read-only example of the task (the study's first regular item): no claim, no account."""
    if study.state != Study.State.OPEN:
        raise CrowdError(_("The study '%(name)s' is %(state)s.")
                         % {"name": study.name, "state": study.get_state_display().lower()}, status=409)
    item = study.items.filter(role=StudyItem.Role.REGULAR).order_by("id").first()
    if item is None:
        raise CrowdError(_("This study has no item to show yet."), status=409)
    presentation = forms.presentation_for(study.form_schema, item.payload, seed=f"preview:{item.pk}")
    return {**_item_context(study, item, presentation, {}), "preview": True, "claim": None,
            "show_instructions": True}


# --- Staged studies: one page per step --------------------------------------------------------------

def is_staged(study: Study) -> bool:
    return staged.is_staged(study)


def _step_rows(step: str, draft: dict, earlier: dict) -> dict:
    """The step's questions with the draft's answers filled in, and the earlier answers they are about."""
    numbers = range(staged.HYPOTHESES)
    if step == staged.FORECASTER:
        return {"scenarios": [{"index": i, "number": i + 1, "text": staged.entry_at(draft, "scenarios", i) or ""}
                              for i in numbers]}
    if step == staged.DETECTIVE:
        return {"forecasts": [{"index": i, "number": i + 1, "forecast": earlier["forecasts"][i],
                               "mark": staged.entry_at(draft, "forecast_valid", i),
                               "text": staged.entry_at(draft, "new_hypotheses", i) or ""} for i in numbers]}
    if step == staged.REPORTER:
        return {"hypotheses": [{"index": i, "number": i + 1, "hypothesis": earlier["hypotheses"][i],
                                "kept": earlier["forecast_valid"][i] == "yes",
                                "mark": staged.entry_at(draft, "hypothesis_valid", i)} for i in numbers],
                "caption": draft.get("caption") or ""}
    return {}


def _limits() -> dict:
    return {"min_text": staged.MIN_TEXT, "max_text": staged.MAX_TEXT, "max_caption": staged.MAX_CAPTION}


def staged_task_context(study: Study, claim: Claim) -> dict:
    """The page of a staged claim's current step: its players only (no URL of a clip the step hides),
    its questions with the step's own draft, the worker's earlier answers, and where to save and submit."""
    state = staged.stage_state(claim)
    step = state["step"]
    earlier_items = Claim.objects.filter(study=study, worker_id=claim.worker_id).exclude(pk=claim.pk).count()
    urls = {}
    if step in staged.STEPS:
        urls = {"draft_url": reverse("api-claim-step-draft", kwargs={"pk": claim.pk, "step": step}),
                "submit_url": reverse("api-claim-step-submit", kwargs={"pk": claim.pk, "step": step})}
    return {
        **state, "study": study, "claim": claim, "item": claim.item, "preview": False,
        "step_label": staged.step_label(step), "step_count": len(staged.STEPS),
        "draft_saved": bool(state["draft"]), **_step_rows(step, state["draft"], state["earlier"]),
        "instructions": render_markdown(study.instructions), "show_instructions": earlier_items == 0,
        "items_done": earlier_items, "limits": _limits(), **urls, **_standing(study, claim.worker),
    }


def staged_preview_context(study: Study) -> dict:
    """A read-only example of the first step, without any video (it needs an accepted assignment)."""
    if study.state != Study.State.OPEN:
        raise CrowdError(_("The study '%(name)s' is %(state)s.")
                         % {"name": study.name, "state": study.get_state_display().lower()}, status=409)
    step = staged.FORECASTER
    return {
        "study": study, "claim": None, "item": None, "preview": True, "step": step, "step_number": 1,
        "step_label": staged.step_label(step), "step_count": len(staged.STEPS),
        "steps": [{"step": s, "label": staged.step_label(s), "number": i + 1,
                   "state": "current" if s == step else "upcoming"} for i, s in enumerate(staged.STEPS)],
        "parts": [], "draft": {}, "earlier": {}, **_step_rows(step, {}, {}),
        "instructions": render_markdown(study.instructions), "show_instructions": True, "limits": _limits(),
    }


def attach_assignment(claim: Claim, assignment_id: str) -> None:
    """A worker on an MTurk assignment with an item still open that no assignment holds: the item counts for
    this one (an item open under another assignment was given back on entry, `platforms.enter`)."""
    if not assignment_id or claim.platform_assignment_id == assignment_id:
        return
    Claim.objects.filter(pk=claim.pk, status=Claim.Status.ACTIVE).update(platform_assignment_id=assignment_id)
    claim.platform_assignment_id = assignment_id


def _mturk_form(study: Study, user, visit, finished) -> dict | None:
    """MTurk's submit form for the worker's assignment, or None when there is no assignment."""
    assignment_id, submit_base = "", ""
    if visit and visit.platform == platforms.MTURK and visit.assignment_id:
        assignment_id, submit_base = visit.assignment_id, visit.ids.get("turkSubmitTo", "")
    elif user.is_authenticated:
        latest = Claim.objects.filter(study=study, worker=user).exclude(platform_assignment_id="").first()
        if latest is not None:
            assignment_id = latest.platform_assignment_id
    if not assignment_id:
        return None
    try:
        submit_base = platforms.mturk_submit_base(submit_base or platforms.DEFAULT_MTURK_SUBMIT_TO)
    except CrowdError:
        submit_base = platforms.DEFAULT_MTURK_SUBMIT_TO
    return {
        "action": f"{submit_base}/mturk/externalSubmit", "assignment_id": assignment_id,
        # MTurk only accepts an assignment for which the worker handed in something
        "ready": finished is not None and finished.filter(platform_assignment_id=assignment_id).exists(),
    }


def completion_context(study: Study, user, visit=None) -> dict:
    """What a worker needs to finish: the code, the platform's link, MTurk's submit form. The code
    and the link (which usually carries the code) are shown only once the worker has handed in the
    study's `required_submissions` items; until then the page says what is left."""
    finished = Claim.objects.filter(study=study, worker=user, status__in=FINISHED) if user.is_authenticated else None
    submitted = finished.count() if finished is not None else 0
    complete = submitted >= study.required_submissions
    context = {
        "study": study, "visit": visit, "complete": complete,
        "completion_code": study.completion_code if complete else "",
        "completion_url": platforms.completion_url(study) if complete else "",
        "submitted_count": submitted, "required_submissions": study.required_submissions,
        "items_left": max(0, study.required_submissions - submitted),
        "prolific": bool(visit and visit.platform == platforms.PROLIFIC),
    }
    mturk = _mturk_form(study, user, visit, finished)
    if mturk is not None:
        context["mturk"] = mturk
    return context


def my_tasks_context(user, runs: dict | None = None) -> dict:
    """Open studies the worker may join that still have an item for them (with how many are left),
    and the worker's own claims with their status; for a platform worker's session (`runs`, from
    `platforms.reach`), only the studies it entered by link and the claims it reaches."""
    now = timezone.now()
    studies = []
    open_studies = Study.objects.filter(state=Study.State.OPEN).order_by("name")
    if runs is not None:
        open_studies = open_studies.filter(slug__in=list(runs))
    for study in open_studies:
        if not eligibility.is_eligible(study, user):
            continue
        study.progress = progress.progress(study, user, now=now)
        if study.progress.has_work:
            studies.append(study)
    claims = platforms.narrow(Claim.objects.filter(worker=user), runs)
    claims = list(claims.select_related("study", "item").order_by("-claimed_at")[:200])
    for claim in claims:
        expired = claim.status == Claim.Status.ACTIVE and claim.lease_expires_at < now
        claim.label = Claim.Status.EXPIRED.label if expired else claim.get_status_display()
        claim.badge = Claim.Status.EXPIRED if expired else claim.status
        claim.can_continue = claim.status == Claim.Status.ACTIVE and not expired
        claim.can_open = claim.status in FINISHED
    return {"studies": studies, "claims": claims}


def past_answer_context(claim: Claim) -> dict:
    """A handed-in item with the worker's answer, read-only (the caller checked that the claim is
    the worker's own and handed in). Staged answers are shown as rows; form answers in the form."""
    study, submission = claim.study, Submission.objects.get(claim=claim)
    if is_staged(study):
        return {"study": study, "claim": claim, "item": claim.item, "submission": submission,
                "answers": payload_rows(submission.data, {}), "fields": []}
    context = _item_context(study, claim.item, claim.presentation, submission.data)
    return {**context, "claim": claim, "submission": submission, "answers": []}
