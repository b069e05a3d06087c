"""The C-VQA-Real grammar pass for curators (SPEC §2 "C-VQA-Real Verification"):

- `/cvqa/versions/<id>/grammar/`: a counterfactuals version's questions with their current wording and the
  grammar pass accepted for them (before → after), the grammar proposal sets, and the form that starts a pass;
- `/cvqa/versions/<id>/grammar/start/` (POST, the model picker's fields): a grammar proposal per open question
  of the version; answered in JSON like `/generation/start/` (201 with the set and its job, or the refusal).

People decide on the suggestions in the proposals queue. Services: `annotation.benchmarks.cvqa.grammar`;
reads: `.grammar_console`.
"""

from django.http import Http404, JsonResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_POST, require_safe

from annotation.benchmarks.cvqa import grammar, grammar_console
from config.permissions import roles_allowed
from config.roles import ADMIN, CURATOR
from frontend.proposal_views import job_answer, model_choice, picker_context
from generation.proposals import ProposalError

CURATORS = (CURATOR, ADMIN)


def _version(version_id: int):
    try:
        return grammar.counterfactual_version(version_id)
    except ProposalError:
        raise Http404("No such counterfactuals version.") from None


@roles_allowed(*CURATORS)
@require_safe
def console(request, version_id: int):
    version = _version(version_id)
    rows = grammar_console.rows(version)
    return render(request, "cvqa/grammar.html", {
        "version": version, "rows": rows, "open": grammar_console.open_count(rows),
        "sets": grammar_console.proposal_sets(version)[:100],
        "queue_url": reverse("generation") + f"?kind={grammar.KIND}", **picker_context()})


@roles_allowed(*CURATORS)
@require_POST
def start(request, version_id: int):
    """Grammar suggestions over the version's open questions by the picked model; 201 with the job, or 4xx."""
    version = _version(version_id)
    try:
        proposal_set = grammar.start_grammar(version, user=request.user, **model_choice(request.POST, request.user))
    except ProposalError as exc:
        return JsonResponse({"error": str(exc)}, status=getattr(exc, "status", 400))
    return job_answer(proposal_set, 201)
