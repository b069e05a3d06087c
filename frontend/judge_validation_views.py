"""Validating a run's judge against people (`evaluation.validation_samples`): a researcher draws a
sample from the run's results page, raters rate its answers blind on their own page, and the sample's
page and the run's results page show Fleiss' kappa and the pairwise agreement."""

from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from config.permissions import roles_allowed
from config.roles import ADMIN, RESEARCHER
from evaluation import human_verdicts, validation_samples
from frontend.results_views import run_of, run_page


def _sample(pk):
    sample = validation_samples.sample_of(pk)
    if sample is None:
        raise Http404("No such validation sample.")
    return sample


@roles_allowed(RESEARCHER, ADMIN)
@require_POST
def create_sample(request, pk):
    run = run_of(pk)
    try:
        sample = validation_samples.create_sample(request.user, run, size=request.POST.get("size"),
                                                  seed=request.POST.get("seed", "0"),
                                                  judge_model=request.POST.get("judge_model", ""))
    except validation_samples.SampleError as exc:
        return run_page(request, run, status=exc.status, error=str(exc))
    return redirect("judge-validation-sample", pk=sample.pk)


@roles_allowed(RESEARCHER, ADMIN)
def sample_page(request, pk):
    sample = _sample(pk)
    return render(request, "frontend/judge_validation.html",
                  {"found": validation_samples.sample_report(sample), "run": sample.run})


@roles_allowed(*human_verdicts.GIVERS)
def rate_page(request, pk):
    """GET: the sampled answers with the rater's own verdicts. POST: one verdict (once per answer)."""
    sample = _sample(pk)
    error, status = "", 200
    if request.method == "POST":
        try:
            validation_samples.rate(sample, request.user, request.POST.get("item"), request.POST.get("label"))
            return redirect("judge-validation-rate", pk=sample.pk)
        except validation_samples.SampleError as exc:
            error, status = str(exc), exc.status
    rows = validation_samples.rating_rows(sample, request.user)
    return render(request, "frontend/judge_validation_rate.html", {
        "sample": sample, "rows": rows, "labels": validation_samples.labels(sample), "error": error,
        "done": sum(1 for row in rows if row.label)}, status=status)


@roles_allowed(*human_verdicts.GIVERS)
def samples_page(request):
    """The validation samples, each with how many of its answers the viewer has rated."""
    return render(request, "frontend/judge_validation_samples.html",
                  {"samples": validation_samples.progress_of(request.user)})
