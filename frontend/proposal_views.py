"""The curator's proposals queue (`/generation/`): every model proposal grouped by its set, with the
library media it was made from, decided one by one (accept, correct through a form shaped like the
task kind's fields, reject with a reason) or in bulk; filters by outcome, parse status, task kind and
model; a form that starts a proposal job (task kind, inputs, and a model picked from the model registry,
`generation.model_registry`) with its progress; a form that imports outputs made elsewhere (a JSON Lines
file and who wrote them, `generation.proposal_import`), whose refusals are listed by row.

The page is server-rendered; frontend/static/frontend/proposals.js sends its forms with fetch and
shows the answers in place. The POST endpoints answer JSON: 200/201 with what changed, or a 4xx with
an `error` a person can read. Decisions go through `generation.proposals.decide`, jobs through
`generation.proposals.start_proposals` / `start_generation`. Curators and admins only.
"""

from urllib.parse import urlencode

from django.core.paginator import Paginator
from django.http import JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST, require_safe

from annotation import proposal_media, selectors
from annotation.crowd import proposal_review
from annotation.crowd.errors import CrowdError
from annotation.models import Image, Video
from config.permissions import roles_allowed
from config.roles import ADMIN, CURATOR
from generation import model_registry, proposal_import, proposals
from generation import selectors as generation_selectors
from generation.models import Proposal, ProposalDecision
from generation.registered_models import Use

PER_PAGE = 50
MAX_IMPORT_BYTES = 20 * 1024 * 1024
FILTERS = ("state", "output", "kind", "model")
LIBRARY_CHOICES = 200  # the newest ready videos and images offered as inputs
VERDICTS = ProposalDecision.Verdict


def _error(message: str, status: int = 400) -> JsonResponse:
    return JsonResponse({"error": message}, status=status)


def _filters(query) -> dict:
    """The queue's filters from the query string; ValueError for an outcome or status that is none."""
    chosen = {name: query.get(name, "").strip() for name in FILTERS}
    if chosen["state"] and chosen["state"] not in Proposal.Outcome.values:
        raise ValueError(f"Unknown state {chosen['state']!r}; use one of {', '.join(Proposal.Outcome.values)}.")
    if chosen["output"] and chosen["output"] not in Proposal.Status.values:
        raise ValueError(f"Unknown output {chosen['output']!r}; use one of {', '.join(Proposal.Status.values)}.")
    return chosen


def _task(name: str):
    try:
        return proposals.task_kind(name)
    except proposals.ProposalError:
        return None  # a kind no longer registered: shown, but not correctable here


def _row(proposal: Proposal, media: list) -> dict:
    """What the page shows of one proposal: its media, inputs, fields and the correction form."""
    task = _task(proposal.task_kind)
    current = proposal.final_fields or proposal.fields or {}
    return {
        "proposal": proposal, "task": task, "media": media,
        "inputs": task.shown_inputs(proposal.inputs) if task else {},
        "fields": [(spec, current.get(spec.name, "")) for spec in task.fields] if task else [],
        "comparisons": task.comparisons(proposal.inputs, current) if task else [],
        "flags": task.flags_for(current, proposal.inputs) if task and proposal.status == Proposal.Status.OK else [],
        "decisions": list(proposal.decisions.all()),
        "settled": proposal.outcome != Proposal.Outcome.UNDECIDED,
    }


@roles_allowed(CURATOR, ADMIN)
@require_safe
def queue_page(request):
    try:
        chosen = _filters(request.GET)
    except ValueError as exc:
        return render(request, "frontend/generation.html", {"error": str(exc), "filters": {}}, status=400)
    return render(request, "frontend/generation.html", _queue_context(request, chosen))


def _queue_context(request, chosen: dict) -> dict:
    page = Paginator(generation_selectors.queue_proposals(**chosen), PER_PAGE).get_page(request.GET.get("page"))
    media = proposal_media.media_for(page.object_list)
    kinds = proposals.task_kinds()
    return {
        "page": page, "rows": [_row(p, media.get(p.pk, [])) for p in page.object_list],
        "filters": chosen, "filter_query": urlencode({k: v for k, v in chosen.items() if v}),
        "states": Proposal.Outcome.choices, "outputs": Proposal.Status.choices,
        "choices": generation_selectors.queue_choices(),
        "task_kinds": sorted(kinds.values(), key=lambda task: task.label),
        "media_kinds": [name for name, task in kinds.items() if "media" in task.required_inputs],
        **picker_context(), "sets": generation_selectors.proposal_sets()[:100],
        "videos": selectors.library_assets(Video, status=Video.Status.READY)[:LIBRARY_CHOICES],
        "images": selectors.library_assets(Image, status=Image.Status.READY)[:LIBRARY_CHOICES],
        "frames_policy": proposal_media.DEFAULT_FRAMES, "imported_backend": proposals.IMPORTED_BACKEND,
        "import_form": {},
    }


def _import_refused(request, message: str, problems: list, form: dict):
    context = _queue_context(request, dict.fromkeys(FILTERS, ""))
    context.update({"import_error": message, "import_problems": problems, "import_form": form})
    return render(request, "frontend/generation.html", context, status=400)


@roles_allowed(CURATOR, ADMIN)
@require_POST
def import_outputs(request):
    """Import a JSON Lines file of outputs made elsewhere (`task`, `file`, `model_id`, optional `revision` and
    `name`): redirects to the queue showing the new set, or 400 with the page and the refusals by row."""
    data = request.POST
    form = {name: data.get(name, "").strip() for name in ("task", "model_id", "revision", "name")}
    upload = request.FILES.get("file")
    if upload is None:
        return _import_refused(request, "Choose the file of outputs to import.", [], form)
    if upload.size > MAX_IMPORT_BYTES:
        return _import_refused(request, f"The file is larger than {MAX_IMPORT_BYTES // (1024 * 1024)} MB.", [], form)
    try:
        text = upload.read().decode("utf-8")
    except UnicodeDecodeError:
        return _import_refused(request, "The file is not UTF-8 text.", [], form)
    try:
        made = proposal_import.import_proposals(form["task"], proposal_import.rows_from_jsonl(text),
                                                user=request.user, model_id=form["model_id"],
                                                revision=form["revision"], name=form["name"])
    except proposal_import.ImportRefused as exc:
        return _import_refused(request, "Nothing was imported: these rows are refused.", exc.problems, form)
    except proposals.ProposalError as exc:
        return _import_refused(request, str(exc), [], form)
    return redirect(reverse("generation") + "?" + urlencode({"kind": made.task_kind, "model": made.model_id}))


def _proposal_or_404(pk: int):
    try:
        return generation_selectors.proposal(pk)
    except Proposal.DoesNotExist:
        return None


def _outcome(proposal: Proposal) -> dict:
    proposal.refresh_from_db()
    return {"id": proposal.pk, "outcome": proposal.outcome, "outcome_label": proposal.get_outcome_display(),
            "final_fields": proposal.final_fields}


@roles_allowed(CURATOR, ADMIN)
@require_POST
def decide_one(request, pk):
    """Accept, correct (`field_<name>` per field of the kind) or reject (`reason`) one proposal; a kind
    with `rejection_reasons` takes the named one in `criterion`."""
    proposal = _proposal_or_404(pk)
    if proposal is None:
        return _error(f"There is no proposal #{pk}.", 404)
    verdict = request.POST.get("verdict", "")
    reason = request.POST.get("reason", "")
    try:
        fields = None
        if verdict == VERDICTS.CORRECT:
            task = proposals.task_kind(proposal.task_kind)
            fields = proposals.typed_correction(
                task, {spec.name: request.POST.get(f"field_{spec.name}", "") for spec in task.fields})
        proposals.decide(proposal, request.user, verdict, fields=fields, reason=reason,
                         criterion=request.POST.get("criterion", ""))
    except proposals.ProposalError as exc:
        return _error(str(exc))
    result = _outcome(proposal)
    result["message"] = f"Proposal #{pk}: {result['outcome_label'].lower()}."
    return JsonResponse(result)


def _selected_ids(request) -> list[int]:
    raw = request.POST.getlist("proposal")
    if not raw:
        raise ValueError("Select at least one proposal.")
    if not all(value.strip().isdigit() for value in raw):
        raise ValueError("Proposal ids are whole numbers.")
    return sorted({int(value) for value in raw})


@roles_allowed(CURATOR, ADMIN)
@require_POST
def decide_many(request):
    """Accept or reject (with one `reason`) every selected proposal (`proposal`, repeated)."""
    verdict = request.POST.get("verdict", "")
    if verdict not in (VERDICTS.ACCEPT, VERDICTS.REJECT):
        return _error("In bulk, proposals are accepted or rejected; correct them one by one.")
    reason = request.POST.get("reason", "").strip()
    if verdict == VERDICTS.REJECT and not reason:
        return _error("A rejection needs a reason.")
    try:
        ids = _selected_ids(request)
    except ValueError as exc:
        return _error(str(exc))
    found = list(generation_selectors.proposals_by_id(ids))
    missing = sorted(set(ids) - {p.pk for p in found})
    if missing:
        return _error(f"There is no proposal #{', #'.join(map(str, missing))}.", 404)
    decided, refused = proposals.decide_many(found, request.user, verdict, reason_for=lambda proposal: reason)
    verb = "accepted" if verdict == VERDICTS.ACCEPT else "rejected"
    return JsonResponse({
        "decided": [_outcome(p) for p in found if p.pk in decided],
        "refused": {str(pk): why for pk, why in refused.items()},
        "message": f"{len(decided)} proposal(s) {verb}" + (f", {len(refused)} refused." if refused else "."),
    }, status=200 if decided else 400)


def _positive_int(value: str, what: str, default: int) -> int:
    value = (value or "").strip()
    if not value:
        return default
    if not value.isdigit() or int(value) < 1:
        raise proposals.ProposalError(f"{what} must be a whole number of at least 1.")
    return int(value)


def _entries(data) -> list[dict]:
    """The new set's inputs: those of an existing set (`from_set`) or library media (`video`/`image`)."""
    source = data.get("from_set", "").strip()
    if source:
        if not source.isdigit():
            raise proposals.ProposalError("Choose the set whose inputs to use.")
        found = generation_selectors.proposal_sets().filter(pk=int(source)).first()
        if found is None:
            raise proposals.ProposalError(f"There is no proposal set #{source}.")
        return proposals.set_entries(found)
    try:
        return proposal_media.library_entries(data.getlist("video"), data.getlist("image"),
                                              frames_policy=data.get("frames", "").strip()
                                              or proposal_media.DEFAULT_FRAMES)
    except ValueError as exc:  # ProposalInputError, or an id that is not a number
        raise proposals.ProposalError(str(exc) if isinstance(exc, proposal_media.ProposalInputError)
                                      else "Media ids are whole numbers.") from None


def job_answer(proposal_set, status: int) -> JsonResponse:
    """What a page that started a proposal job answers: the set, its job and where to follow them."""
    job = proposal_set.job
    queue = {"kind": proposal_set.task_kind, "model": proposal_set.model_id}
    return JsonResponse({"set": proposal_set.pk, "job": job.pk, "job_url": reverse("job-detail", kwargs={"pk": job.pk}),
                         "queue_url": reverse("generation") + "?" + urlencode(queue),
                         "message": f"{proposal_set.name}: job #{job.pk} queued."}, status=status)


def model_choice(data, user) -> dict:
    """The model picker's fields (`model_id`: a registered model; `backend_options`, `max_new_tokens`,
    `batch_size`, `name`; `backend` and `revision`, when sent, must be the entry's) as keyword arguments of
    `start_proposals`; ProposalError for a bad value or a model or option the registry refuses."""
    max_new_tokens = _positive_int(data.get("max_new_tokens", ""), "Max new tokens", 0)
    try:
        chosen = model_registry.choose_for(
            user, data.get("model_id", ""), use=Use.PROPOSALS, backend=data.get("backend", "").strip(),
            revision=data.get("revision", "").strip(),
            options=model_registry.options_from_text(data.get("backend_options", "")))
    except model_registry.ModelRefused as exc:
        raise proposals.ProposalError(str(exc)) from None
    return {**chosen.service_kwargs(), "params": {"max_new_tokens": max_new_tokens} if max_new_tokens else None,
            "batch_size": _positive_int(data.get("batch_size", ""), "Batch size", 8),
            "name": data.get("name", "").strip()}


def picker_context() -> dict:
    """What the model picker template (`frontend/_model_picker.html`) shows."""
    return {"models": model_registry.entries(Use.PROPOSALS)}


@roles_allowed(CURATOR, ADMIN)
@require_POST
def start(request):
    """A new proposal set (task kind, inputs, backend, model) and its job; 201, or 400 with the reason."""
    data = request.POST
    try:
        proposal_set = proposals.start_proposals(data.get("task", ""), _entries(data), user=request.user,
                                                 **model_choice(data, request.user))
    except proposals.ProposalError as exc:
        return _error(str(exc))
    return job_answer(proposal_set, 201)


@roles_allowed(CURATOR, ADMIN)
@require_POST
def generate(request, pk):
    """Start (or resume) the job that fills in a set's pending inputs."""
    proposal_set = generation_selectors.proposal_sets().filter(pk=pk).first()
    if proposal_set is None:
        return _error(f"There is no proposal set #{pk}.", 404)
    try:
        proposals.start_generation(proposal_set, user=request.user)
    except proposals.ProposalError as exc:
        return _error(str(exc), 409)
    return job_answer(proposal_set, 201)


@roles_allowed(CURATOR, ADMIN)
@require_POST
def review_study(request, pk):
    """A crowd review study of the set's parsed, undecided proposals (`annotation.crowd.proposal_review`)."""
    proposal_set = generation_selectors.proposal_sets().filter(pk=pk).first()
    if proposal_set is None:
        return _error(f"There is no proposal set #{pk}.", 404)
    try:
        made = proposal_review.create_review_study(
            generation_selectors.queue_proposals().filter(proposal_set=proposal_set), curator=request.user,
            name=f"Review: {proposal_set.name}"[:200])
    except CrowdError as exc:
        return _error(exc.message, exc.status)
    study = made.study
    return JsonResponse({"study": study.slug, "study_url": reverse("crowd-study-detail", kwargs={"slug": study.slug}),
                         "message": f"Review study {study.name} opened with {len(made.items)} item(s); "
                                    f"{len(made.excluded)} left out."}, status=201)
