"""MAIA answer pools, for curators: the agreement report of a version (share of pools in full agreement per
category and overall, lexical diversity per pool) and the review queue of pools whose automatic NLI check
found contradicting answers, where a curator confirms or overrides it. The checks run as a background job
queued from the report ("Run pool checks", `annotation.benchmarks.maia.pool_check_job`) or with
`manage.py maia_pool_checks run`; the work is `annotation.benchmarks.maia.pool_checks`."""

from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from annotation.benchmarks.maia import pool_check_job, pool_checks
from config.permissions import roles_allowed
from config.roles import ADMIN, CURATOR


def _version(pk):
    return get_object_or_404(pool_checks.maia_versions(), pk=pk)


def _report_page(request, version, errors=(), status=200):
    return render(request, "maia/pool_report.html", {
        "version": version, "report": pool_checks.report(version), "errors": list(errors),
        "jobs": pool_check_job.jobs_of(version)[:5]}, status=status)


@roles_allowed(CURATOR, ADMIN)
def pool_report(request, pk):
    return _report_page(request, _version(pk))


@roles_allowed(CURATOR, ADMIN)
@require_POST
def pool_run(request, pk):
    """Queue the NLI checks of the version's complete pools (400 when no model is set or no pool is complete)."""
    version = _version(pk)
    try:
        job = pool_check_job.enqueue(version, request.user)
    except pool_checks.PoolCheckError as exc:
        return _report_page(request, version, exc.messages, status=400)
    messages.success(request, f"Pool checks queued (job #{job.pk}).")
    return redirect("maia-pool-report", pk=version.pk)


def _review_page(request, version, errors=(), status=200):
    return render(request, "maia/pool_review.html", {
        "version": version, "queue": pool_checks.review_queue(version), "errors": list(errors),
        "confirm": pool_checks.REVIEW_CONFIRM, "override": pool_checks.REVIEW_OVERRIDE}, status=status)


@roles_allowed(CURATOR, ADMIN)
def pool_review(request, pk):
    """The pools whose latest check found a contradiction, with their contradicting pairs."""
    return _review_page(request, _version(pk))


@roles_allowed(CURATOR, ADMIN)
@require_POST
def pool_decide(request, pk, item_id):
    """Confirm (fail) or override (pass) the automatic check of one pool (400 on bad input)."""
    version = _version(pk)
    try:
        item = pool_checks.pool_item(item_id)
        if item.version_id != version.pk:
            raise pool_checks.PoolCheckError(f"{item.external_id} is not in {version.label}.")
        check = pool_checks.review(item.pk, request.user, request.POST.get("decision", ""),
                                   request.POST.get("note", ""))
    except pool_checks.PoolCheckError as exc:
        return _review_page(request, version, exc.messages, status=400)
    messages.success(request, f"{item.external_id}: the contradiction is {check.subject['review']}ed.")
    return redirect("maia-pool-review", pk=version.pk)
