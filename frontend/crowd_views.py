"""Crowd work pages: the worker's task page and completion page, the crowd platforms' entry links,
and the curators' study, review-queue and payment pages.

Views stay thin: every claim, draft, submission and review decision goes through the crowd engine
(`annotation.crowd`); the browser talks to its REST endpoints from `frontend/static/frontend/task.js`.
"""

import csv
import json
from urllib.parse import urlsplit
from xml.etree.ElementTree import Element

import markdown
from django.contrib.auth import login
from django.core.paginator import Paginator
from django.db.models import Count
from django.http import StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.safestring import mark_safe
from markdown.extensions import Extension
from markdown.treeprocessors import Treeprocessor

from annotation.crowd import assignment, eligibility, forms, platforms, review
from annotation.crowd.errors import CrowdError
from annotation.crowd.models import Claim, Draft, Study, StudyItem, Submission
from config.permissions import roles_allowed
from config.roles import ADMIN, ANNOTATOR, CURATOR

WORKERS = (ANNOTATOR, CURATOR, ADMIN)
CURATORS = (CURATOR, ADMIN)
QUEUE_PAGE_SIZE = 50
MTURK_FRAME_ANCESTORS = "frame-ancestors 'self' https://www.mturk.com https://workersandbox.mturk.com"


def public(view):
    """Mark a page that anyone may open, signed in or not (like config.auth_api.TokenView)."""
    view.allowed_roles = "public"
    return view


# --- Instructions: Markdown without raw HTML or script links -------------------------------------

SAFE_SCHEMES = {"http", "https", "mailto", ""}


class _SafeLinks(Treeprocessor):
    """Drop href/src values whose scheme is not http(s)/mailto (javascript:, data:, vbscript: …)."""

    def run(self, root: Element):
        for node in root.iter():
            for attribute in ("href", "src"):
                value = node.get(attribute)
                if value is not None and urlsplit(value.strip()).scheme.lower() not in SAFE_SCHEMES:
                    node.set(attribute, "#")


class SafeMarkdown(Extension):
    """Raw HTML in the source is shown as text, never interpreted."""

    def extendMarkdown(self, md):  # noqa: N802 (Markdown's API)
        md.preprocessors.deregister("html_block")
        md.inlinePatterns.deregister("html")
        md.treeprocessors.register(_SafeLinks(md), "safe_links", 1)


def render_markdown(text: str) -> str:
    return mark_safe(markdown.markdown(text or "", extensions=[SafeMarkdown(), "sane_lists"]))


# --- Helpers ---------------------------------------------------------------------------------------

def _refused(request, exc: CrowdError, study: Study | None = None, *, title: str = ""):
    """A refusal of the crowd engine as a page with its HTTP status (403, 409, 400…), never a 500."""
    titles = {400: "This link does not work", 403: "Not available to you", 404: "Not found",
              409: "Not available right now"}
    return render(request, "crowd/error.html", {
        "study": study, "message": exc.message, "title": title or titles.get(exc.status, "Not available"),
        "status": exc.status,
    }, status=exc.status)


def _frameable_by_mturk(response):
    """MTurk shows an ExternalQuestion inside an iframe on its own site; allow exactly that."""
    response.xframe_options_exempt = True
    response["Content-Security-Policy"] = MTURK_FRAME_ANCESTORS
    return response


def _source_keys(schema: dict) -> set[str]:
    keys = set()
    for field in (schema or {}).get("fields", []):
        for key in ("options_from", "candidates_from", "statements_from"):
            if field.get(key):
                keys.add(field[key])
    return keys


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


def item_media(item: StudyItem) -> dict:
    media = {}
    if item.image_id:
        media["image_url"] = reverse("media-image-file", kwargs={"pk": item.image_id})
    if item.video_id:
        media["video_url"] = reverse("media-video-file", kwargs={"pk": item.video_id})
    return media


def decorate_fields(fields: list[dict], values: dict) -> list[dict]:
    """What the template needs beyond render_fields: checked flags, ids and the side answers."""
    values = values or {}
    out = []
    for index, field in enumerate(fields):
        entry = dict(field)
        name, kind, value = field["name"], field.get("type"), field.get("value")
        entry["dom_id"] = f"field-{index + 1}"
        if kind == "single_choice":
            entry["choices"] = [{**c, "checked": value is not None and str(value) == c["id"]}
                                for c in field.get("choices", [])]
            entry["explanation_mode"] = field.get("explanation", "none")
            entry["explanation_value"] = values.get(f"{name}_explanation") or ""
            entry["explanation_max"] = int(field.get("max_length", 2000))
            certainty = values.get(f"{name}_certainty")
            entry["certainty"] = [{"value": level, "checked": level == certainty}
                                  for level in field.get("certainty_levels", [])]
        elif kind == "multi_select":
            chosen = {str(v) for v in value} if isinstance(value, list) else set()
            entry["choices"] = [{**c, "checked": c["id"] in chosen} for c in field.get("choices", [])]
        elif kind == "likert":
            scale = field.get("scale", [])
            entry["scale"] = [{**point, "checked": value is not None and str(value) == str(point["value"])}
                              for point in scale]
            entry["low_label"] = scale[0]["label"] if scale else ""
            entry["high_label"] = scale[-1]["label"] if scale else ""
        elif kind == "free_text":
            entry["text"] = "" if value is None else str(value)
            entry["max_length"] = int(field.get("max_length", 2000))
            entry["min_length"] = int(field.get("min_length", 1))
        elif kind == "yes_no_statements":
            answers = value if isinstance(value, dict) else {}
            entry["statements"] = [{**s, "answer": answers.get(s["id"])} for s in field.get("statements", [])]
        out.append(entry)
    return out


def _completion(request, study: Study, visit=None) -> dict:
    """What a worker needs to finish: the code, the platform's link, MTurk's submit form."""
    user = request.user
    done = Claim.objects.filter(study=study, worker=user, status__in=[
        Claim.Status.SUBMITTED, Claim.Status.APPROVED, Claim.Status.REJECTED]) if user.is_authenticated else None
    context = {
        "study": study, "visit": visit, "completion_code": study.completion_code,
        "completion_url": platforms.completion_url(study),
        "submitted_count": done.count() if done is not None else 0,
        "prolific": bool(visit and visit.platform == platforms.PROLIFIC),
    }
    assignment_id, submit_base = "", ""
    if visit and visit.platform == platforms.MTURK and visit.assignment_id:
        assignment_id, submit_base = visit.assignment_id, visit.ids.get("turkSubmitTo", "")
    elif user.is_authenticated:
        latest = Claim.objects.filter(study=study, worker=user).exclude(platform_assignment_id="").first()
        if latest is not None:
            assignment_id = latest.platform_assignment_id
    if assignment_id:
        try:
            submit_base = platforms.mturk_submit_base(submit_base or platforms.DEFAULT_MTURK_SUBMIT_TO)
        except CrowdError:
            submit_base = platforms.DEFAULT_MTURK_SUBMIT_TO
        context["mturk"] = {
            "action": f"{submit_base}/mturk/externalSubmit", "assignment_id": assignment_id,
            # MTurk only accepts an assignment for which the worker handed in something
            "ready": done is not None and done.filter(platform_assignment_id=assignment_id).exists(),
        }
    return context


# --- Worker pages ----------------------------------------------------------------------------------

@roles_allowed(*WORKERS)
def work(request, slug):
    """The worker's current item (a reload shows the same one), or the next one, or 'nothing left'."""
    study = get_object_or_404(Study, slug=slug)
    visit = platforms.recalled(request.session, slug)
    assignment_id = visit.assignment_id if visit else ""
    try:
        claim = assignment.claim_next(study, request.user, platform_assignment_id=assignment_id)
    except CrowdError as exc:
        return _refused(request, exc, study)
    if claim is None:
        response = render(request, "crowd/no_items.html", _completion(request, study, visit))
        return _frameable_by_mturk(response) if assignment_id else response
    if assignment_id and claim.platform_assignment_id != assignment_id:
        # the worker came back on a new MTurk assignment with an item still open: it counts for the new one
        Claim.objects.filter(pk=claim.pk, status=Claim.Status.ACTIVE).update(platform_assignment_id=assignment_id)
        claim.platform_assignment_id = assignment_id
    draft = Draft.objects.filter(claim=claim).first()
    values = draft.data if draft else {}
    item = claim.item
    earlier = Claim.objects.filter(study=study, worker=request.user).exclude(pk=claim.pk).count()
    context = {
        "study": study, "claim": claim, "item": item, "draft": draft, "visit": visit, "preview": False,
        "fields": decorate_fields(forms.render_fields(study.form_schema, item.payload, claim.presentation, values),
                                  values),
        "payload": payload_rows(item.payload, study.form_schema),
        "instructions": render_markdown(study.instructions), "show_instructions": earlier == 0,
        "items_done": earlier, **item_media(item),
    }
    response = render(request, "crowd/task.html", context)
    return _frameable_by_mturk(response) if assignment_id else response


@roles_allowed(*WORKERS)
def work_done(request, slug):
    """Completion: the study's code and link; MTurk workers' assignment goes back to MTurk."""
    study = get_object_or_404(Study, slug=slug)
    visit = platforms.recalled(request.session, slug)
    context = _completion(request, study, visit)
    response = render(request, "crowd/done.html", context)
    return _frameable_by_mturk(response) if "mturk" in context else response


# --- Crowd platform entry links (public) ----------------------------------------------------------

def _enter(request, study: Study, visit):
    user = platforms.worker_for(visit)
    login(request, user, backend=platforms.BACKEND)
    platforms.remember(request.session, study.slug, visit)
    return redirect("crowd-work", slug=study.slug)


@public
def prolific_entry(request, slug):
    """`/crowd/prolific/<slug>/?PROLIFIC_PID=…&STUDY_ID=…&SESSION_ID=…`: sign the worker in, go to work."""
    study = get_object_or_404(Study, slug=slug)
    try:
        return _enter(request, study, platforms.parse_prolific(request.GET))
    except CrowdError as exc:
        return _refused(request, exc, study)


@public
def mturk_entry(request, slug):
    """`/crowd/mturk/<slug>/?workerId=…&assignmentId=…&hitId=…&turkSubmitTo=…`.

    While a worker only previews the HIT (assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE) the page shows
    an example item with the form disabled: no account, no claim.
    """
    study = get_object_or_404(Study, slug=slug)
    try:
        visit = platforms.parse_mturk(request.GET)
        response = _preview(request, study) if visit.preview else _enter(request, study, visit)
    except CrowdError as exc:
        response = _refused(request, exc, study)
    return _frameable_by_mturk(response)


def _preview(request, study: Study):
    if study.state != Study.State.OPEN:
        raise CrowdError(f"The study '{study.name}' is {study.get_state_display().lower()}.", status=409)
    item = study.items.filter(role=StudyItem.Role.REGULAR).order_by("id").first()
    if item is None:
        raise CrowdError("This study has no item to show yet.", status=409)
    presentation = forms.presentation_for(study.form_schema, item.payload, seed=f"preview:{item.pk}")
    return render(request, "crowd/task.html", {
        "study": study, "item": item, "preview": True, "claim": None,
        "fields": decorate_fields(forms.render_fields(study.form_schema, item.payload, presentation, {}), {}),
        "payload": payload_rows(item.payload, study.form_schema),
        "instructions": render_markdown(study.instructions), "show_instructions": True,
    })


# --- "My tasks" and "Queues" (used by frontend.views) ---------------------------------------------

def my_tasks_context(user) -> dict:
    """Open studies the worker may join, and the worker's own claims with their status."""
    now = timezone.now()
    studies = []
    for study in Study.objects.filter(state=Study.State.OPEN).order_by("name"):
        if eligibility.is_eligible(study, user):
            studies.append(study)
    claims = list(Claim.objects.filter(worker=user).select_related("study", "item").order_by("-claimed_at")[:200])
    for claim in claims:
        expired = claim.status == Claim.Status.ACTIVE and claim.lease_expires_at < now
        claim.label = Claim.Status.EXPIRED.label if expired else claim.get_status_display()
        claim.badge = Claim.Status.EXPIRED if expired else claim.status
        claim.can_continue = claim.status == Claim.Status.ACTIVE and not expired
    return {"studies": studies, "claims": claims}


def queue_overview() -> list[dict]:
    """Each study that collects work, with its pending counts per review queue."""
    rows = []
    for study in Study.objects.exclude(state=Study.State.DRAFT).order_by("-created_at"):
        counts = review.queue_counts(study)
        rows.append({"study": study, "pending": {name: counts[name]["pending"] for name in counts}})
    return rows


# --- Curator pages ---------------------------------------------------------------------------------

STATUS_ORDER = [Claim.Status.ACTIVE, Claim.Status.SUBMITTED, Claim.Status.APPROVED, Claim.Status.REJECTED,
                Claim.Status.RETURNED, Claim.Status.EXPIRED]
QUEUE_LABELS = {"all": "All submissions", "expert_sample": "Expert sample", "gold": "Gold and attention checks"}
QUEUE_ORDER = [name for name in QUEUE_LABELS if name in review.QUEUES]
STATE_LABELS = {"pending": "Awaiting review", "approved": "Approved", "rejected": "Rejected"}


def _claim_counts(study_ids) -> dict:
    counts = {}
    rows = Claim.objects.filter(study_id__in=study_ids).values("study_id", "status").annotate(n=Count("id"))
    for row in rows:
        counts.setdefault(row["study_id"], {})[row["status"]] = row["n"]
    return counts


def _status_cells(counts: dict) -> list[dict]:
    return [{"status": s.value, "label": s.label, "count": counts.get(s.value, 0)} for s in STATUS_ORDER]


@roles_allowed(*CURATORS)
def studies(request):
    rows = list(Study.objects.order_by("-created_at"))
    ids = [s.pk for s in rows]
    items = dict(StudyItem.objects.filter(study_id__in=ids).values_list("study_id").annotate(n=Count("id")))
    claims = _claim_counts(ids)
    for study in rows:
        study.item_count = items.get(study.pk, 0)
        study.status_cells = _status_cells(claims.get(study.pk, {}))
    return render(request, "crowd/studies.html", {
        "studies": rows, "statuses": [{"status": s.value, "label": s.label} for s in STATUS_ORDER]})


@roles_allowed(*CURATORS)
def study_detail(request, slug):
    study = get_object_or_404(Study.objects.select_related("required_qualification", "created_by"), slug=slug)
    counts = review.queue_counts(study)
    queues = [{"name": name, "label": QUEUE_LABELS[name], "counts": counts[name]} for name in QUEUE_ORDER]
    roles = dict(StudyItem.objects.filter(study=study).values_list("role").annotate(n=Count("id")))
    base = request.build_absolute_uri("/").rstrip("/")
    return render(request, "crowd/study_detail.html", {
        "study": study, "queues": queues, "states": list(review.STATES),
        "status_cells": _status_cells(_claim_counts([study.pk]).get(study.pk, {})),
        "item_roles": [{"label": label, "count": roles.get(value, 0)} for value, label in StudyItem.Role.choices],
        "instructions": render_markdown(study.instructions),
        "prolific_link": base + reverse("crowd-entry-prolific", kwargs={"slug": study.slug})
        + "?PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}",
        "mturk_link": base + reverse("crowd-entry-mturk", kwargs={"slug": study.slug}),
    })


def format_answers(schema: dict, payload: dict, data: dict) -> list[dict]:
    """The answers of a submission as label → readable text, in the form's order."""
    data = data or {}
    rows = []
    for field in forms.render_fields(schema, payload, {}, data):
        name, kind, value = field["name"], field.get("type"), data.get(field["name"])
        text = {c["id"]: c["text"] for c in field.get("choices", []) + field.get("statements", [])}
        if value is None:
            shown = "—"
        elif kind == "single_choice":
            shown = text.get(str(value), str(value))
        elif kind == "multi_select" and isinstance(value, list):
            shown = "; ".join(text.get(str(v), str(v)) for v in value) or "(none)"
        elif kind == "yes_no_statements" and isinstance(value, dict):
            shown = "; ".join(f"{text.get(str(k), k)}: {v}" for k, v in value.items())
        else:
            shown = str(value)
        extra = [f"{word}: {data[key]}" for word, key in (("certainty", f"{name}_certainty"),
                                                          ("explanation", f"{name}_explanation")) if data.get(key)]
        rows.append({"label": field.get("label") or name, "value": shown, "extra": extra})
    return rows


@roles_allowed(*CURATORS)
def study_queue(request, slug):
    """One review queue of a study; decisions go through the REST endpoints (annotation.crowd.review)."""
    study = get_object_or_404(Study, slug=slug)
    name, state = request.GET.get("queue", "all"), request.GET.get("state", "pending")
    if name not in review.QUEUES or state not in review.STATES:
        return _refused(request, CrowdError(f"Unknown queue {name!r} or state {state!r}."), study)
    page = Paginator(review.queue(study, name, state), QUEUE_PAGE_SIZE).get_page(request.GET.get("page"))
    for submission in page:
        claim = submission.claim
        submission.answers = format_answers(study.form_schema, claim.item.payload, submission.final_data)
        submission.edit_json = json.dumps(submission.final_data, indent=2, ensure_ascii=False)
        submission.decidable = claim.status == Claim.Status.SUBMITTED
    counts = review.queue_counts(study)
    return render(request, "crowd/queue.html", {
        "study": study, "page": page, "queue": name, "state": state,
        "queue_tabs": [{"name": q, "label": QUEUE_LABELS[q], "pending": counts[q]["pending"]} for q in QUEUE_ORDER],
        "state_tabs": [{"name": s, "label": STATE_LABELS[s], "count": counts[name][s]} for s in review.STATES],
        "state_label": STATE_LABELS[state], "queue_label": QUEUE_LABELS[name],
    })


class _Echo:
    def write(self, value):
        return value


def _cell(value) -> str:
    """Text cells that a spreadsheet would read as a formula are prefixed with a quote."""
    text = "" if value is None else str(value)
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


PAYMENT_COLUMNS = ["worker", "platform", "platform_worker_id", "item", "submitted_at", "active_seconds",
                   "wall_seconds", "pay", "currency"]


@roles_allowed(*CURATORS)
def payments_csv(request, slug):
    """Approved work, one row per submission, streamed."""
    study = get_object_or_404(Study, slug=slug)
    rows = (Submission.objects.filter(claim__study=study, claim__status=Claim.Status.APPROVED)
            .select_related("claim__item", "claim__worker__worker_profile").order_by("submitted_at", "pk"))
    writer = csv.writer(_Echo())

    def lines():
        yield writer.writerow(PAYMENT_COLUMNS)
        for submission in rows.iterator(chunk_size=500):
            worker = submission.claim.worker
            profile = getattr(worker, "worker_profile", None)
            yield writer.writerow([
                _cell(worker.username), profile.platform if profile else "local",
                _cell(profile.platform_worker_id if profile else ""), _cell(submission.claim.item.external_id),
                submission.submitted_at.isoformat(), f"{submission.active_seconds:.1f}",
                f"{submission.wall_seconds:.1f}", f"{study.pay_per_item:.2f}", study.currency,
            ])

    response = StreamingHttpResponse(lines(), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{study.slug}-payments.csv"'
    return response
