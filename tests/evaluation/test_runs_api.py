"""The runs API: starting a run (same options as the page and `manage.py evaluate`; chunks on
eager Celery), reading it, its progress and its predictions, cancelling and resuming, and who may
do what (the research team shares runs; annotators and curators get nothing)."""

import pytest
from django.urls import reverse

from annotation.models import Benchmark, BenchmarkVersion
from evaluation.models import EvaluationRun, Prediction
from tests.conftest import logged_in_api, make_user
from tests.frontend.test_runs_page import QUESTIONS, api_model_run, cvrr_version

Status = EvaluationRun.Status
LIST = reverse("api-run-list")


@pytest.fixture
def version(db, video):
    return cvrr_version(video)


@pytest.fixture
def qwen(tiny_registry, tiny_models_dir) -> str:
    """The tiny Qwen2-VL, registered: named here by its folder, as the registry allows."""
    return str(tiny_models_dir / "qwen2-vl")


def options(benchmark_version, model: str, **overrides) -> dict:
    data = {"version": benchmark_version.pk, "model_id": model,
            "backend_options": {"native_video": False, "device": "cpu"}, "frames": "uniform:2@64", "max_new_tokens": 4,
            "batch_size": 2, "seed": 5}
    data.update(overrides)
    return data


def test_create_starts_the_run_on_the_workers_and_its_predictions_can_be_read(
        version, qwen, researcher, researcher_api, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        response = researcher_api.post(LIST, options(version, qwen, variants=["qa"], limit=1), format="json")
    assert response.status_code == 201, response.data
    body = response.json()
    run = EvaluationRun.objects.get(pk=body["id"])
    assert body["status"] == Status.RUNNING  # the chunks go to the workers once the request commits
    assert (body["benchmark"], body["version_label"], body["frames"]) == ("cvrr", "web", "uniform:2@64")
    assert body["created_by"] == "res" and body["workers"] == "celery" and body["resolved_revision"] == "local"
    assert body["total_predictions"] == 1 and body["variants"] == ["qa"] and body["limit"] == 1
    assert body["generation_params"] == {"max_new_tokens": 4} and body["seed"] == 5

    run.refresh_from_db()
    assert run.status == Status.SUCCEEDED, run.message
    detail = researcher_api.get(reverse("api-run-detail", args=[run.pk])).json()
    assert detail["status"] == "succeeded" and detail["percent"] == 100.0
    assert [(t["from_status"], t["to_status"], t["by"]) for t in detail["transitions"]] == [
        ("pending", "running", "res"), ("running", "succeeded", None)]

    progress = researcher_api.get(reverse("api-run-progress", args=[run.pk])).json()
    assert progress["completed_predictions"] == progress["total_predictions"] == 1
    assert progress["is_finished"] is True and progress["failed_predictions"] == 0

    page = researcher_api.get(reverse("api-run-predictions", args=[run.pk])).json()
    assert page["count"] == 1
    (prediction,) = page["results"]
    stored = Prediction.objects.get(run=run)
    assert prediction["request_id"] == stored.request_id == f"{QUESTIONS[0][0]}/bikes/0:qa"
    assert prediction["raw_output"] == stored.raw_output and prediction["error"] == ""
    assert prediction["prompt"] == stored.prompt and QUESTIONS[0][1] in str(prediction["prompt"])
    assert prediction["inputs"]["media"][0]["frames"] == stored.inputs["media"][0]["frames"]
    assert len(prediction["inputs"]["media"][0]["frames"]) == 2


def test_create_names_the_version_by_benchmark_and_label(version, register_model, researcher_api):
    register_model("org/chat-model", backend="openai")
    response = researcher_api.post(LIST, {"benchmark": "cvrr", "version_label": "web", "model_id": "org/chat-model",
                                          "backend": "openai", "prompting": "dscp"}, format="json")
    assert response.status_code == 201, response.data
    run = EvaluationRun.objects.get()
    assert run.version == version and run.prompting == "dscp" and run.backend == "openai"
    assert run.option_order == "release" and response.data["option_order"] == "release"


@pytest.mark.parametrize(("change", "message"), [
    ({"model_id": "/no/such/model-folder"}, "Unknown model '/no/such/model-folder': it is not in the model registry"),
    ({"frames": "black:0"}, "The 'black' policy needs a frame count of at least 1 (e.g. black:8)."),
    ({"input_strategy": "video"}, "cvrr has no input strategy 'video'; known: default."),
    ({"variants": ["triplet"]}, "cvrr has no variant 'triplet'; known: qa."),
    ({"backend": "nope"}, "qwen2-vl' is registered with the transformers backend, not 'nope'."),
    ({"top_p": 2}, "top_p must be in (0, 1]."),
    ({"n_samples": 0}, "n_samples must be at least 1 (got 0)."),
    ({"version": None}, "Give `version` (an id) or `benchmark` and `version_label`."),
    ({"version": 987654}, "version: Invalid pk \"987654\" - object does not exist."),
    ({"batch_size": "many"}, "batch_size: A valid integer is required."),
    ({"option_order": "shuffled:x"}, "Unknown option order 'shuffled:x'"),
    ({"option_order": "shuffled:1"}, "cvrr shows no release options to reorder"),
])
def test_bad_options_are_refused_with_the_reason_and_create_nothing(version, qwen, researcher_api, change, message):
    data = {key: value for key, value in options(version, qwen, **change).items() if value is not None}
    response = researcher_api.post(LIST, data, format="json")
    assert response.status_code == 400
    assert message in response.json()["error"]
    assert not EvaluationRun.objects.exists()


def test_an_unfrozen_version_is_refused(db, researcher_api):
    BenchmarkVersion.objects.create(benchmark=Benchmark.objects.get(slug="cvrr"), label="draft")
    response = researcher_api.post(LIST, {"benchmark": "cvrr", "version_label": "draft", "model_id": "m",
                                          "backend": "openai"}, format="json")
    assert response.status_code == 400
    assert "is not frozen" in response.json()["error"]
    assert not EvaluationRun.objects.exists()


def test_the_research_team_shares_runs_and_nobody_else_sees_them(version, researcher, researcher_api, annotator_api,
                                                                 curator_api, admin_api):
    colleague = make_user("colleague", "researcher")
    theirs = api_model_run(version, colleague)
    mine = api_model_run(version, researcher, prompting="cot")

    for client in (researcher_api, admin_api):
        listed = client.get(LIST).json()
        assert [run["id"] for run in listed["results"]] == [mine.pk, theirs.pk]
        assert client.get(reverse("api-run-detail", args=[theirs.pk])).json()["created_by"] == "colleague"
    for client in (annotator_api, curator_api):
        assert client.get(LIST).status_code == 403
        assert client.get(reverse("api-run-detail", args=[mine.pk])).status_code == 403
        assert client.get(reverse("api-run-predictions", args=[mine.pk])).status_code == 403
        assert client.post(LIST, options(version, "org/chat-model", backend="openai"), format="json").status_code == 403
    assert logged_in_api(None).get(LIST).status_code in (401, 403)
    assert EvaluationRun.objects.count() == 2


def test_the_list_filters(version, researcher, researcher_api):
    pending = api_model_run(version, researcher)
    cancelled = api_model_run(version, researcher)
    EvaluationRun.objects.filter(pk=cancelled.pk).update(status=Status.CANCELLED, model_id="other/model")

    def ids(query):
        return [run["id"] for run in researcher_api.get(LIST + query).json()["results"]]

    assert ids("?status=cancelled") == [cancelled.pk]
    assert ids("?status=pending") == [pending.pk]
    assert ids("?model=other") == [cancelled.pk]
    assert ids(f"?version={version.pk}&benchmark=cvrr") == [cancelled.pk, pending.pk]
    assert ids("?benchmark=cvqa") == []


def test_cancel_is_for_the_owner_or_an_admin_and_only_once(version, researcher, researcher_api, admin_api):
    run = api_model_run(version, researcher)
    colleague = logged_in_api(make_user("colleague", "researcher"))
    url = reverse("api-run-cancel", args=[run.pk])

    refused = colleague.post(url)
    assert refused.status_code == 403
    assert refused.json()["error"] == "Only the person who started a run, or an admin, can cancel it."
    run.refresh_from_db()
    assert run.status == Status.PENDING

    response = researcher_api.post(url)
    assert response.status_code == 200 and response.json()["status"] == "cancelled"
    run.refresh_from_db()
    assert run.status == Status.CANCELLED and run.transitions.get().actor == researcher

    again = researcher_api.post(url)
    assert again.status_code == 409
    assert again.json()["error"] == f"Run {run.pk} is cancelled: only pending or running runs can be cancelled."

    other = api_model_run(version, make_user("someone", "researcher"))
    assert admin_api.post(reverse("api-run-cancel", args=[other.pk])).status_code == 200


def test_resume_refuses_a_run_that_is_not_failed_or_cancelled(version, researcher, researcher_api):
    run = api_model_run(version, researcher)
    response = researcher_api.post(reverse("api-run-resume", args=[run.pk]))
    assert response.status_code == 409
    assert response.json()["error"] == f"Run {run.pk} is pending: only failed or cancelled runs can be resumed."
    run.refresh_from_db()
    assert run.status == Status.PENDING and not run.transitions.exists()


def test_resume_on_the_api_runs_what_is_missing(version, qwen, researcher, researcher_api,
                                                django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        created = researcher_api.post(LIST, options(version, qwen), format="json")
    run = EvaluationRun.objects.get(pk=created.json()["id"])
    run.refresh_from_db()
    assert run.status == Status.SUCCEEDED, run.message
    kept, lost = Prediction.objects.filter(run=run).order_by("request_id")
    lost.delete()
    EvaluationRun.objects.filter(pk=run.pk).update(status=Status.FAILED)

    with django_capture_on_commit_callbacks(execute=True):
        response = researcher_api.post(reverse("api-run-resume", args=[run.pk]))
    assert response.status_code == 200 and response.json()["status"] == "running"
    run.refresh_from_db()
    assert run.status == Status.SUCCEEDED, run.message
    assert Prediction.objects.filter(run=run, error="").count() == 2
    assert Prediction.objects.filter(run=run, pk=kept.pk).exists()  # only the missing one was made again
    remade = Prediction.objects.get(run=run, request_id=lost.request_id)
    assert remade.from_cache and remade.raw_output == lost.raw_output  # greedy answers come from the cache
    assert [t.reason.split(",")[0] for t in run.transitions.filter(to_state=Status.RUNNING)] == [
        "Started", "Resumed (was failed)"]


def test_predictions_filter_by_variant_and_errors(version, researcher, researcher_api):
    run = api_model_run(version, researcher)
    item = version.items.first()
    Prediction.objects.create(run=run, request_id="a:qa", item=item, variant="qa", prompt=[], raw_output="fine")
    Prediction.objects.create(run=run, request_id="b:qa", item=item, variant="qa", prompt=[], error="timeout")
    url = reverse("api-run-predictions", args=[run.pk])
    assert [p["request_id"] for p in researcher_api.get(url).json()["results"]] == ["a:qa", "b:qa"]
    assert [p["request_id"] for p in researcher_api.get(url + "?errors=true").json()["results"]] == ["b:qa"]
    assert researcher_api.get(url + "?variant=pairs").json()["count"] == 0
