"""The researcher's evaluation runs: the list with its "Start a run" form, a run's page (configuration,
live progress, history, predictions), and cancel/resume. The options are those of `manage.py
evaluate`; the model and the describer are picked from the model registry (`generation.model_registry`);
`evaluation.runs.create_run` decides whether the options fit, and runs start on the Celery workers.
Live progress is polled from the API (`/api/runs/<id>/progress/`, frontend/static/frontend/runs.js)."""

import json

from django import forms
from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from annotation import selectors
from annotation.selectors import frozen_versions
from config.permissions import roles_allowed
from config.roles import ADMIN, RESEARCHER
from evaluation import benchmarks, results, runs, subsets
from evaluation.benchmarks.base import RELEASE_ORDER, parse_option_order
from evaluation.inputs import DEFAULT_FRAME_POLICY
from evaluation.models import EvaluationRun
from evaluation.run_control import cancel, may_control, resume, start_new_run, visible_runs
from evaluation.serializers import eta_text, frame_spec, percent
from generation import model_registry
from generation.registered_models import Use

RUNS_PER_PAGE = 25
PREDICTIONS_PER_PAGE = 50
NUMERIC_FIELDS = ("batch_size", "chunk_size", "limit", "n_samples", "temperature", "top_p", "max_new_tokens", "seed")
FRAME_EXAMPLES = ("uniform:8", "uniform:8@448", "uniform:16@336", "uniform:32", "first", "black:8")


def benchmark_choices(versions) -> dict:
    """{benchmark slug: {input_strategies, prompting_strategies, variants}} for the versions' benchmarks."""
    out = {}
    for slug in sorted({version.benchmark.slug for version in versions}):
        try:
            module = benchmarks.get(slug)
        except (KeyError, ImportError, AttributeError):
            continue
        out[slug] = {"input_strategies": list(module.input_strategies),
                     "prompting_strategies": list(module.prompting_strategies), "variants": list(module.variants)}
    return out


def union(choices: dict, key: str) -> list[tuple[str, str]]:
    """Every value of `key` across benchmarks, with the benchmarks that offer it (for the page's filter)."""
    seen: dict[str, list[str]] = {}
    for slug, lists in choices.items():
        for value in lists[key]:
            seen.setdefault(value, []).append(slug)
    return [(value, " ".join(slugs)) for value, slugs in seen.items()]


class RunForm(forms.Form):
    """What `manage.py evaluate` takes; types are checked here, the model against the registry and the fit
    with the benchmark by create_run (`evaluation.run_control.start_new_run`)."""

    version = forms.ModelChoiceField(queryset=selectors.versions(),
                                     empty_label="Choose a frozen version",
                                     error_messages={"invalid_choice": "There is no such benchmark version."})
    model_id = forms.CharField(label="Model", max_length=255)
    backend = forms.CharField(required=False)  # empty: the registered model's
    revision = forms.CharField(required=False, max_length=128)  # empty: the registered model's
    backend_options = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))
    input_strategy = forms.CharField(required=False)
    prompting = forms.CharField(required=False, initial="standard")
    option_order = forms.CharField(required=False, initial=RELEASE_ORDER, max_length=40,
                                   help_text="release, or shuffled:<seed>")
    frames = forms.CharField(required=False, max_length=120)
    variants = forms.MultipleChoiceField(required=False)
    batch_size = forms.IntegerField(initial=8)
    chunk_size = forms.IntegerField(initial=64)
    limit = forms.IntegerField(required=False, label="Limit (first N items)")
    subset = forms.CharField(required=False, max_length=100, label="Subset (a named subset of the version)")
    n_samples = forms.IntegerField(required=False, label="Samples per request")
    temperature = forms.FloatField(required=False)
    top_p = forms.FloatField(required=False, label="Top p")
    max_new_tokens = forms.IntegerField(required=False)
    seed = forms.IntegerField(initial=0)
    describer_model = forms.CharField(required=False, max_length=255)
    describer_backend = forms.CharField(required=False)

    def __init__(self, *args, variant_choices=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["variants"].choices = [(value, value) for value, _ in variant_choices]

    def clean_backend_options(self) -> dict:
        """One `key=value` per line (or separated by commas); values are read as JSON when they are JSON."""
        try:
            return model_registry.options_from_text(self.cleaned_data.get("backend_options") or "")
        except model_registry.ModelRefused as exc:
            raise forms.ValidationError(str(exc)) from None

    def clean_option_order(self) -> str:
        """`release` (also when left empty) or `shuffled:<seed>`; anything else is a form error."""
        try:
            return parse_option_order(self.cleaned_data.get("option_order"))
        except ValueError as exc:
            raise forms.ValidationError(str(exc)) from None

    def create_options(self) -> dict:
        """Keyword arguments for `runs.create_run` (besides the version, workers and user)."""
        data = self.cleaned_data
        describer = None
        if data["describer_model"]:
            describer = {"model_id": data["describer_model"], "backend": data["describer_backend"] or ""}
        return {
            "model_id": data["model_id"].strip(), "backend": data["backend"].strip(), "revision": data["revision"],
            "backend_options": data["backend_options"], "input_strategy": data["input_strategy"],
            "prompting": data["prompting"] or "standard", "option_order": data["option_order"],
            "frame_policy": data["frames"],
            "generation_params": {key: data.get(key) for key in runs.GENERATION_KEYS}, "seed": data["seed"],
            "variants": data["variants"], "limit": data["limit"], "n_samples": data["n_samples"],
            "batch_size": data["batch_size"], "chunk_size": data["chunk_size"], "describer": describer,
            "subset": (data.get("subset") or "").strip() or None,
        }


def _run_row(run: EvaluationRun) -> dict:
    return {"run": run, "frames": frame_spec(run), "percent": percent(run), "eta": eta_text(run) or "—"}


@roles_allowed(RESEARCHER, ADMIN)
def runs_page(request):
    versions = list(frozen_versions())
    choices = benchmark_choices(versions)
    variant_choices = union(choices, "variants")
    form = RunForm(request.POST or None, variant_choices=variant_choices)
    status = 200
    if request.method == "POST":
        if form.is_valid():
            try:
                run = start_new_run(form.cleaned_data["version"], user=request.user, **form.create_options())
            except runs.RunConfigError as exc:
                form.add_error(None, str(exc))
            else:
                messages.success(request, f"Run {run.pk} started: {run.total_predictions} predictions for "
                                          f"{run.total_requests} requests.")
                return redirect("run-detail", pk=run.pk)
        status = 400
    page = Paginator(visible_runs(), RUNS_PER_PAGE).get_page(request.GET.get("page"))
    context = {
        "page": page, "rows": [_run_row(run) for run in page], "form": form, "versions": versions,
        "numeric_fields": [form[name] for name in NUMERIC_FIELDS],
        "input_choices": union(choices, "input_strategies"),
        "prompting_choices": union(choices, "prompting_strategies"),
        "variant_choices": variant_choices, "frame_examples": FRAME_EXAMPLES,
        "models": model_registry.entries(Use.EVALUATION), "default_frames": DEFAULT_FRAME_POLICY,
        "subset_choices": subsets.subsets_of(versions),
    }
    return render(request, "frontend/runs.html", context, status=status)


def _pretty(value) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def _frames_used(inputs: dict) -> list[str]:
    """One line per medium: its role and the frame indices the model was given."""
    lines = []
    for medium in (inputs or {}).get("media") or []:
        if not isinstance(medium, dict):
            continue
        role = medium.get("role", "?")
        if "frames" in medium:
            lines.append(f"{role}: frames {medium['frames']}")
        elif medium.get("hidden"):
            lines.append(f"{role}: hidden")
        else:
            lines.append(f"{role}: {medium.get('kind', 'medium')}")
    return lines


def _detail(request, run: EvaluationRun, *, status: int = 200, error: str = ""):
    predictions = Paginator(run.predictions.order_by("request_id", "sample_index"),
                            PREDICTIONS_PER_PAGE).get_page(request.GET.get("page"))
    rows = [{"prediction": p, "prompt": _pretty(p.prompt), "inputs": _pretty(p.inputs), "params": _pretty(p.params),
             "frames": _frames_used(p.inputs)} for p in predictions]
    can_control = may_control(request.user, run)
    return render(request, "frontend/run_detail.html", {
        "run": run, **_run_row(run), "error": error, "transitions": run.transitions,
        "predictions": predictions, "prediction_rows": rows,
        "backend_options": _pretty(run.backend_options), "generation_params": _pretty(run.generation_params),
        "cot_reasoning": results.cot_reasoning(run), "nul_removed": runs.nul_removed(run),
        "can_cancel": can_control and run.status in (EvaluationRun.Status.PENDING, EvaluationRun.Status.RUNNING),
        "can_resume": can_control and run.status in (EvaluationRun.Status.FAILED, EvaluationRun.Status.CANCELLED),
    }, status=status)


@roles_allowed(RESEARCHER, ADMIN)
def run_detail(request, pk):
    return _detail(request, get_object_or_404(visible_runs().select_related("job", "subset"), pk=pk))


def _control(request, pk, action):
    run = get_object_or_404(visible_runs(), pk=pk)
    if not may_control(request.user, run):
        raise PermissionDenied("Only the person who started this run, or an admin, can cancel or resume it.")
    try:
        done, message = action(run, request.user)
    except runs.RunConfigError as exc:
        return _detail(request, run, status=400, error=str(exc))
    if not done:  # the run's status does not allow it (any more)
        run.refresh_from_db()
        return _detail(request, run, status=409, error=message)
    messages.success(request, message)
    return redirect("run-detail", pk=run.pk)


@roles_allowed(RESEARCHER, ADMIN)
@require_POST
def run_cancel(request, pk):
    return _control(request, pk, cancel)


@roles_allowed(RESEARCHER, ADMIN)
@require_POST
def run_resume(request, pk):
    return _control(request, pk, resume)
