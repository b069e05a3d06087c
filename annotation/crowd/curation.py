"""What curators are shown: the list of studies with claim counts per status, a study's summary,
one page of a review queue with each submission's answers in readable form, the media its worker
saw and an edit form shaped like its answers, and the pending counts behind the "Queues" page.

Decisions themselves go through `annotation.crowd.review`; this module only reads.
"""

from django.core.paginator import Paginator
from django.db.models import Count
from django.urls import reverse

from annotation.crowd import forms, kinds, review, review_media, task_page
from annotation.crowd.errors import CrowdError
from annotation.crowd.instructions import render_markdown
from annotation.crowd.models import Claim, Study, StudyItem

QUEUE_PAGE_SIZE = 50
STATUS_ORDER = [Claim.Status.ACTIVE, Claim.Status.SUBMITTED, Claim.Status.APPROVED, Claim.Status.REJECTED,
                Claim.Status.RETURNED, Claim.Status.EXPIRED]
QUEUE_LABELS = {"all": "All submissions", "expert_sample": "Expert sample", "gold": "Gold and attention checks"}
QUEUE_ORDER = [name for name in QUEUE_LABELS if name in review.QUEUES]
STATE_LABELS = {"pending": "Awaiting review", "approved": "Approved", "rejected": "Rejected"}


def _claim_counts(study_ids) -> dict:
    """{study id: {claim status: count}}."""
    counts = {}
    rows = Claim.objects.filter(study_id__in=study_ids).values("study_id", "status").annotate(n=Count("id"))
    for row in rows:
        counts.setdefault(row["study_id"], {})[row["status"]] = row["n"]
    return counts


def status_cells(counts: dict) -> list[dict]:
    """One cell per claim status, in a fixed order, with its count (0 when there is none)."""
    return [{"status": s.value, "label": s.label, "count": counts.get(s.value, 0)} for s in STATUS_ORDER]


def studies_context() -> dict:
    """Every study, newest first, with its item count and claim counts per status."""
    rows = list(Study.objects.order_by("-created_at"))
    ids = [s.pk for s in rows]
    items = dict(StudyItem.objects.filter(study_id__in=ids).values_list("study_id").annotate(n=Count("id")))
    claims = _claim_counts(ids)
    for study in rows:
        study.item_count = items.get(study.pk, 0)
        study.status_cells = status_cells(claims.get(study.pk, {}))
    return {"studies": rows, "statuses": [{"status": s.value, "label": s.label} for s in STATUS_ORDER]}


def kind_pages(study: Study) -> list[dict]:
    """The curators' pages of the study's kind (`StudyKind.pages`), each with its address."""
    return [{"label": label, "url": reverse(name, kwargs={"slug": study.slug})}
            for label, name in kinds.of(study).pages]


def study_summary(study: Study) -> dict:
    """A study's review queues with their counts, claims per status, items per role and instructions."""
    counts = review.queue_counts(study)
    roles = dict(StudyItem.objects.filter(study=study).values_list("role").annotate(n=Count("id")))
    return {
        "study": study,
        "queues": [{"name": name, "label": QUEUE_LABELS[name], "counts": counts[name]} for name in QUEUE_ORDER],
        "states": list(review.STATES),
        "status_cells": status_cells(_claim_counts([study.pk]).get(study.pk, {})),
        "item_roles": [{"label": label, "count": roles.get(value, 0)} for value, label in StudyItem.Role.choices],
        "instructions": render_markdown(study.instructions),
        "kind_pages": kind_pages(study),
    }


def form_edit(study: Study, submission) -> dict:
    """The generic edit form: the study's form as its worker saw it (same option order), filled in
    with the answers; DOM ids carry the submission so many forms fit on one page."""
    claim, data = submission.claim, submission.final_data or {}
    fields = forms.render_fields(study.form_schema, claim.item.payload, claim.presentation, data)
    decorated = task_page.decorate_fields(fields, data)
    for field in decorated:
        field["dom_id"] = f"s{submission.pk}-{field['dom_id']}"
    return {"template": "crowd/_edit_form.html", "shape": "form", "fields": decorated}


def queue_context(study: Study, name: str, state: str, page_number=None) -> dict:
    """One page of a review queue (`name` × `state`), each submission with its readable answers, the
    media its worker saw, an edit form shaped like its answers, the queues it counts in, and whether
    it still awaits a decision. CrowdError (400) for an unknown queue or state."""
    if name not in review.QUEUES or state not in review.STATES:
        raise CrowdError(f"Unknown queue {name!r} or state {state!r}.")
    kind = kinds.of(study)
    submissions = review.queue(study, name, state).select_related("claim__item__video", "claim__item__image")
    page = Paginator(submissions, QUEUE_PAGE_SIZE).get_page(page_number)
    extra = kind.review_extra(study, list(page)) if kind.review_extra is not None else {}
    for submission in page:
        claim = submission.claim
        submission.answers = kind.readable(study.form_schema, claim.item.payload, submission.final_data)
        submission.media = (kind.review_media or review_media.item_media)(claim.item)
        submission.edit = (kind.edit_form(study.form_schema, claim.item.payload, submission.final_data)
                           if kind.edit_form else form_edit(study, submission))
        submission.queues = review.queues_of(submission)
        submission.decidable = claim.status == Claim.Status.SUBMITTED
        submission.extra = extra.get(submission.pk)
        submission.criterion_label = kind.criterion_label(submission.review_criterion) \
            if submission.review_criterion else ""
    counts = review.queue_counts(study)
    return {
        "study": study, "page": page, "queue": name, "state": state,
        "queue_tabs": [{"name": q, "label": QUEUE_LABELS[q], "pending": counts[q]["pending"]} for q in QUEUE_ORDER],
        "state_tabs": [{"name": s, "label": STATE_LABELS[s], "count": counts[name][s]} for s in review.STATES],
        "state_label": STATE_LABELS[state], "queue_label": QUEUE_LABELS[name],
        "criteria": [{"value": value, "label": label} for value, label in kind.rejection_criteria],
        "kind_pages": kind_pages(study),
    }


def queue_overview() -> list[dict]:
    """Each study that collects work, with its pending counts per review queue."""
    rows = []
    for study in Study.objects.exclude(state=Study.State.DRAFT).order_by("-created_at"):
        counts = review.queue_counts(study)
        rows.append({"study": study, "pending": {name: counts[name]["pending"] for name in counts}})
    return rows
