"""The CVRR-ES QA console, for curators (`/cvrr/qa/`): the captioned videos, QA generation started for
chosen videos with the proposals queue's model picker (`/cvrr/qa/generate/`, answered in JSON like
`/generation/start/`), a filtration study opened over a set's pairs (`/cvrr/qa/sets/<id>/filtration/`),
the filtration answers recorded as decisions (`/cvrr/qa/studies/<slug>/record/`), kept pairs sent
back to filtration (`/cvrr/qa/items/<id>/return/`) and the noise report (`/cvrr/qa/noise/`).

The filtration itself is the study's task page (`/work/<slug>/`): the video, the caption, the
dimension and its description, the pair and its flag, and keep / fix / remove with a reason.
Services: `annotation.benchmarks.cvrr.qa_generation`, `.filtration`, `.noise_report`; reads:
`.qa_console`.
"""

from urllib.parse import urlencode

from django.http import JsonResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_POST, require_safe

from annotation.benchmarks.cvrr import filtration, qa_console, qa_generation, stages
from annotation.benchmarks.cvrr.noise_report import noise_report
from annotation.crowd.errors import CrowdError
from config.permissions import roles_allowed
from config.roles import ADMIN, CURATOR
from frontend.proposal_views import job_answer, model_choice, picker_context
from generation.proposals import ProposalError


def _error(message: str, status: int = 400) -> JsonResponse:
    return JsonResponse({"error": message}, status=status)


def queue_url() -> str:
    return reverse("generation") + "?" + urlencode({"kind": qa_generation.KIND})


@roles_allowed(CURATOR, ADMIN)
@require_safe
def console(request):
    return render(request, "cvrr/qa.html", {
        "videos": qa_console.videos(), "sets": qa_console.proposal_sets()[:100], "studies": qa_console.studies(),
        "returned": qa_console.returned(), "queue_url": queue_url(), "default_pairs": qa_generation.DEFAULT_PAIRS,
        "max_pairs": qa_generation.MAX_PAIRS, "stage_labels": stages.LABELS, **picker_context(),
    })


def _item_ids(data) -> list[int]:
    raw = data.getlist("item")
    if not raw:
        raise ProposalError("Choose at least one captioned video.")
    if not all(value.strip().isdigit() for value in raw):
        raise ProposalError("Videos are chosen by their item numbers.")
    return sorted({int(value) for value in raw})


@roles_allowed(CURATOR, ADMIN)
@require_POST
def generate(request):
    """QA proposals for the chosen captioned videos (`item`, repeated; `pairs` per video) by the picked
    model; 201 with the job, or 400 with the reason."""
    data = request.POST
    try:
        proposal_set = qa_generation.start_qa_generation(
            _item_ids(data), user=request.user, pairs=data.get("pairs", ""), **model_choice(data, request.user))
    except ProposalError as exc:
        return _error(str(exc))
    return job_answer(proposal_set, 201)


def _study_answer(study, message: str, status: int, **extra) -> JsonResponse:
    return JsonResponse({"study": study.slug, "study_url": reverse("crowd-study-detail", kwargs={"slug": study.slug}),
                         "work_url": reverse("crowd-work", kwargs={"slug": study.slug}), "message": message, **extra},
                        status=status)


@roles_allowed(CURATOR, ADMIN)
@require_POST
def open_filtration(request, pk):
    """A filtration study over the set's parsed, undecided pairs; 201, 404 for an unknown set, 400 when
    none is ready."""
    proposal_set = qa_console.proposal_set(pk)
    if proposal_set is None:
        return _error(f"There is no CVRR-ES QA proposal set #{pk}.", 404)
    reviewers = request.POST.get("reviewers", "").strip() or "1"
    if not reviewers.isdigit() or not 1 <= int(reviewers) <= 10:
        return _error("Reviewers per pair is a whole number from 1 to 10.")
    try:
        made = filtration.create_filtration_study(
            qa_console.set_proposals(proposal_set), curator=request.user, k=int(reviewers),
            name=(request.POST.get("name", "").strip() or f"Filtration: {proposal_set.name}")[:200])
    except CrowdError as exc:
        return _error(exc.message, exc.status)
    return _study_answer(made.study, f"Filtration study {made.study.name} opened with {len(made.items)} pair(s); "
                                     f"{len(made.excluded)} left out.", 201)


@roles_allowed(CURATOR, ADMIN)
@require_POST
def record(request, slug):
    """Record the study's new filtration answers as decisions: kept and fixed pairs join the QA pool."""
    study = qa_console.study(slug)
    if study is None:
        return _error(f"There is no study {slug!r}.", 404)
    try:
        report = filtration.record_decisions(study, user=request.user)
    except CrowdError as exc:
        return _error(exc.message, exc.status)
    message = (f"{len(report['applied'])} decision(s) recorded, {report['already']} already, "
               f"{len(report['waiting'])} waiting for an expert's review, {len(report['invalid'])} invalid.")
    return _study_answer(study, message, 200, report={**report, "invalid": {str(k): v for k, v
                                                                            in report["invalid"].items()}})


@roles_allowed(CURATOR, ADMIN)
@require_POST
def send_back(request, item_id):
    """Send a kept pair back to filtration (`reason` required); 200, 404 for an item that is no kept pair."""
    item = qa_console.kept_item(item_id)
    if item is None:
        return _error(f"Item #{item_id} is no CVRR-ES QA pair kept in filtration.", 404)
    try:
        added = filtration.return_to_filtration(item, request.POST.get("reason", ""), request.user)
    except CrowdError as exc:
        return _error(exc.message, exc.status)
    study = added.study if added is not None else None
    message = (f"Pair #{item_id} is back in the filtration queue" +
               (f" ({study.name})." if study else ": it already waits for a review."))
    return JsonResponse({"item": item_id, "stage": stages.RETURNED, "message": message,
                         "study": study.slug if study else None}, status=200)


@roles_allowed(CURATOR, ADMIN)
@require_safe
def noise(request):
    """The noise report, over every QA proposal set or one (`?set=<id>`)."""
    chosen = request.GET.get("set", "").strip()
    proposal_set = None
    if chosen:
        if not chosen.isdigit():
            return render(request, "cvrr/noise.html", {"error": "A set is chosen by its number."},
                          status=400)
        proposal_set = qa_console.proposal_set(int(chosen))
        if proposal_set is None:
            return render(request, "cvrr/noise.html",
                          {"error": f"There is no CVRR-ES QA proposal set #{chosen}."}, status=404)
    return render(request, "cvrr/noise.html", {
        "report": noise_report(proposal_set), "proposal_set": proposal_set, "sets": qa_console.proposal_sets()[:100],
    })
