"""MAIA false statements for curators: the pairs of a version whose latest check fails
(`/maia/versions/<id>/statements/`), and a false statement rewritten on an unfrozen version
(`/maia/items/<id>/statements/<index>/`, POST), which re-runs the structural check.
Service: `annotation.benchmarks.maia.minimal_pairs`."""

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST, require_safe

from annotation.benchmarks.maia import minimal_pairs
from config.permissions import roles_allowed
from config.roles import ADMIN, CURATOR


@roles_allowed(CURATOR, ADMIN)
@require_safe
def failing_statements(request, version_id: int):
    version = minimal_pairs.statement_version(version_id)
    if version is None:
        raise Http404("No such version.")
    return render(request, "frontend/maia_statements.html", {
        "version": version, "failures": minimal_pairs.failing_pairs(version),
        "bounds": minimal_pairs.Bounds(), "max_length": minimal_pairs.MAX_STATEMENT_LENGTH})


@roles_allowed(CURATOR, ADMIN)
@require_POST
def edit_statement(request, item_id: int, index: int):
    item = minimal_pairs.statement_item(item_id)
    if item is None:
        raise Http404("No such question.")
    try:
        check = minimal_pairs.edit_false_statement(request.user, item, index, request.POST.get("text", ""))
    except ValidationError as exc:
        return render(request, "frontend/maia_statements.html", {
            "version": item.version, "failures": minimal_pairs.failing_pairs(item.version),
            "bounds": minimal_pairs.Bounds(), "max_length": minimal_pairs.MAX_STATEMENT_LENGTH,
            "error": " ".join(exc.messages)}, status=400)
    if check.ok:
        messages.success(request, f"Statement {index + 1} of {item.external_id} saved: {check.note()}.")
    else:
        messages.warning(request, f"Statement {index + 1} of {item.external_id} saved, but it still fails: "
                                  f"{check.note()}.")
    return redirect("maia-statements", version_id=item.version_id)
