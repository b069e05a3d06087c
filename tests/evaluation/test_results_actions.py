"""What the results pages start: judges, similarity scoring, baselines, human-evaluation studies and
exports (frontend/result_action_views.py over evaluation/result_actions.py); who may, what the
benchmark supports, and bad input; the leaderboard's short model labels; the run page's results link."""

import pytest
from django.urls import reverse

from annotation.crowd.models import Study
from config.roles import ANNOTATOR, RESEARCHER
from evaluation import human_eval, judges
from evaluation.models import EvaluationRun, Judgment, Prediction
from evaluation.result_actions import BASELINE_JOB, JUDGE_JOB
from generation import jobs
from generation.models import Job
from tests.conftest import logged_in_client, make_user
from tests.eval_support import frozen_version
from tests.evaluation.test_human_eval import blackswan_video, make_run, predict

LONG_MODEL = "/srv/models/cache/huggingface/hub/some-organisation/Qwen2.5-VL-72B-Instruct-AWQ-long-name"


def cvrr_run(label: str, answers: dict[str, str], *, model_id: str = "org/vlm") -> EvaluationRun:
    items = [(qid, {"kind": "qa", "dimension": "partial_actions", "video_id": f"v-{qid}",
                    "question": f"What does {qid} do?", "answer": f"{qid} waves"}, {}) for qid in sorted(answers)]
    version = frozen_version("cvrr", label, items)
    run = EvaluationRun.objects.create(version=version, model_id=model_id, backend="openai",
                                       status=EvaluationRun.Status.SUCCEEDED)
    by_id = {item.external_id: item for item in version.items.all()}
    for qid, text in answers.items():
        Prediction.objects.create(run=run, request_id=f"{qid}:qa", item=by_id[qid], variant="qa", prompt=[],
                                  raw_output=text)
    return run


@pytest.fixture
def run(db, register_model):
    register_model("org/judge", backend="causal_lm", name="org-judge", uses=["judge"])  # what the forms pick
    return cvrr_run("actions-1", {"q1": "He waves.", "q2": "He runs away."})


def judge_url(run) -> str:
    return reverse("results-run-judge", kwargs={"pk": run.pk})


# --- Judges ------------------------------------------------------------------------------------------

def test_the_run_results_page_offers_the_benchmarks_judge_with_its_default_model(researcher_client, run,
                                                                                 register_model):
    page = researcher_client.get(reverse("results-run", kwargs={"pk": run.pk})).content.decode()
    assert 'data-judge="cvrr"' in page and 'data-judge="llm_match"' not in page
    assert '<option value="org-judge" data-backend="causal_lm" data-model-id="org/judge">' in page  # registered
    default = judges.KINDS["cvrr"].default_model
    if default:  # pre-selected once registered
        register_model(default, backend="causal_lm", name="default-judge", uses=["judge"])
        page = researcher_client.get(reverse("results-run", kwargs={"pk": run.pk})).content.decode()
        assert f'data-model-id="{default}" selected>' in page


def test_a_researcher_starts_a_judge_job_on_the_gpu_queue(researcher_client, researcher, run):
    response = researcher_client.post(judge_url(run), {"kind": "cvrr", "model": "  org/judge  "})
    assert response.status_code == 302 and response["Location"] == reverse("results-run", kwargs={"pk": run.pk})
    job = Job.objects.get(kind=JUDGE_JOB)
    assert (job.queue, job.requested_by, job.params) == ("gpu", researcher,
                                                         {"run": run.pk, "kind": "cvrr", "judge_model": "org-judge",
                                                          "decoding": "free"})  # the registered model's name
    page = researcher_client.get(response["Location"]).content.decode()
    assert f'data-job-id="{job.pk}"' in page and "data-reload-when-done" in page


def test_a_judge_job_may_choose_among_the_allowed_answers(researcher_client, run):
    response = researcher_client.post(judge_url(run), {"kind": "cvrr", "model": "org/judge", "decoding": "choices"})
    assert response.status_code == 302
    assert Job.objects.get(kind=JUDGE_JOB).params["decoding"] == "choices"
    refused = researcher_client.post(judge_url(run), {"kind": "cvrr", "model": "org/judge", "decoding": "beam"})
    assert refused.status_code == 400 and "Unknown judge decoding" in refused.content.decode()
    assert Job.objects.filter(kind=JUDGE_JOB).count() == 1


@pytest.mark.parametrize("role", ["annotator", "curator"])
def test_only_researchers_and_admins_start_jobs(db, run, role):
    client = logged_in_client(make_user(f"someone-{role}", role))
    assert client.post(judge_url(run), {"kind": "cvrr", "model": "org/judge"}).status_code == 403
    export = reverse("results-version-export", kwargs={"pk": run.version.pk})
    assert client.post(export, {"what": "predictions", "fmt": "csv", "scope": "all"}).status_code == 403
    assert not Job.objects.exists()


def test_an_admin_may_start_a_judge(admin_client_role, run):
    assert admin_client_role.post(judge_url(run), {"kind": "cvrr", "model": "org/judge"}).status_code == 302


@pytest.mark.parametrize("data, message", [
    ({"kind": "llm_match", "model": "org/judge"}, "cvrr does not support the judge &#x27;llm_match&#x27;"),
    ({"kind": "cvrr", "model": "   "}, "Choose a registered model"),
    ({"kind": "cvrr"}, "Choose a registered model"),
    ({"kind": "cvrr", "model": "org/typed-judge"}, "Unknown model &#x27;org/typed-judge&#x27;"),
    ({}, "kind: This field is required."),
])
def test_bad_judge_requests_are_refused_with_400_and_start_nothing(researcher_client, run, data, message):
    response = researcher_client.post(judge_url(run), data)
    assert response.status_code == 400
    assert message in response.content.decode()
    assert not Job.objects.exists()


def test_an_unknown_run_is_404(researcher_client, db):
    missing = {"pk": 987654}
    assert researcher_client.post(reverse("results-run-judge", kwargs=missing),
                                  {"kind": "cvrr", "model": "m"}).status_code == 404
    assert researcher_client.post(reverse("results-run-score", kwargs=missing), {"use": "clip"}).status_code == 404
    assert researcher_client.post(reverse("results-version-export", kwargs=missing),
                                  {"what": "runs", "fmt": "csv", "scope": "all"}).status_code == 404


def test_the_judge_job_stores_judgments_that_the_results_page_then_shows(researcher_client, researcher, run,
                                                                       tiny_models_dir, tiny_registry):
    model = str(tiny_models_dir / "causal-lm")
    researcher_client.post(judge_url(run), {"kind": "cvrr", "model": model})
    job = jobs.run_job(Job.objects.get(kind=JUDGE_JOB).pk)
    assert job.status == Job.Status.SUCCEEDED and job.progress == 100, job.message
    assert Judgment.objects.filter(prediction__run=run, judge_model=model).count() == 2
    page = researcher_client.get(reverse("results-run", kwargs={"pk": run.pk})).content.decode()
    assert "2 stored cvrr judgments by" in page


# --- Similarity scoring, baselines, human evaluation --------------------------------------------------

def test_scoring_models_the_benchmark_does_not_use_are_refused(researcher_client, run):
    url = reverse("results-run-score", kwargs={"pk": run.pk})
    response = researcher_client.post(url, {"use": "clip", "model_clip": "openai/clip-vit-large-patch14"})
    assert response.status_code == 400 and "does not support the scoring model" in response.content.decode()
    assert researcher_client.post(url, {}).status_code == 400
    assert not Job.objects.exists()


def test_blackswan_runs_are_offered_clip_preselected_and_a_missing_model_is_400(researcher_client, db,
                                                                                register_model):
    from annotation.models import Benchmark, BenchmarkVersion

    register_model("openai/clip-vit-large-patch14", backend="clip", name="clip-large")
    register_model("/models/clip", backend="clip", name="local-clip")
    version = BenchmarkVersion.objects.create(benchmark=Benchmark.objects.get(slug="blackswan"), label="clip-1")
    run = EvaluationRun.objects.create(version=version, model_id="org/vlm", backend="openai")
    page = researcher_client.get(reverse("results-run", kwargs={"pk": run.pk})).content.decode()
    assert '<select name="model_clip" data-model-select>' in page
    assert 'data-model-id="openai/clip-vit-large-patch14" selected>' in page
    url = reverse("results-run-score", kwargs={"pk": run.pk})
    assert researcher_client.post(url, {"use": "clip", "model_clip": ""}).status_code == 400
    assert researcher_client.post(url, {"use": "clip", "model_clip": "/models/typed"}).status_code == 400
    assert researcher_client.post(url, {"use": "clip", "model_clip": "/models/clip"}).status_code == 302
    assert Job.objects.get().params == {"run": run.pk, "models": {"clip": "local-clip"}}


def triplet(label: int) -> dict:
    return {"kind": "triplet", "premise": "A wet floor.", "hypothesis1": "A man slips.", "hypothesis2": "A man dances.",
            "label": label, "reasoning_category": "Physical", "time_direction": "forward", "time_duration": "short"}


def test_baselines_offered_are_those_the_benchmark_supports(researcher_client, run):
    cvrr_page = researcher_client.get(reverse("results-version", kwargs={"pk": run.version.pk})).content.decode()
    assert 'value="random"' in cvrr_page and 'value="nli"' not in cvrr_page
    version = frozen_version("nleye", "baseline-1", [("t1", triplet(1), {}), ("t2", triplet(2), {})])
    url = reverse("results-version-baseline", kwargs={"pk": version.pk})
    page = researcher_client.get(reverse("results-version", kwargs={"pk": version.pk})).content.decode()
    assert 'value="nli"' in page and 'value="dumb_pixel"' in page and 'value="unimodal"' not in page
    assert researcher_client.post(url, {"baseline": "unimodal", "model": "org/lm"}).status_code == 400  # MAIA's
    assert researcher_client.post(url, {"baseline": "nli"}).status_code == 400  # needs its model
    assert researcher_client.post(url, {"baseline": "random", "seed": "x"}).status_code == 400
    assert not Job.objects.exists()
    assert researcher_client.post(url, {"baseline": "random", "seed": "3"}).status_code == 302
    job = Job.objects.get(kind=BASELINE_JOB)
    assert (job.queue, job.params["baseline"], job.params["seed"]) == ("gpu", "random", 3)
    finished = jobs.run_job(job.pk)
    assert finished.status == Job.Status.SUCCEEDED, finished.message
    made = version.runs.get(pk=finished.result["run"])
    assert made.status == EvaluationRun.Status.SUCCEEDED and made.predictions.count() == made.total_predictions > 0


def test_human_evaluation_studies_are_refused_where_the_benchmark_has_none_of_that_kind(db, run):
    url = reverse("results-version-human", kwargs={"pk": run.version.pk})
    researcher = logged_in_client(make_user("res-only", RESEARCHER))
    assert researcher.post(url, {"kind": "blackswan_rating", "k": 2, "runs": [run.pk]}).status_code == 400  # not cvrr's
    refused = researcher.post(url, {"kind": "human_baseline", "k": 2})  # free answers from a video these items lack
    assert refused.status_code == 400 and "lacks one of its media" in refused.content.decode()
    assert not human_eval.studies_of(human_eval.BASELINE, version=run.version)


def test_a_researcher_starts_a_rating_study_from_the_results_page(video, researcher_client):
    version = frozen_version("blackswan", "rated", [("v1", blackswan_video("v1"), {"video": video})])
    rated = make_run(version, "org/alpha", input_strategy="frames")
    predict(rated, {"v1:forecaster_gen": "He slips.", "v1:detective_gen": "He tripped.",
                    "v1:reporter_gen": "A man slips on ice."})
    url = reverse("results-version-human", kwargs={"pk": version.pk})
    annotator = logged_in_client(make_user("worker-only", ANNOTATOR))
    assert annotator.post(url, {"kind": "blackswan_rating", "k": 2, "runs": [rated.pk]}).status_code == 403
    response = researcher_client.post(url, {"kind": "blackswan_rating", "k": 2, "runs": [rated.pk]})
    assert response.status_code == 302, response.content.decode()[:500]
    study = Study.objects.get()
    assert study.annotators_per_item == 2 and study.items.count() >= 1
    assert human_eval.kind_of(study) == "blackswan_rating"


# --- Exports -----------------------------------------------------------------------------------------

def test_exports_from_the_results_page_take_a_format_and_a_scope(researcher_client, researcher, run):
    other = cvrr_run("actions-2", {"q1": "He waves."})
    url = reverse("results-version-export", kwargs={"pk": run.version.pk})
    assert researcher_client.post(url, {"what": "predictions", "fmt": "xlsx", "scope": "all"}).status_code == 400
    assert researcher_client.post(url, {"what": "submissions", "fmt": "csv", "scope": "all"}).status_code == 400
    assert researcher_client.post(url, {"what": "predictions", "fmt": "csv",
                                        "scope": str(other.pk)}).status_code == 400  # another version's run
    assert not Job.objects.exists()
    response = researcher_client.post(url, {"what": "predictions", "fmt": "jsonl", "scope": str(run.pk)})
    assert response["Location"] == reverse("results-run", kwargs={"pk": run.pk})
    job = Job.objects.get()
    assert (job.kind, job.params) == ("export_results", {"what": "predictions", "fmt": "jsonl", "runs": [run.pk]})
    page = researcher_client.get(reverse("results-version", kwargs={"pk": run.version.pk})).content.decode()
    assert f'data-job-row="{job.pk}"' in page  # the version's page lists the exports of its runs


# --- Leaderboard and run page ------------------------------------------------------------------------

def test_the_leaderboard_shortens_long_model_paths_with_the_full_path_on_hover(researcher_client, db):
    run = cvrr_run("long-1", {"q1": "He waves."}, model_id=LONG_MODEL)
    page = researcher_client.get(reverse("results-version", kwargs={"pk": run.version.pk})).content.decode()
    assert f'<code title="{LONG_MODEL}">…/Qwen2.5-VL-72B-Instruct-AWQ-long-name</code>' not in page  # 36 chars: cut
    cell = page[page.index(f'<code title="{LONG_MODEL}">'):]
    shown = cell[cell.index(">") + 1:cell.index("</code>")]
    assert shown.startswith("…") and len(shown) <= 32 and LONG_MODEL.endswith(shown.lstrip("…"))
    short = cvrr_run("short-1", {"q1": "He waves."}, model_id="org/vlm-7b")
    page = researcher_client.get(reverse("results-version", kwargs={"pk": short.version.pk})).content.decode()
    assert '<code title="org/vlm-7b">org/vlm-7b</code>' in page


def test_the_run_page_links_its_results(researcher_client, run):
    page = researcher_client.get(reverse("run-detail", kwargs={"pk": run.pk})).content.decode()
    assert f'href="{reverse("results-run", kwargs={"pk": run.pk})}"' in page
