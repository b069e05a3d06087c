"""MAIA statements for curators.

- `/maia/versions/<id>/statements/`: the pairs of a version whose latest check fails, with the pair
  checks' totals; "Run statement checks" (POST `…/statements/check/`) queues the checks' job
  (`annotation.benchmarks.maia.statement_checks`); a failing false statement is rewritten
  (`/maia/items/<id>/statements/<index>/`, POST, which re-runs the structural check) or regenerated
  (POST `…/statements/regenerate/` with `pair` = "<item id>:<index>" and the model picker's fields:
  a new proposal, accepted in the proposals queue like any other; answered in JSON like
  `/generation/start/`).
- `/maia/versions/<id>/statement-generation/`: the console that starts statement generation over a
  curation version (POST `…/statement-generation/start/`, `statements` = `true` or `false`, with the
  model picker; JSON), with the version's questions, their stages and the proposal sets.

Services: `annotation.benchmarks.maia.statements`, `.statement_generation`, `.statement_checks`,
`.minimal_pairs`; reads: `.statement_console`.
"""

from urllib.parse import urlencode

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import Http404, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST, require_safe

from annotation.benchmarks.maia import (
    minimal_pairs,
    statement_checks,
    statement_console,
    statement_generation,
    statements,
)
from config.permissions import roles_allowed
from config.roles import ADMIN, CURATOR
from frontend.proposal_views import job_answer, model_choice, picker_context
from generation import model_registry
from generation.proposals import ProposalError
from generation.registered_models import Use

CURATORS = (CURATOR, ADMIN)


def _version(version_id: int):
    version = minimal_pairs.statement_version(version_id)
    if version is None:
        raise Http404("No such version.")
    return version


def queue_url(kind: str) -> str:
    return reverse("generation") + "?" + urlencode({"kind": kind})


def _statements_page(request, version, *, error: str = "", status: int = 200):
    return render(request, "maia/statements.html", {
        "version": version, "failures": minimal_pairs.failing_pairs(version),
        "bounds": minimal_pairs.Bounds(), "max_length": minimal_pairs.MAX_STATEMENT_LENGTH,
        "report": statement_checks.report(version), "jobs": statement_checks.recent_jobs(version),
        "nli_default": statement_checks.default_nli_model(), "nli_models": model_registry.entries(Use.NLI),
        "false_queue_url": queue_url(statement_generation.FALSE_KIND), "error": error, **picker_context()},
        status=status)


@roles_allowed(*CURATORS)
@require_safe
def failing_statements(request, version_id: int):
    return _statements_page(request, _version(version_id))


@roles_allowed(*CURATORS)
@require_POST
def edit_statement(request, item_id: int, index: int):
    item = minimal_pairs.statement_item(item_id)
    if item is None:
        raise Http404("No such question.")
    try:
        check = statements.edit_false_statement(request.user, item, index, request.POST.get("text", ""))
    except ValidationError as exc:
        return _statements_page(request, item.version, error=" ".join(exc.messages), status=400)
    if check.ok:
        messages.success(request, f"Statement {index + 1} of {item.external_id} saved: {check.note()}.")
    else:
        messages.warning(request, f"Statement {index + 1} of {item.external_id} saved, but it still fails: "
                                  f"{check.note()}.")
    return redirect("maia-statements", version_id=item.version_id)


@roles_allowed(*CURATORS)
@require_POST
def run_checks(request, version_id: int):
    """Queue the checks of the version's pairs that wait for one; back to the page with the job, or 400."""
    version = _version(version_id)
    try:
        job = statement_checks.start_checks(version, request.user, request.POST.get("nli_model", ""))
    except ValidationError as exc:
        return _statements_page(request, version, error=" ".join(exc.messages), status=400)
    messages.success(request, f"Statement checks queued as job #{job.pk}.")
    return redirect("maia-statements", version_id=version.pk)


def _error(message: str, status: int = 400) -> JsonResponse:
    return JsonResponse({"error": message}, status=status)


def _pair(value: str) -> tuple[int, int]:
    item_id, _, index = (value or "").partition(":")
    if not (item_id.isdigit() and index.isdigit()):
        raise ProposalError("Choose the pair to regenerate.")
    return int(item_id), int(index)


@roles_allowed(*CURATORS)
@require_POST
def regenerate(request, version_id: int):
    """A new false-statement proposal for one pair (`pair`) by the picked model; 201 with the job, 404 for a
    question not in the version, 400 with the reason."""
    version = _version(version_id)
    try:
        item_id, index = _pair(request.POST.get("pair", ""))
        item = minimal_pairs.statement_item(item_id)
        if item is None or item.version_id != version.pk:
            return _error(f"{version.label} has no question #{item_id}.", 404)
        proposal_set = statement_generation.regenerate_false_statement(item, index, user=request.user,
                                                                       **model_choice(request.POST, request.user))
    except ProposalError as exc:
        return _error(str(exc))
    return job_answer(proposal_set, 201)


@roles_allowed(*CURATORS)
@require_safe
def console(request, version_id: int):
    version = _version(version_id)
    return render(request, "maia/statement_console.html", {
        "version": version, "questions": statement_console.questions(version),
        "sets": statement_console.proposal_sets(version)[:100], "counts": statement_console.counts(version),
        "true_queue_url": queue_url(statement_generation.TRUE_KIND),
        "false_queue_url": queue_url(statement_generation.FALSE_KIND), **picker_context()})


@roles_allowed(*CURATORS)
@require_POST
def generate(request, version_id: int):
    """True (`statements=true`) or false (`statements=false`) statement proposals over the version by the
    picked model; 201 with the job, or 400 with the reason."""
    version = _version(version_id)
    start = statement_generation.STARTERS.get(request.POST.get("statements", ""))
    if start is None:
        return _error("Choose true or false statements.")
    try:
        proposal_set = start(version, user=request.user, **model_choice(request.POST, request.user))
    except ProposalError as exc:
        return _error(str(exc))
    return job_answer(proposal_set, 201)
