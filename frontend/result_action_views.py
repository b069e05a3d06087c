"""Actions of the results pages (POST only): start a judge or the similarity scoring of a run, a baseline
over a version, a human-evaluation study, an export. Each checks its form here and hands it to
`evaluation.result_actions`, which accepts only what the benchmark supports; a refusal re-renders the
page with the reason (400), a started job sends the researcher back to the page, which shows its progress."""

from django import forms
from django.contrib import messages
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from annotation.crowd.errors import CrowdError
from config.permissions import roles_allowed
from config.roles import ADMIN, RESEARCHER
from evaluation import result_actions
from frontend.results_views import run_of, run_page, version_of, version_page


class JudgeForm(forms.Form):
    kind = forms.CharField(max_length=64)
    model = forms.CharField(max_length=255, required=False)
    decoding = forms.CharField(max_length=16, required=False)


class BaselineForm(forms.Form):
    baseline = forms.CharField(max_length=64)
    model = forms.CharField(max_length=255, required=False)
    seed = forms.IntegerField(required=False, min_value=0)
    limit = forms.IntegerField(required=False, min_value=1)


class HumanEvaluationForm(forms.Form):
    kind = forms.CharField(max_length=64)
    runs = forms.TypedMultipleChoiceField(required=False, coerce=int)
    sample = forms.IntegerField(required=False, min_value=1)
    k = forms.IntegerField(initial=3, min_value=1, max_value=50)

    def __init__(self, *args, run_ids=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["runs"].choices = [(pk, pk) for pk in run_ids]


class SubsetForm(forms.Form):
    name = forms.CharField(max_length=100)
    seed = forms.IntegerField(initial=0, min_value=0)
    per_group = forms.IntegerField(initial=150, min_value=1)
    videos = forms.IntegerField(required=False, min_value=1)
    variants = forms.CharField(required=False, max_length=500)


class HumanPerformanceForm(forms.Form):
    who = forms.CharField(max_length=16)
    seed = forms.IntegerField(initial=0, min_value=0)
    size = forms.IntegerField(required=False, min_value=1)
    qualification = forms.CharField(required=False, max_length=64)
    k = forms.IntegerField(initial=1, min_value=1, max_value=50)


class ExportForm(forms.Form):
    what = forms.CharField(max_length=32)
    fmt = forms.CharField(max_length=16)
    scope = forms.CharField(max_length=32, initial="all")


def form_error(form) -> str:
    """A form's errors as one line for the page's notice."""
    return "; ".join(f"{name}: {' '.join(errors)}" if name != "__all__" else " ".join(errors)
                     for name, errors in form.errors.items())


def _started(request, job, what: str, to: str, pk: int):
    messages.success(request, f"{what} started as job #{job.pk}; its progress is shown below.")
    return redirect(to, pk=pk)


def _judge(request, target, page, start, what: str, to: str):
    """Start a judge (`start`: a run's or the people's answers of a version) from the posted JudgeForm; the
    target's page (`page`) again with a 400 and the reason when it is refused."""
    form = JudgeForm(request.POST)
    if not form.is_valid():
        return page(request, target, status=400, error=form_error(form))
    data = form.cleaned_data
    try:
        job = start(target, request.user, kind=data["kind"], model=data["model"],
                    decoding=data["decoding"] or result_actions.FREE_DECODING)
    except result_actions.ResultActionError as exc:
        return page(request, target, status=400, error=str(exc))
    return _started(request, job, what.format(kind=data["kind"]), to, target.pk)


@roles_allowed(RESEARCHER, ADMIN)
@require_POST
def start_judge(request, pk):
    return _judge(request, run_of(pk), run_page, result_actions.start_judge, "The {kind} judge", "results-run")


@roles_allowed(RESEARCHER, ADMIN)
@require_POST
def start_scoring(request, pk):
    """`use` names the scoring models to run; `model_<name>` gives each one's model."""
    run = run_of(pk)
    chosen = {name: request.POST.get(f"model_{name}", "") for name in request.POST.getlist("use")}
    try:
        job = result_actions.start_scoring(run, request.user, models=chosen)
    except result_actions.ResultActionError as exc:
        return run_page(request, run, status=400, error=str(exc))
    return _started(request, job, "Scoring", "results-run", run.pk)


@roles_allowed(RESEARCHER, ADMIN)
@require_POST
def start_baseline(request, pk):
    version = version_of(pk)
    form = BaselineForm(request.POST)
    if not form.is_valid():
        return version_page(request, version, status=400, error=form_error(form))
    data = form.cleaned_data
    try:
        job = result_actions.start_baseline(version, request.user, baseline=data["baseline"], model=data["model"],
                                            seed=data["seed"] or 0, limit=data["limit"])
    except result_actions.ResultActionError as exc:
        return version_page(request, version, status=400, error=str(exc))
    return _started(request, job, f"The {data['baseline']} baseline", "results-version", version.pk)


def _version_action(request, version, form, act, said):
    """Check `form`, then `act(cleaned data)` → what was made, `said(made)` → the message; back to the version's
    page, or the page again with the refusal (400, or the crowd engine's status)."""
    if not form.is_valid():
        return version_page(request, version, status=400, error=form_error(form))
    try:
        made = act(form.cleaned_data)
    except result_actions.ResultActionError as exc:
        return version_page(request, version, status=400, error=str(exc))
    except CrowdError as exc:
        return version_page(request, version, status=exc.status, error=exc.message)
    messages.success(request, said(made))
    return redirect("results-version", pk=version.pk)


@roles_allowed(RESEARCHER, ADMIN)
@require_POST
def start_human_evaluation(request, pk):
    """Creates the study at once (`human_eval.STUDY_MAKERS`: the service refuses anyone else with 403)."""
    version = version_of(pk)
    return _version_action(
        request, version, HumanEvaluationForm(request.POST, run_ids=list(version.runs.values_list("pk", flat=True))),
        lambda data: result_actions.start_human_evaluation(version, request.user, kind=data["kind"],
                                                           run_ids=data["runs"], sample=data["sample"], k=data["k"]),
        lambda made: f"Study {made.study.slug} created with {len(made.items)} item(s), "
                     f"{made.study.annotators_per_item} people each.")


@roles_allowed(RESEARCHER, ADMIN)
@require_POST
def make_subset(request, pk):
    """A named, reproducible subset of the version (ablations, human performance); runs may then use it."""
    version = version_of(pk)
    return _version_action(
        request, version, SubsetForm(request.POST),
        lambda data: result_actions.make_subset(
            version, request.user, name=data["name"], seed=data["seed"], per_group=data["per_group"],
            videos=data["videos"], variants=[name.strip() for name in data["variants"].split(",") if name.strip()]),
        lambda made: f"Subset {made.name} drawn: {len(made.request_ids)} request(s).")


@roles_allowed(RESEARCHER, ADMIN)
@require_POST
def start_human_performance(request, pk):
    """The paper's expert baseline or written human answers over a drawn subset (a crowd study)."""
    version = version_of(pk)
    return _version_action(
        request, version, HumanPerformanceForm(request.POST),
        lambda data: result_actions.start_human_performance(
            version, request.user, who=data["who"], seed=data["seed"], size=data["size"],
            qualification=data["qualification"], k=data["k"]),
        lambda made: f"Study {made.study.slug} created with {len(made.items)} item(s).")


@roles_allowed(RESEARCHER, ADMIN)
@require_POST
def start_human_clip(request, pk):
    """Score the people's written answers of the version's baselines with a CLIP model (a job)."""
    version = version_of(pk)
    try:
        job = result_actions.start_human_clip(version, request.user, model=request.POST.get("model", ""))
    except result_actions.ResultActionError as exc:
        return version_page(request, version, status=400, error=str(exc))
    return _started(request, job, "The CLIP score of people's answers", "results-version", version.pk)


@roles_allowed(RESEARCHER, ADMIN)
@require_POST
def start_human_judge(request, pk):
    """Judge the people's free-text baseline answers of the version (a job, as a run's judge)."""
    return _judge(request, version_of(pk), version_page, result_actions.start_human_judge,
                  "The {kind} judge of people's answers", "results-version")


@roles_allowed(RESEARCHER, ADMIN)
@require_POST
def start_export(request, pk):
    """Exports the version's runs, or one of them (`scope`); the run page posts here with its run."""
    version = version_of(pk)
    form = ExportForm(request.POST)
    scope = request.POST.get("scope", "all")
    back = ("results-run", int(scope)) if scope.isdigit() else ("results-version", version.pk)
    if not form.is_valid():
        return version_page(request, version, status=400, error=form_error(form))
    try:
        job = result_actions.start_export(version, request.user, what=form.cleaned_data["what"],
                                          fmt=form.cleaned_data["fmt"], scope=form.cleaned_data["scope"])
    except result_actions.ResultActionError as exc:
        return version_page(request, version, status=400, error=str(exc))
    return _started(request, job, "The export", *back)
