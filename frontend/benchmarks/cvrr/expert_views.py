"""The CVRR-ES expert assessment pages, for curators: the overview (the expert assessment studies, a form
that creates one over a sample of a QA pool, and the expert group with its grant and revoke form), one
study's report (the three rates per dimension and overall, agreement, the pairs that fail) with its JSON
and the button that finalises it. The experts answer on the ordinary task page (`/work/<slug>/`).

The work is done by `annotation.benchmarks.cvrr` (`expert_study`, `expert_sample`, `expert_report`,
`expert_group`); `expert_pages` builds what these pages show."""

from django.contrib import messages
from django.http import Http404, JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST, require_safe

from annotation.benchmarks.cvrr import expert_pages, expert_report
from annotation.crowd.errors import CrowdError
from config.permissions import roles_allowed
from config.roles import ADMIN, CURATOR

CURATORS = (CURATOR, ADMIN)


def _study(slug):
    study = expert_pages.study_named(slug)
    if study is None:
        raise Http404("No expert assessment study has this address.")
    return study


def _overview(request, form=None, error="", status=200):
    return render(request, "cvrr/experts.html", {**expert_pages.overview(form), "error": error}, status=status)


@roles_allowed(*CURATORS)
@require_safe
def experts_page(request):
    return _overview(request)


@roles_allowed(*CURATORS)
@require_POST
def experts_create(request):
    """Create a study over a sample of a pool; the form's errors are 400, a refused sample its status
    (nothing is created then)."""
    form = expert_pages.NewExpertStudyForm(request.POST)
    if not form.is_valid():
        return _overview(request, form, "The study was not created: correct the fields marked below.", 400)
    try:
        study = form.create(request.user)
    except CrowdError as exc:
        return _overview(request, form, exc.message, exc.status)
    messages.success(request, f"Study “{study.name}” created with {study.items.count()} pairs.")
    return redirect("cvrr-expert-report", slug=study.slug)


@roles_allowed(*CURATORS)
@require_POST
def experts_qualify(request):
    """Grant or take back the expert qualification of a user named by username (400 when unknown)."""
    try:
        message = expert_pages.grant_or_revoke(request.POST, request.user)
    except CrowdError as exc:
        return _overview(request, error=exc.message, status=exc.status)
    messages.success(request, message)
    return redirect("cvrr-experts")


def _report_page(request, study, error="", status=200):
    return render(request, "cvrr/expert_report.html", {**expert_pages.report_view(study), "error": error},
                  status=status)


@roles_allowed(*CURATORS)
@require_safe
def report_page(request, slug):
    return _report_page(request, _study(slug))


@roles_allowed(*CURATORS)
@require_safe
def report_json(request, slug):
    return JsonResponse(expert_report.report(_study(slug)), json_dumps_params={"ensure_ascii": False})


@roles_allowed(*CURATORS)
@require_POST
def finalise(request, slug):
    """Finalise the report: pairs failing (3) go back to filtration, those passing all are expert checked
    (409 when finalised already or nothing is answered yet; nothing is written then)."""
    study = _study(slug)
    try:
        summary = expert_report.finalise(study, request.user)
    except CrowdError as exc:
        return _report_page(request, study, exc.message, exc.status)
    messages.success(request, f"Report finalised: {len(summary['returned'])} pair(s) back to filtration, "
                              f"{len(summary['checked'])} expert checked, {len(summary['kept'])} kept in filtration.")
    return redirect("cvrr-expert-report", slug=study.slug)
