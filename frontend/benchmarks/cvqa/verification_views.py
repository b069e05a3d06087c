"""C-VQA-Real two-person verification for curators (seeds/001 §3.2; SPEC §2 "Verification"):

- `/cvqa/verification/`: the counterfactuals versions with their items per stage and verification studies;
  POST creates a verification study (the version, verifiers per item ≥ 2, a name, open now);
- `/cvqa/versions/<id>/verification/`: one version's items with their verifiers' verdicts, the adjudication
  queue, the removed items with their reasons and the studies; POST `…/resolve/` moves on items whose
  verifiers have all answered, POST `/cvqa/verification/studies/<slug>/add/` adds the items proposed since;
- POST `/cvqa/items/<id>/adjudicate/`: a curator's decision on a disputed item (keep, correct, remove).

Verifiers work on the ordinary task pages of the study. Services: `annotation.benchmarks.cvqa.verification`;
reads: `.verification_report`.
"""

from django.contrib import messages
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST, require_safe

from annotation.benchmarks.cvqa import verification, verification_report
from annotation.crowd import selectors
from config.permissions import roles_allowed
from config.roles import ADMIN, CURATOR
from frontend.benchmarks.cvqa import CRUMBS
from frontend.refusals import refused

CURATORS = (CURATOR, ADMIN)


def _refused(request, message: str, status: int):
    return refused(request, message, status, CRUMBS)


@roles_allowed(*CURATORS)
@require_http_methods(["GET", "HEAD", "POST"])
def overview(request):
    """GET: the versions and the form. POST: create a study (to its version's page), or the form with the
    refusal and its status (nothing created)."""
    if request.method != "POST":
        return render(request, "cvqa/verification.html", verification_report.overview())
    form = verification_report.NewVerificationStudyForm(request.POST)
    if not form.is_valid():
        return render(request, "cvqa/verification.html", verification_report.overview(form), status=400)
    try:
        study = form.create(request.user)
    except verification.VerificationError as exc:
        return render(request, "cvqa/verification.html", {**verification_report.overview(form), "error": exc.message},
                      status=exc.status)
    messages.success(request, f"“{study.name}” is created with {study.items.count()} question(s).")
    return redirect("cvqa-verification-version", version_id=study.output_version_id)


def _version(version_id: int):
    try:
        return verification.curation_version(version_id)
    except verification.VerificationError:
        raise Http404("No such C-VQA counterfactuals version under curation.") from None


@roles_allowed(*CURATORS)
@require_safe
def version_page(request, version_id: int):
    report = verification_report.report(_version(version_id))
    return render(request, "cvqa/verification_version.html", {
        **report, "reasons": verification.REASONS, "me": request.user.pk})


@roles_allowed(*CURATORS)
@require_POST
def resolve(request, version_id: int):
    moved = verification.resolve_version(_version(version_id))
    text = ", ".join(f"{count} {stage}" for stage, count in sorted(moved.items())) or "nothing moved on"
    messages.success(request, f"Outcomes checked: {text}.")
    return redirect("cvqa-verification-version", version_id=version_id)


@roles_allowed(*CURATORS)
@require_safe
def study_page(request, slug: str):
    version = verification_report.study_version(slug)
    if version is None:
        raise Http404("No such verification study.")
    return redirect("cvqa-verification-version", version_id=version.pk)


@roles_allowed(*CURATORS)
@require_POST
def add_items(request, slug: str):
    study = selectors.study_by_slug(slug)
    if study is None or not verification.is_verification(study):
        raise Http404("No such verification study.")
    try:
        added = verification.add_waiting(study, request.user)
    except verification.VerificationError as exc:
        return _refused(request, exc.message, exc.status)
    messages.success(request, f"{len(added)} question(s) added to “{study.name}”.")
    return redirect("cvqa-verification-version", version_id=study.output_version_id)


@roles_allowed(*CURATORS)
@require_POST
def adjudicate(request, item_id: int):
    """A curator's decision (decision, answer, reason, note): back to the version's page, or the refusal."""
    data = request.POST
    try:
        verification.adjudicate(request.user, item_id, data.get("decision", ""), answer=data.get("answer", ""),
                                reason=data.get("reason", ""), note=data.get("note", ""))
    except verification.VerificationError as exc:
        return _refused(request, exc.message, exc.status)
    messages.success(request, "The decision is recorded.")
    return redirect("cvqa-verification-version", version_id=verification_report.home_version_id(item_id))
