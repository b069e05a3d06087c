"""A BlackSwanSuite localization study's report for curators: its videos with their annotators' marks, the time
the authors' rule gives, the agreement and the suggested split (`annotation.benchmarks.blackswan.localization_study`),
poorly agreed videos flagged and, on request (`?hide_poor=1`), hidden; each links its split timeline.
`?rule=spread` reads the marks with the other agreement rule (`localization.RULES`)."""

from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.views.decorators.http import require_safe

from annotation.benchmarks.blackswan import localization, localization_study
from annotation.benchmarks.blackswan.selectors import localization_studies
from annotation.crowd.errors import CrowdError
from config.permissions import roles_allowed
from config.roles import ADMIN, CURATOR


@roles_allowed(CURATOR, ADMIN)
@require_safe
def localization_page(request, slug):
    """A localization study's report: per video its marks, time, agreement, flag and suggested split."""
    study = get_object_or_404(localization_studies(), slug=slug)
    hide_poor = request.GET.get("hide_poor") in ("1", "on", "true", "yes")
    rule = (request.GET.get("rule") or localization.DEFAULT_RULE).strip()
    try:
        report = localization_study.localization_report(study, rule)
    except CrowdError as exc:
        return render(request, "crowd/error.html", {"study": study, "message": exc.message, "status": exc.status,
                                                    "title": "No such agreement rule"}, status=exc.status)
    videos = localization_study.shown_videos(report, hide_poor=hide_poor)
    for row in videos:
        row["split_url"] = reverse("video-split", kwargs={"pk": row["video_id"]}) if row["video_id"] else ""
    return render(request, "blackswan/localization.html",
                  {"study": study, "report": report, "videos": videos, "hide_poor": hide_poor,
                   "hidden": len(report["videos"]) - len(videos), "rules": localization.RULES})
