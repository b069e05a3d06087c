"""Pages that write results back: people's explanations approved as judge references of a frozen
version's items (curators), failure factors tagged on wrong predictions (curators, researchers), and
people's own verdicts on judged answers, models' and people's, that the judge is compared with
(curators, researchers). Thin views over `evaluation.human_eval.references`,
`evaluation.judge_references`, `evaluation.failure_analysis` and `evaluation.human_verdicts`; a
refusal re-renders the page with the reason (400)."""

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from annotation import selectors as annotation_selectors
from config.permissions import roles_allowed
from config.roles import ADMIN, CURATOR, RESEARCHER, has_role
from evaluation import failure_analysis, human_eval, human_verdicts, judge_references, results, selectors
from evaluation.human_eval import references
from frontend.results_views import run_of

TAGGERS = failure_analysis.TAGGERS
PER_PAGE = 40


def _message(exc: ValidationError) -> str:
    return " ".join(exc.messages)


# --- Judge references --------------------------------------------------------------------------

def references_page(request, version, *, status: int = 200, error: str = ""):
    return render(request, "frontend/judge_references.html", {
        "version": version, "entries": references.candidates(version) if version.frozen else [],
        "revoked": selectors.revoked_references(version), "error": error,
        "statuses": (references.VALID, references.NOT_VOTED, references.INVALID),
    }, status=status)


@roles_allowed(CURATOR, ADMIN)
def judge_references_page(request, pk):
    """GET: per item of a frozen version, its judge references and the people's explanations that may
    become one. POST `approve` with `candidate` tokens (bulk), or `approve_voted`: approve them."""
    version = get_object_or_404(annotation_selectors.versions(), pk=pk)
    if request.method == "POST":
        try:
            if request.POST.get("action") == "approve_voted":
                made = references.approve_voted(request.user, version)
            else:
                made = references.approve(request.user, version, request.POST.getlist("candidate"))
        except judge_references.ReferenceError as exc:
            return references_page(request, version, status=400, error=_message(exc))
        messages.success(request, f"{len(made)} explanation{'s' if len(made) != 1 else ''} approved as judge "
                                  "reference(s).")
        return redirect("judge-references", pk=version.pk)
    return references_page(request, version)


@roles_allowed(CURATOR, ADMIN)
@require_POST
def judge_reference_revoke(request, pk):
    reference = selectors.judge_reference(pk)
    if reference is None:
        raise Http404("No such judge reference.")
    try:
        judge_references.revoke(request.user, reference, request.POST.get("reason", ""))
    except judge_references.ReferenceError as exc:
        return references_page(request, reference.item.version, status=400, error=_message(exc))
    messages.success(request, f"Judge reference #{reference.pk} revoked.")
    return redirect("judge-references", pk=reference.item.version_id)


# --- Failure tags ------------------------------------------------------------------------------

def _factors(run) -> list:
    return list(failure_analysis.factors_of(failure_analysis.benchmark_of(run)).values())


def failures_page(request, run, *, status: int = 200, error: str = ""):
    found = failure_analysis.wrong_predictions(run)
    shown = request.GET.get("factor", "")
    if shown == "untagged":
        found = [entry for entry in found if not entry.factor]
    elif shown:
        found = [entry for entry in found if entry.factor == shown]
    page = Paginator(found, PER_PAGE).get_page(request.GET.get("page"))
    return render(request, "frontend/results_failures.html", {
        "run": run, "label": results.run_label(run), "factors": _factors(run), "page": page, "shown": shown,
        "distribution": failure_analysis.distribution(run), "error": error,
        "next": request.get_full_path() if request.method == "GET" else reverse("results-run-failures", args=[run.pk]),
        "may_read_results": has_role(request.user, RESEARCHER, ADMIN),
    }, status=status)


@roles_allowed(*TAGGERS)
def results_failures(request, pk):
    """A run's wrong predictions, each with its current failure factor and a form to tag it."""
    run = run_of(pk)
    if not failure_analysis.taggable(run):
        raise Http404(f"{run.version.benchmark.slug} declares no failure factors.")
    return failures_page(request, run)


@roles_allowed(*TAGGERS)
@require_POST
def prediction_failure_tag(request, pk):
    """Tag a wrong prediction with a failure factor (`factor`; empty clears it) and a `note`; back to `next`."""
    prediction = selectors.prediction_for_tagging(pk)
    if prediction is None:
        raise Http404("No such prediction.")
    try:
        made = failure_analysis.tag(request.user, prediction, request.POST.get("factor", ""),
                                    request.POST.get("note", ""))
    except failure_analysis.FailureTagError as exc:
        return failures_page(request, prediction.run, status=400, error=_message(exc))
    messages.success(request, f"Prediction {prediction.request_id} tagged: {made.factor or 'tag cleared'}.")
    target = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()},
                                           require_https=request.is_secure()):
        target = reverse("results-run-failures", args=[prediction.run_id])
    return redirect(target)


# --- People's verdicts on judged answers -------------------------------------------------------------

def _next(request, fallback: str) -> str:
    target = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()},
                                           require_https=request.is_secure()):
        return fallback
    return target


def human_answers_page(request, version, *, status: int = 200, error: str = ""):
    rows, used = human_verdicts.answer_rows(version)
    page = Paginator(rows, PER_PAGE).get_page(request.GET.get("page"))
    return render(request, "frontend/human_answers.html", {
        "version": version, "page": page, "total": len(rows), "judge": used, "error": error,
        "labels": human_verdicts.labels_for(version), "agreements": human_verdicts.agreements(version),
        "next": request.get_full_path() if request.method == "GET" else reverse("results-human-answers",
                                                                                args=[version.pk]),
        "may_read_results": has_role(request.user, RESEARCHER, ADMIN),
    }, status=status)


@roles_allowed(*human_verdicts.GIVERS)
def results_human_answers(request, pk):
    """People's free-text baseline answers of a version with the judge's verdict on each and a form for
    the reader's own verdict (the judge-vs-people agreement reads these)."""
    version = get_object_or_404(annotation_selectors.versions(), pk=pk)
    return human_answers_page(request, version)


@roles_allowed(*human_verdicts.GIVERS)
@require_POST
def human_answer_verdict(request, pk):
    """Record the reader's verdict (`label`, `note`) on a person's baseline answer (a submission)."""
    answer = human_verdicts.human_answer(pk)
    if answer is None:
        raise Http404("No judged answer of a human baseline with this id.")
    version = human_eval.version_of(answer.study)
    try:
        made = human_verdicts.record_on_answer(request.user, answer, request.POST.get("label", ""),
                                               request.POST.get("note", ""))
    except human_verdicts.VerdictError as exc:
        return human_answers_page(request, version, status=400, error=_message(exc))
    messages.success(request, f"Verdict on the answer to {answer.request.request_id}: {made.label or 'withdrawn'}.")
    return redirect(_next(request, reverse("results-human-answers", args=[version.pk])))


@roles_allowed(*human_verdicts.GIVERS)
@require_POST
def prediction_human_verdict(request, pk):
    """Record the reader's verdict (`label`, `note`) on a model's answer; back to `next` (the drill-down)."""
    prediction = selectors.prediction_for_tagging(pk)
    if prediction is None:
        raise Http404("No such prediction.")
    try:
        made = human_verdicts.record_on_prediction(request.user, prediction, request.POST.get("label", ""),
                                                   request.POST.get("note", ""))
    except human_verdicts.VerdictError as exc:
        return render(request, "frontend/verdict_refused.html", {"error": _message(exc), "prediction": prediction},
                      status=400)
    messages.success(request, f"Verdict on {prediction.request_id} (sample {prediction.sample_index}): "
                              f"{made.label or 'withdrawn'}.")
    return redirect(_next(request, reverse("results-run", args=[prediction.run_id])))
