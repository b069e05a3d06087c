"""What a study owes its workers: one CSV row per approved submission, with the pay per item.

Rows are produced one at a time from a database iterator, so a view can stream the file without
holding the study's submissions in memory.
"""

import csv
from collections.abc import Iterator

from annotation.crowd.models import Claim, Study, Submission

PAYMENT_COLUMNS = ["worker", "platform", "platform_worker_id", "item", "submitted_at", "active_seconds",
                   "wall_seconds", "pay", "currency"]
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_text(value) -> str:
    """A text cell; one that a spreadsheet would read as a formula is prefixed with a quote."""
    text = "" if value is None else str(value)
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def approved_submissions(study: Study):
    """The study's approved submissions, oldest first."""
    return (Submission.objects.filter(claim__study=study, claim__status=Claim.Status.APPROVED)
            .select_related("claim__item", "claim__worker__worker_profile").order_by("submitted_at", "pk"))


def payment_row(study: Study, submission: Submission) -> list[str]:
    worker = submission.claim.worker
    profile = getattr(worker, "worker_profile", None)
    return [
        spreadsheet_text(worker.username), profile.platform if profile else "local",
        spreadsheet_text(profile.platform_worker_id if profile else ""),
        spreadsheet_text(submission.claim.item.external_id),
        submission.submitted_at.isoformat(), f"{submission.active_seconds:.1f}",
        f"{submission.wall_seconds:.1f}", f"{study.pay_per_item:.2f}", study.currency,
    ]


def payment_rows(study: Study) -> Iterator[list[str]]:
    """The header, then one row per approved submission."""
    yield list(PAYMENT_COLUMNS)
    for submission in approved_submissions(study).iterator(chunk_size=500):
        yield payment_row(study, submission)


class _Echo:
    """A file-like object whose write returns the line, so csv.writer can feed a streaming response."""

    def write(self, value):
        return value


def payment_csv_lines(study: Study) -> Iterator[str]:
    """The payment CSV, line by line."""
    writer = csv.writer(_Echo())
    for row in payment_rows(study):
        yield writer.writerow(row)


def payment_filename(study: Study) -> str:
    return f"{study.slug}-payments.csv"
