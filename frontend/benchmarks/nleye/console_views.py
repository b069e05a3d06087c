"""The NL-EYE curation console, for curators: the triplets under curation per pool version and stage
(`/nleye/triplets/`), one triplet's way through the pipeline (`/nleye/triplets/<item id>/`: its scenes,
its approved prompts with their provenance, its three image slots with links to the image studio, its
explanation and validation), and prompt augmentation started for chosen triplets with the proposal
queue's model picker (`/nleye/triplets/augment/`, answered in JSON like `/generation/start/`).

The reads are `annotation.benchmarks.nleye.triplets`; augmentation is
`annotation.benchmarks.nleye.prompts.start_augmentation`; the proposals it makes are decided in the
proposals queue (`/generation/`), which shows each prompt as a word-level diff against its scene.
"""

from urllib.parse import urlencode

from django.http import Http404, JsonResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_POST, require_safe

from annotation.benchmarks.nleye import prompts, stages, triplets
from annotation.curation_models import CurationRecord
from config.permissions import roles_allowed
from config.roles import ADMIN, CURATOR
from frontend.proposal_views import job_answer, model_choice, picker_context
from generation.proposals import ProposalError
from generation.text_diff import word_diff

RECENT_PROPOSALS = 10


def studio_url(item_id: int, slot: str) -> str:
    """The image studio of one slot of a triplet."""
    return reverse("studio-slot", kwargs={"item_id": item_id, "slot": slot})


def step_urls(item_id: int) -> dict:
    """The triplet's explanation and validation pages."""
    return {"explain": reverse("nleye-triplet-explain", kwargs={"item_id": item_id}),
            "validate": reverse("nleye-triplet-validate", kwargs={"item_id": item_id})}


def _filters(query) -> dict:
    """{"version": id or None, "stage": stage or ""} from the query string; ValueError when one is none."""
    version = (query.get("version") or "").strip()
    stage = (query.get("stage") or "").strip()
    if version and not version.isdigit():
        raise ValueError(f"Unknown version {version!r}: a version is chosen by its number.")
    if stage and stage not in stages.LABELS:
        raise ValueError(f"Unknown stage {stage!r}; use one of {', '.join(stages.LABELS)}.")
    return {"version": int(version) if version else None, "stage": stage}


@roles_allowed(CURATOR, ADMIN)
@require_safe
def triplets_page(request):
    try:
        chosen = _filters(request.GET)
    except ValueError as exc:
        return render(request, "nleye/triplets.html", {"error": str(exc)}, status=400)
    versions = list(triplets.pool_versions())
    if chosen["version"] is not None and chosen["version"] not in {v.pk for v in versions}:
        return render(request, "nleye/triplets.html",
                      {"error": f"Version #{chosen['version']} holds no NL-EYE triplet under curation."}, status=404)
    counts = triplets.stage_counts(chosen["version"])
    rows = triplets.listed(**chosen)
    return render(request, "nleye/triplets.html", {
        "rows": rows, "versions": versions, "filters": chosen,
        "stages": [(value, name, counts.get(value, 0)) for value, name in stages.STAGES],
        "slots": stages.SLOTS, "queue_url": reverse("generation") + "?" + urlencode({"kind": prompts.KIND}),
        **picker_context(),
    })


@roles_allowed(CURATOR, ADMIN)
@require_safe
def triplet_page(request, item_id):
    try:
        triplet = triplets.triplet(item_id)
    except CurationRecord.DoesNotExist:
        raise Http404(f"Item #{item_id} is not an NL-EYE triplet under curation.") from None
    slots = [{"slot": slot, "studio_url": studio_url(item_id, slot.name),
              "diff": word_diff(slot.scene, slot.prompt) if slot.prompt else None} for slot in triplet.slots]
    return render(request, "nleye/triplet.html", {
        "triplet": triplet, "item": triplet.item, "slots": slots, "stages": stages.STAGES,
        "stage_index": [value for value, _ in stages.STAGES].index(triplet.record.stage)
        if triplet.record.stage in stages.LABELS else -1,
        "proposals": list(triplets.prompt_proposals(item_id)[:RECENT_PROPOSALS]),
        "queue_url": reverse("generation") + "?" + urlencode({"kind": prompts.KIND}),
        "steps": step_urls(item_id), **picker_context(),
    })


def _item_ids(data) -> list[int]:
    raw = data.getlist("item")
    if not raw:
        raise ProposalError("Choose at least one triplet.")
    if not all(value.strip().isdigit() for value in raw):
        raise ProposalError("Triplets are chosen by their item numbers.")
    return sorted({int(value) for value in raw})


@roles_allowed(CURATOR, ADMIN)
@require_POST
def augment(request):
    """Prompt proposals for the chosen triplets (`item`, repeated; optional `components` and `environment`)
    by the picked model; 201 with the job, or 400 with the reason."""
    data = request.POST
    try:
        proposal_set = prompts.start_augmentation(
            _item_ids(data), user=request.user, components=data.get("components", ""),
            environment=data.get("environment", ""), **model_choice(data, request.user))
    except ProposalError as exc:
        return JsonResponse({"error": str(exc)}, status=400)
    return job_answer(proposal_set, 201)
