"""C-VQA-Real counterfactuals for curators (seeds/001 §3.1; SPEC §2 "Generation"):

- `/cvqa/groups/`: the three groups (numerical direct, numerical indirect, boolean) with their in-context
  examples; `/cvqa/groups/<key>/`: one group's edit form (instruction, decomposition, examples);
- `/cvqa/sources/<id>/counterfactuals/`: the console of a sources version: its questions with their
  counterfactual item or waiting proposal, the proposal sets, and the form that starts a set (POST
  `…/counterfactuals/start/` with the model picker's fields, `group` for numerical questions, `target` and
  `max_examples`; answered in JSON like `/generation/start/`);
- `/cvqa/sources/items/<id>/indirect/`: write a numerical-indirect item by hand for one source question.

Services: `annotation.benchmarks.cvqa.counterfactual_groups`, `.counterfactual_generation`,
`.counterfactuals`; reads: `.counterfactual_console`.
"""

from django.contrib import messages
from django.http import Http404, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST, require_safe

from annotation.benchmarks.cvqa import counterfactual_console, counterfactuals
from annotation.benchmarks.cvqa import counterfactual_generation as generation
from annotation.benchmarks.cvqa import counterfactual_groups as groups
from config.permissions import roles_allowed
from config.roles import ADMIN, CURATOR
from frontend import category_editor
from frontend.benchmarks.cvqa import CRUMBS
from frontend.proposal_views import job_answer, model_choice, picker_context
from frontend.refusals import refused
from generation.proposals import ProposalError

CURATORS = (CURATOR, ADMIN)


def _refused(request, message: str, status: int):
    return refused(request, message, status, CRUMBS)


@roles_allowed(*CURATORS)
@require_safe
def groups_page(request):
    return render(request, "cvqa/groups.html", {"rows": groups.ensure_groups()})


group_page = category_editor.edit_view(category_editor.CategoryEditor(
    find=groups.group_row, blank_form=groups.form_for, save=groups.edit_group, refusal=groups.GroupError,
    invalid=groups.GroupInvalid, list_url="cvqa-groups",
    crumbs=(*CRUMBS, ("counterfactual groups", "cvqa-groups")), form_id="group-form"))


def _version(version_id: int):
    try:
        return generation.sources_version(version_id)
    except ProposalError:
        raise Http404("No such sources version.") from None


@roles_allowed(*CURATORS)
@require_safe
def console(request, version_id: int):
    version = _version(version_id)
    rows = counterfactual_console.rows(version)
    return render(request, "cvqa/counterfactual_console.html", {
        "version": version, "rows": rows, "open": sum(1 for r in rows if not r.counterfactual and not r.waiting),
        "sets": counterfactual_console.proposal_sets(version)[:100], "default_target": counterfactuals.DEFAULT_LABEL,
        "default_examples": generation.DEFAULT_EXAMPLES, "numerical_groups": groups.NUMERICAL_GROUPS,
        "queue_url": reverse("generation") + f"?kind={generation.KIND}", **picker_context()})


def _examples(value: str) -> int:
    value = (value or "").strip()
    if not value:
        return generation.DEFAULT_EXAMPLES
    if not value.isdigit():
        raise ProposalError("The number of examples is a whole number, 0 or more.")
    return int(value)


@roles_allowed(*CURATORS)
@require_POST
def generate(request, version_id: int):
    """Counterfactual proposals over the sources version by the picked model; 201 with the job, or 400."""
    version = _version(version_id)
    data = request.POST
    try:
        proposal_set = generation.start_counterfactuals(
            version, user=request.user, numerical_group=data.get("group", groups.DIRECT),
            target=data.get("target", ""), max_examples=_examples(data.get("max_examples", "")),
            **model_choice(data, request.user))
    except ProposalError as exc:
        return JsonResponse({"error": str(exc)}, status=getattr(exc, "status", 400))
    return job_answer(proposal_set, 201)


@roles_allowed(*CURATORS)
@require_http_methods(["GET", "HEAD", "POST"])
def write_indirect(request, item_id: int):
    """GET: the form for a numerical-indirect item of one source question. POST: write it (back to the
    console), or the form again with the refusal and its status (nothing written)."""
    source = counterfactuals.source_item(item_id)
    if source is None:
        raise Http404("No such source question.")
    context = {"source": source, "image": source.media.first(), "default_target": counterfactuals.DEFAULT_LABEL,
               "existing": counterfactuals.items_from([source.pk]).get(source.pk)}
    if request.method != "POST":
        return render(request, "cvqa/write_indirect.html", context)
    data = request.POST
    try:
        item = counterfactuals.write_indirect(request.user, source.pk, data.get("new_query", ""),
                                              data.get("new_answer", ""), presupposition=data.get("presupposition", ""),
                                              label=data.get("target", "") or counterfactuals.DEFAULT_LABEL)
    except counterfactuals.CounterfactualError as exc:
        return render(request, "cvqa/write_indirect.html", {**context, "error": str(exc), "posted": data},
                      status=exc.status)
    messages.success(request, f"{item.external_id} is written into {item.version.label}.")
    return redirect("cvqa-counterfactual-console", version_id=source.version_id)
