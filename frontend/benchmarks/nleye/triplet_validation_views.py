"""NL-EYE triplets under curation, for curators: the explanation and categorization page, the validation
page (a second curator's verdicts on the three images and on the plausibility) and a version's validation
state (what each triplet still lacks before the version can be frozen). The work is done by
`annotation.benchmarks.nleye.explanation` and `.validation`; these pages show it and pass the choices on."""

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404, redirect, render

from annotation.benchmarks.nleye import explanation, triplet_pages, triplets, validation
from annotation.models import FrozenError
from config.permissions import roles_allowed
from config.roles import ADMIN, CURATOR


def _triplet(item_id):
    return get_object_or_404(triplets.triplet_items(), pk=item_id)


def _explain_page(request, item, form=None, errors=(), status=200):
    form = form or explanation.ExplanationForm(initial=explanation.initial(item))
    return render(request, "nleye/explain.html", {
        **triplet_pages.triplet_view(validation.triplet_state(item)), "form": form, "errors": list(errors),
        "editable": not item.version.frozen}, status=status)


@roles_allowed(CURATOR, ADMIN)
def explain(request, item_id):
    """GET: the triplet and its explanation form. POST: write the explanation and categorization (400 with the
    form's errors, 409 on a frozen version; nothing is written then)."""
    item = _triplet(item_id)
    if request.method != "POST":
        return _explain_page(request, item)
    try:
        explanation.write_explanation(item.pk, request.POST, request.user)
    except explanation.ExplanationInvalid as exc:
        return _explain_page(request, item, form=exc.form, status=400)
    except FrozenError as exc:
        return _explain_page(request, item, form=explanation.ExplanationForm(request.POST), errors=exc.messages,
                             status=409)
    except ValidationError as exc:
        return _explain_page(request, item, form=explanation.ExplanationForm(request.POST), errors=exc.messages,
                             status=400)
    messages.success(request, f"The explanation of {item.external_id} is saved.")
    return redirect("nleye-triplet-explain", item_id=item.pk)


def _validate_page(request, item, errors=(), posted=None, status=200):
    return render(request, "nleye/validate.html", {
        **triplet_pages.triplet_view(validation.triplet_state(item), request.user, posted), "errors": list(errors),
        "verdict_choices": triplet_pages.VERDICT_CHOICES,
        "editable": not item.version.frozen}, status=status)


@roles_allowed(CURATOR, ADMIN)
def validate(request, item_id):
    """GET: the images with their scenes and prompts, the latest checks and the verdict form. POST: record the
    verdicts given (400 on bad input, 403 on one's own work, 409 when something changed meanwhile or the
    version is frozen; nothing is written then)."""
    item = _triplet(item_id)
    if request.method != "POST":
        return _validate_page(request, item)
    verdicts, seen = triplet_pages.verdicts_from_form(request.POST)
    try:
        validation.record_checks(item.pk, request.user, verdicts, seen)
    except validation.SecondPersonRule as exc:
        return _validate_page(request, item, exc.messages, request.POST, status=403)
    except (validation.ChangedMeanwhile, FrozenError) as exc:
        return _validate_page(request, _triplet(item_id), exc.messages, request.POST, status=409)
    except ValidationError as exc:
        return _validate_page(request, item, exc.messages, request.POST, status=400)
    messages.success(request, f"{len(verdicts)} check(s) of {item.external_id} recorded.")
    return redirect("nleye-triplet-validate", item_id=item.pk)


@roles_allowed(CURATOR, ADMIN)
def validation_state(request, pk):
    """A version's triplets with what each still lacks before the version can be frozen."""
    version = get_object_or_404(triplets.nleye_versions(), pk=pk)
    states = validation.version_states(version)
    return render(request, "nleye/validation_state.html", {
        "version": version, "gated": validation.is_gated(version),
        "rows": [triplet_pages.state_row(state) for state in states], "aspects": validation.ASPECTS,
        "validated": sum(state.validated for state in states)})
