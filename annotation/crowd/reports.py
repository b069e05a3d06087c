"""A study's report: agreement per form field, per-worker quality and speed, throughput, progress.

What counts for agreement: the submissions on regular items (gold and attention items are checks
against a key, not judgments to agree on) that were not rejected, read through `final_data` (a
reviewer's correction wins over the worker's answer). Categorical fields only:
- single_choice and likert: one figure per field (likert also gets ordinal alpha);
- yes_no_statements: one figure per statement (yes/no);
- multi_select: one figure per candidate (selected = yes, not selected = no).
When statements or candidates come from each item's payload (`statements_from`, `candidates_from`)
they differ from item to item, so the field gets one pooled figure whose units are
(item, statement) or (item, candidate).

Per-worker figures and throughput use every submission of the study, rejected ones included.
"""

import csv
import statistics
from collections import defaultdict
from datetime import datetime

from django.utils import timezone
from rest_framework.renderers import BaseRenderer
from rest_framework.settings import api_settings

from annotation.crowd import agreement, payments
from annotation.crowd.forms import _choices
from annotation.crowd.models import Claim, Study, StudyExclusion, StudyItem, Submission

CATEGORICAL = ("single_choice", "likert", "yes_no_statements", "multi_select")
CHECK_ROLES = (StudyItem.Role.GOLD, StudyItem.Role.ATTENTION)
MIN_COMMON_ITEMS = 3  # rater pairs sharing fewer items are left out of the mean Cohen's kappa
POOLED = "*"

CSV_COLUMNS = [
    "worker_id", "worker", "submissions", "approved", "rejected", "pending",
    "gold_checks", "gold_passed", "gold_accuracy", "attention_checks", "attention_passed", "attention_accuracy",
    "expert_reviewed", "expert_accepted", "expert_accept_rate",
    "mean_active_seconds", "mean_wall_seconds", "excluded", "exclusion_reason",
]


def _ratio(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def _mean(values: list[float]) -> float | None:
    return statistics.fmean(values) if values else None


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def _iso(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment else None


# --- Agreement per field -----------------------------------------------------------------------

def _part_values(field: dict, payload: dict, answer) -> list[tuple[str, str, object]]:
    """(part id, unit suffix, label) for one answer of one categorical field; empty if unanswered."""
    kind = field.get("type")
    if answer is None:
        return []
    if kind == "single_choice":
        return [("", "", str(answer))]
    if kind == "likert":
        try:
            return [("", "", int(answer))]
        except (TypeError, ValueError):
            return []
    if kind == "yes_no_statements":
        if not isinstance(answer, dict):
            return []
        pooled = field.get("statements") is None
        return [(POOLED if pooled else str(sid), str(sid) if pooled else "", value)
                for sid, value in answer.items() if value in ("yes", "no")]
    if kind == "multi_select":
        if not isinstance(answer, list):
            return []
        chosen = {str(value) for value in answer}
        pooled = field.get("options") is None
        candidates = _choices(field, payload, "options", "candidates_from")
        return [(POOLED if pooled else c["id"], c["id"] if pooled else "", "yes" if c["id"] in chosen else "no")
                for c in candidates]
    return []


def _parts_of(field: dict) -> list[dict]:
    """The figures a field gets, in display order."""
    kind = field.get("type")
    if kind in ("single_choice", "likert"):
        return [{"part": "", "part_label": ""}]
    key_list = "statements" if kind == "yes_no_statements" else "options"
    if field.get(key_list) is None:
        what = "statements" if kind == "yes_no_statements" else "candidates"
        return [{"part": POOLED, "part_label": f"all {what}, pooled (units are item × {what[:-1]})"}]
    return [{"part": c["id"], "part_label": c["text"]} for c in _choices(field, {}, key_list, "")]


def _figures(units: dict, *, ordinal: bool) -> dict:
    ratings = agreement.ratings_from_units(units)
    fleiss = agreement.fleiss_kappa(ratings).as_dict()
    fleiss["applicable"] = fleiss["reason"] != agreement.UNEQUAL_RATINGS
    figures = {
        "n_items": sum(1 for ratings_ in ratings if ratings_),
        "n_ratings": sum(map(len, ratings)),
        "fleiss_kappa": fleiss,
        "alpha_nominal": agreement.krippendorff_alpha(units, agreement.NOMINAL).as_dict(),
        "alpha_ordinal": agreement.krippendorff_alpha(units, agreement.ORDINAL).as_dict() if ordinal else None,
        "unanimous_share": agreement.unanimous_share(ratings).as_dict(),
        "mean_pairwise_cohens_kappa": agreement.pairwise_cohens_kappa(
            units, min_common=MIN_COMMON_ITEMS).as_dict(),
    }
    # the report keeps how many rater pairs were used, not the list (it grows with workers squared)
    details = figures["mean_pairwise_cohens_kappa"]["details"]
    details["pairs_used"] = len(details.pop("pairs", []))
    return figures


def field_agreement(study: Study, submissions: list[Submission]) -> list[dict]:
    fields = [f for f in (study.form_schema or {}).get("fields", []) if f.get("type") in CATEGORICAL]
    counted = [s for s in submissions
               if s.claim.status != Claim.Status.REJECTED and s.review_state != Submission.Review.REJECTED
               and s.claim.item.role == StudyItem.Role.REGULAR]
    # (field name, part) -> unit -> {worker id: label}
    units: dict = defaultdict(lambda: defaultdict(dict))
    for submission in counted:
        data = submission.final_data or {}
        item = submission.claim.item
        for field in fields:
            for part, suffix, label in _part_values(field, item.payload, data.get(field["name"])):
                unit = f"{item.pk}:{suffix}" if suffix else item.pk
                units[(field["name"], part)][unit][submission.claim.worker_id] = label
    rows = []
    for field in fields:
        for part in _parts_of(field):
            row = {"field": field["name"], "label": field.get("label", field["name"]), "type": field["type"],
                   **part}
            row.update(_figures(dict(units.get((field["name"], part["part"]), {})),
                                ordinal=field["type"] == "likert"))
            rows.append(row)
    return rows


# --- Workers -----------------------------------------------------------------------------------

def worker_rows(study: Study, submissions: list[Submission]) -> list[dict]:
    exclusions = {e.worker_id: e.reason for e in StudyExclusion.objects.filter(study=study)}
    workers = {c.worker_id: c.worker for c in Claim.objects.filter(study=study).select_related("worker")}
    by_worker: dict = defaultdict(list)
    for submission in submissions:
        by_worker[submission.claim.worker_id].append(submission)
    rows = []
    for worker_id, worker in sorted(workers.items(), key=lambda pair: pair[1].get_username()):
        mine = by_worker.get(worker_id, [])
        status = [s.claim.status for s in mine]
        checks = {role: [s for s in mine if s.claim.item.role == role and s.check_passed is not None]
                  for role in CHECK_ROLES}
        expert = [s for s in mine if s.review_queue == "expert_sample"
                  and s.review_state in (Submission.Review.APPROVED, Submission.Review.REJECTED)]
        accepted = sum(1 for s in expert if s.review_state == Submission.Review.APPROVED)
        gold_passed = sum(1 for s in checks[StudyItem.Role.GOLD] if s.check_passed)
        attention_passed = sum(1 for s in checks[StudyItem.Role.ATTENTION] if s.check_passed)
        rows.append({
            "worker_id": worker_id,
            "worker": worker.get_username(),
            "submissions": len(mine),
            "approved": status.count(Claim.Status.APPROVED),
            "rejected": status.count(Claim.Status.REJECTED),
            "pending": status.count(Claim.Status.SUBMITTED),  # not decided (yet)
            "gold_checks": len(checks[StudyItem.Role.GOLD]),
            "gold_passed": gold_passed,
            "gold_accuracy": _ratio(gold_passed, len(checks[StudyItem.Role.GOLD])),
            "attention_checks": len(checks[StudyItem.Role.ATTENTION]),
            "attention_passed": attention_passed,
            "attention_accuracy": _ratio(attention_passed, len(checks[StudyItem.Role.ATTENTION])),
            "expert_reviewed": len(expert),
            "expert_accepted": accepted,
            "expert_accept_rate": _ratio(accepted, len(expert)),
            "mean_active_seconds": _mean([s.active_seconds for s in mine]),
            "mean_wall_seconds": _mean([s.wall_seconds for s in mine]),
            "excluded": worker_id in exclusions,
            "exclusion_reason": exclusions.get(worker_id, ""),
        })
    return rows


# --- Throughput and progress -------------------------------------------------------------------

def throughput(study: Study, submissions: list[Submission]) -> dict:
    """Submissions per hour from the study's first claim to its last submission, and time per item."""
    first_claim = Claim.objects.filter(study=study).order_by("claimed_at").values_list("claimed_at", flat=True).first()
    last_submission = max((s.submitted_at for s in submissions), default=None)
    hours = None
    if first_claim and last_submission and last_submission > first_claim:
        hours = (last_submission - first_claim).total_seconds() / 3600
    active = [s.active_seconds for s in submissions]
    wall = [s.wall_seconds for s in submissions]
    return {
        "submissions": len(submissions),
        "span_start": _iso(first_claim),
        "span_end": _iso(last_submission),
        "span_hours": hours,
        "submissions_per_hour": len(submissions) / hours if hours else None,
        "median_active_seconds": _median(active),
        "mean_active_seconds": _mean(active),
        "median_wall_seconds": _median(wall),
        "mean_wall_seconds": _mean(wall),
    }


def item_progress(study: Study) -> dict:
    k = study.annotators_per_item
    regular = StudyItem.objects.filter(study=study, role=StudyItem.Role.REGULAR)
    total = regular.count()
    complete = regular.filter(completed_count__gte=k).count()
    return {
        "k": k,
        "regular_items": total,
        "complete": complete,
        "open": total - complete,
        "check_items": StudyItem.objects.filter(study=study, role__in=CHECK_ROLES).count(),
    }


# --- The report --------------------------------------------------------------------------------

def _submissions(study: Study) -> list[Submission]:
    return list(Submission.objects.filter(claim__study=study)
                .select_related("claim__item", "claim__worker").order_by("submitted_at", "pk"))


def study_report(study: Study) -> dict:
    submissions = _submissions(study)
    rejected = sum(1 for s in submissions if s.claim.status == Claim.Status.REJECTED)
    return {
        "study": {"slug": study.slug, "name": study.name, "state": study.state,
                  "annotators_per_item": study.annotators_per_item},
        "generated_at": _iso(timezone.now()),
        "submissions": {"total": len(submissions), "rejected": rejected, "counted": len(submissions) - rejected},
        "agreement": field_agreement(study, submissions),
        "workers": worker_rows(study, submissions),
        "throughput": throughput(study, submissions),
        "items": item_progress(study),
    }


def _cell(value):
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.4f}".rstrip("0").rstrip(".") if value == value else ""
    if isinstance(value, str):
        return payments.spreadsheet_text(value)
    return value


def report_csv_rows(study: Study):
    """The per-worker table as CSV rows (a header, then one row per worker)."""
    yield list(CSV_COLUMNS)
    for row in worker_rows(study, _submissions(study)):
        yield [_cell(row[column]) for column in CSV_COLUMNS]


class _Echo:
    """A file-like object whose write returns the line, so csv.writer can feed a streaming response."""

    def write(self, value):
        return value


def report_csv_lines(study: Study):
    """The per-worker CSV, line by line (for a streaming response)."""
    writer = csv.writer(_Echo())
    for row in report_csv_rows(study):
        yield writer.writerow(row)


class CSVRenderer(BaseRenderer):
    """Lets DRF accept `report.csv`: its router maps `<action>.csv` to the action with format=csv.

    The CSV itself is streamed by the view; this renders only what DRF would produce on its own as
    `key,value` rows (errors and OPTIONS answers are JSON on every route: `config.api_rendering`).
    """

    media_type = "text/csv"
    format = "csv"
    charset = "utf-8"

    def render(self, data, accepted_media_type=None, renderer_context=None):
        if data is None:
            return b""
        if isinstance(data, (bytes, str)):
            return data.encode() if isinstance(data, str) else data
        rows = data.items() if isinstance(data, dict) else [("", value) for value in data]
        return "".join(csv.writer(_Echo()).writerow([key, _cell(str(value))]) for key, value in rows).encode()


# The report action answers JSON (and the browsable API), or CSV for `report.csv`.
REPORT_RENDERERS = [*api_settings.DEFAULT_RENDERER_CLASSES, CSVRenderer]
