"""The study report page: agreement per form field, workers, throughput (numbers from
`annotation.crowd.reports`)."""

from django.shortcuts import get_object_or_404, render
from django.urls import reverse

from annotation.crowd.access import SUBMISSION_READERS
from annotation.crowd.models import Study
from annotation.crowd.reports import study_report
from config.permissions import roles_allowed

# (key in an agreement row, column heading) in display order
STAT_COLUMNS = [
    ("fleiss_kappa", "Fleiss' κ"),
    ("alpha_nominal", "α nominal"),
    ("alpha_ordinal", "α ordinal"),
    ("unanimous_share", "Unanimous"),
    ("mean_pairwise_cohens_kappa", "Mean pairwise Cohen's κ"),
]


@roles_allowed(*SUBMISSION_READERS)
def study_report_page(request, slug):
    study = get_object_or_404(Study, slug=slug)
    report = study_report(study)
    for row in report["agreement"]:
        row["cells"] = [row[key] for key, _heading in STAT_COLUMNS]
    return render(request, "crowd/report.html", {
        "study": study,
        "report": report,
        "stat_headings": [heading for _key, heading in STAT_COLUMNS],
        "csv_url": reverse("api-study-report-csv", kwargs={"slug": study.slug}),
        "json_url": reverse("api-study-report", kwargs={"slug": study.slug}),
    })
