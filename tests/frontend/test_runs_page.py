"""The researcher's runs pages: who may see them, starting a run from the form on a small frozen
CVRR-ES version (a real video, the tiny Qwen2-VL on CPU, chunks run by eager Celery), the clear
errors of bad options, the live-progress markup, cancelling and resuming, and the demo suggestions."""

import pytest
from django.urls import reverse
from django.utils.html import escape

from annotation.models import Benchmark, BenchmarkVersion
from config.models import StateChange
from evaluation import runs
from evaluation.models import EvaluationRun, Prediction
from tests.conftest import logged_in_client, make_user
from tests.eval_support import frozen_version

Status = EvaluationRun.Status
QUESTIONS = (
    ("interpretation_of_visual_context", "Where does the video take place?", "On a road."),
    ("multiple_actions_in_a_single_video", "What are the people doing?", "Riding bicycles."),
)


def cvrr_version(video, label: str = "web"):
    """A frozen CVRR-ES version of two questions about one real video (bikes.mp4)."""
    return frozen_version("cvrr", label, [
        (f"{dimension}/bikes/{index}",
         {"kind": "qa", "dimension": dimension, "video_id": "bikes", "question": question, "answer": answer},
         {"video": video})
        for index, (dimension, question, answer) in enumerate(QUESTIONS)])


def form_data(benchmark_version, model: str, **overrides) -> dict:
    """What a researcher fills in: two tiny frames, four new tokens, one request per model call."""
    data = {"version": benchmark_version.pk, "model_id": model, "backend": "transformers", "revision": "",
            "backend_options": "native_video=false\ndevice=cpu", "input_strategy": "", "prompting": "standard",
            "frames": "uniform:2@64", "batch_size": 1, "chunk_size": 64, "limit": "", "n_samples": "",
            "temperature": "", "top_p": "", "max_new_tokens": 4, "seed": 3, "describer_model": "",
            "describer_backend": "transformers"}
    data.update(overrides)
    return {key: value for key, value in data.items() if value is not None}


def api_model_run(version, user, **options) -> EvaluationRun:
    """A pending run (not started) of an API model: creating it needs no weights."""
    return runs.create_run(version, model_id="org/chat-model", backend="openai", workers="celery", user=user, **options)


@pytest.fixture
def version(db, video):
    return cvrr_version(video)


@pytest.fixture
def qwen(tiny_registry, tiny_models_dir) -> str:
    """The tiny Qwen2-VL, registered (`tiny-qwen2-vl`): named here by its folder, as the registry allows."""
    return str(tiny_models_dir / "qwen2-vl")


# --- Access -----------------------------------------------------------------------------------------

@pytest.mark.parametrize(("who", "expected"), [
    (None, 302), ("annotator", 403), ("curator", 403), ("researcher", 200), ("admin_user", 200)])
def test_only_researchers_and_admins_open_the_runs_pages(request, version, researcher, who, expected):
    run = api_model_run(version, researcher)
    client = logged_in_client(request.getfixturevalue(who) if who else None)
    for url in (reverse("runs"), reverse("run-detail", args=[run.pk])):
        response = client.get(url)
        assert response.status_code == expected, url
        if expected == 302:
            assert response["Location"].startswith(f"{reverse('login')}?next=")
        if expected == 403:
            assert b"org/chat-model" not in response.content
    if expected != 200:
        for url in (reverse("run-cancel", args=[run.pk]), reverse("run-resume", args=[run.pk])):
            assert client.post(url).status_code == expected
        run.refresh_from_db()
        assert run.status == Status.PENDING and not run.transitions.exists()


def test_runs_are_shared_within_the_research_team(version, researcher, researcher_client):
    colleague = make_user("colleague", "researcher")
    theirs = api_model_run(version, colleague, prompting="cot")
    mine = api_model_run(version, researcher)

    page = researcher_client.get(reverse("runs"))
    assert page.status_code == 200
    assert [row["run"].pk for row in page.context["rows"]] == [mine.pk, theirs.pk]  # newest first
    html = page.content.decode()
    assert f'id="run-{theirs.pk}"' in html and "colleague" in html

    detail = researcher_client.get(reverse("run-detail", args=[theirs.pk]))
    assert detail.status_code == 200
    assert b"cot" in detail.content and b"colleague" in detail.content
    assert b"Cancel the run" not in detail.content  # only its owner (or an admin) may stop it


# --- Starting a run from the form -----------------------------------------------------------------

def test_a_run_started_from_the_form_ends_with_its_predictions_on_its_page(
        version, qwen, researcher, researcher_client, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        response = researcher_client.post(reverse("runs"), form_data(version, qwen))
    run = EvaluationRun.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse("run-detail", args=[run.pk])

    run.refresh_from_db()
    assert run.status == Status.SUCCEEDED, run.message
    assert run.workers == "celery" and run.created_by == researcher
    assert run.model_id == qwen and run.resolved_revision == "local"
    assert run.frame_policy == {"name": "uniform", "count": 2, "max_side": 64, "parts": {}}
    assert run.generation_params == {"max_new_tokens": 4}
    assert run.backend_options == {"native_video": False, "device": "cpu"}
    assert (run.seed, run.batch_size, run.input_strategy, run.prompting) == (3, 1, "default", "standard")
    assert run.completed_predictions == run.total_predictions == 2
    assert list(run.transitions.values_list("from_state", "to_state", "actor")) == [
        (Status.PENDING, Status.RUNNING, researcher.pk), (Status.RUNNING, Status.SUCCEEDED, None)]

    page = researcher_client.get(response["Location"])
    assert page.status_code == 200
    html = page.content.decode()
    assert '<span class="badge succeeded">succeeded</span>' in html
    assert "data-run-id" not in html  # finished: nothing to poll
    assert "Cancel the run" not in html and "Resume" not in html  # a succeeded run is neither
    predictions = list(Prediction.objects.filter(run=run).order_by("request_id"))
    assert [row["prediction"] for row in page.context["prediction_rows"]] == predictions
    for prediction in predictions:
        assert escape(prediction.request_id) in html
        assert escape(prediction.raw_output) in html
        frames = prediction.inputs["media"][0]["frames"]
        assert len(frames) == 2
        assert f"video: frames {frames}" in html  # the row's summary names the frames the model saw
    row = page.context["prediction_rows"][0]
    assert escape(row["prompt"]) in html and escape(row["inputs"]) in html  # the exact prompt, expandable
    assert QUESTIONS[0][1] in row["prompt"]
    assert "Started, 1 chunks on celery" in html  # its history


@pytest.mark.parametrize(("change", "message"), [
    ({"model_id": "/no/such/model-folder"}, "Unknown model '/no/such/model-folder': it is not in the model registry"),
    ({"frames": "uniform:many"}, "Bad frame count 'many' in frame policy 'uniform:many'."),
    ({"frames": "sideways:8"}, "Unknown frame policy 'sideways:8'"),
    ({"input_strategy": "combined"}, "cvrr has no input strategy 'combined'; known: default."),
    ({"prompting": "plus_p"}, "cvrr does not use prompting 'plus_p'"),
    ({"backend": "nli"}, "is registered with the transformers backend, not 'nli'."),
    ({"batch_size": 0}, "batch size must be at least 1 (got 0)."),
    ({"temperature": -1}, "temperature must not be negative."),
    ({"backend_options": "native_video"}, "A backend option takes key=value (got 'native_video')."),
    ({"batch_size": "eight"}, "Enter a whole number."),
    ({"version": 987654}, "There is no such benchmark version."),
])
def test_bad_options_come_back_on_the_form_and_create_nothing(version, qwen, researcher_client, change, message):
    response = researcher_client.post(reverse("runs"), form_data(version, qwen, **change))
    assert response.status_code == 400
    assert message in " ".join(str(e) for errors in response.context["form"].errors.values() for e in errors)
    assert escape(message) in response.content.decode()
    assert EvaluationRun.objects.count() == 0
    assert StateChange.objects.about(EvaluationRun).count() == 0
    html = response.content.decode()
    assert 'id="start-run" open' in html  # the form stays open with what was chosen
    if "model_id" not in change:
        assert f'<option value="tiny-qwen2-vl" data-backend="transformers" data-model-id="{qwen}" selected>' in html


def test_a_version_that_is_not_frozen_is_refused(db, qwen, researcher_client):
    draft = BenchmarkVersion.objects.create(benchmark=Benchmark.objects.get(slug="cvrr"), label="draft")
    response = researcher_client.post(reverse("runs"), form_data(draft, qwen))
    assert response.status_code == 400
    assert escape("Version cvrr:draft is not frozen: freeze it before evaluating on it.") in response.content.decode()
    assert not EvaluationRun.objects.exists()


def test_the_form_offers_frozen_versions_their_choices_and_the_registered_models(version, researcher_client,
                                                                                 register_model):
    BenchmarkVersion.objects.create(benchmark=Benchmark.objects.get(slug="cvqa"), label="not-frozen-yet")
    register_model("/models/tiny/qwen2-vl", backend="transformers", name="tiny-qwen2-vl")
    register_model("/models/tiny/causal-lm", backend="causal_lm", name="tiny-causal-lm")
    register_model("/models/tiny/nli", backend="nli", name="tiny-nli")
    register_model("/models/tiny/off", backend="causal_lm", name="off", enabled=False)

    page = researcher_client.get(reverse("runs"))
    html = page.content.decode()
    assert f'<option value="{version.pk}" data-benchmark="cvrr">cvrr:web (2 items)</option>' in html
    assert "not-frozen-yet" not in html
    assert [m.name for m in page.context["models"]] == ["tiny-causal-lm", "tiny-qwen2-vl"]  # no scoring model
    assert '<option value="tiny-causal-lm" data-backend="causal_lm" data-model-id="/models/tiny/causal-lm">' in html
    assert '<option value="tiny-qwen2-vl" data-backend="transformers" data-model-id="/models/tiny/qwen2-vl">' in html
    assert '<option value="dscp_stage1" data-benchmarks="cvrr">' in html
    assert '<input type="checkbox" name="variants" value="qa">' in html
    assert "tiny-nli" not in html and "/models/tiny/off" not in html  # scoring and disabled models are not offered


# --- Progress ---------------------------------------------------------------------------------------

def test_unfinished_runs_are_polled_and_show_their_progress(version, researcher, researcher_client):
    running = api_model_run(version, researcher)
    EvaluationRun.objects.filter(pk=running.pk).update(status=Status.RUNNING, total_predictions=10,
                                                       completed_predictions=3, cached_predictions=1,
                                                       failed_predictions=2, throughput=0.5, eta_seconds=14)
    done = api_model_run(version, researcher)
    EvaluationRun.objects.filter(pk=done.pk).update(status=Status.SUCCEEDED)

    html = researcher_client.get(reverse("runs")).content.decode()
    assert f'<tr id="run-{running.pk}" data-run-id="{running.pk}">' in html
    assert f'<tr id="run-{done.pk}">' in html
    row = html.split(f'id="run-{running.pk}"')[1].split("</tr>")[0]
    assert '<progress max="100" value="30.0">' in row
    assert '<span data-field="completed">3</span>/<span data-field="total">10</span>' in row
    assert '<td data-field="cached">1</td>' in row and '<td data-field="failed">2</td>' in row
    assert '<td data-field="throughput">0.50/s</td>' in row and '<td data-field="eta">0:14</td>' in row
    assert "frontend/runs.js" in html

    detail = researcher_client.get(reverse("run-detail", args=[running.pk])).content.decode()
    assert f'data-run-id="{running.pk}" data-reload-on-finish' in detail
    # what the page polls
    progress = researcher_client.get(reverse("api-run-progress", args=[running.pk])).json()
    assert progress["completed_predictions"] == 3 and progress["percent"] == 30.0
    assert progress["eta"] == "0:14" and progress["is_finished"] is False


def test_the_runs_list_is_paginated_newest_first(version, researcher, researcher_client):
    created = [api_model_run(version, researcher).pk for _ in range(27)]
    first = researcher_client.get(reverse("runs"))
    assert [row["run"].pk for row in first.context["rows"]] == created[::-1][:25]
    second = researcher_client.get(reverse("runs") + "?page=2")
    assert [row["run"].pk for row in second.context["rows"]] == created[::-1][25:]


def test_the_predictions_table_is_paginated(version, researcher, researcher_client):
    run = api_model_run(version, researcher)
    item = version.items.first()
    Prediction.objects.bulk_create([
        Prediction(run=run, request_id=f"r{n:03d}", item=item, variant="qa", prompt=[], raw_output=f"answer {n}")
        for n in range(55)])
    url = reverse("run-detail", args=[run.pk])
    assert [row["prediction"].request_id for row in researcher_client.get(url).context["prediction_rows"]] == \
        [f"r{n:03d}" for n in range(50)]
    assert [row["prediction"].request_id for row in researcher_client.get(url + "?page=2").context["prediction_rows"]] \
        == [f"r{n:03d}" for n in range(50, 55)]


# --- Cancel and resume ------------------------------------------------------------------------------

def test_the_owner_cancels_a_run_once(version, researcher, researcher_client):
    run = api_model_run(version, researcher)
    detail = reverse("run-detail", args=[run.pk])
    assert b"Cancel the run" in researcher_client.get(detail).content

    response = researcher_client.post(reverse("run-cancel", args=[run.pk]))
    assert response.status_code == 302 and response["Location"] == detail
    run.refresh_from_db()
    assert run.status == Status.CANCELLED and run.finished_at is not None
    (transition,) = run.transitions.all()
    assert (transition.from_state, transition.to_state, transition.actor) == (Status.PENDING, Status.CANCELLED,
                                                                             researcher)
    page = researcher_client.get(detail).content.decode()
    assert "Cancel the run" not in page and "Resume" in page

    again = researcher_client.post(reverse("run-cancel", args=[run.pk]))
    assert again.status_code == 409
    assert escape(f"Run {run.pk} is cancelled: only pending or running runs can be cancelled.") in \
        again.content.decode()
    assert run.transitions.count() == 1


def test_a_colleague_cannot_cancel_but_an_admin_can(version, researcher, admin_user):
    run = api_model_run(version, researcher)
    colleague = logged_in_client(make_user("colleague", "researcher"))
    assert colleague.post(reverse("run-cancel", args=[run.pk])).status_code == 403
    run.refresh_from_db()
    assert run.status == Status.PENDING

    assert logged_in_client(admin_user).post(reverse("run-cancel", args=[run.pk])).status_code == 302
    run.refresh_from_db()
    assert run.status == Status.CANCELLED and run.transitions.get().actor == admin_user


def test_get_does_not_cancel(version, researcher, researcher_client):
    run = api_model_run(version, researcher)
    assert researcher_client.get(reverse("run-cancel", args=[run.pk])).status_code == 405
    run.refresh_from_db()
    assert run.status == Status.PENDING


def test_resuming_a_cancelled_run_makes_its_predictions(version, qwen, researcher, researcher_client,
                                                        django_capture_on_commit_callbacks):
    run = runs.create_run(version, model_id=qwen, backend_options={"native_video": False, "device": "cpu"},
                          frame_policy="uniform:2@64", generation_params={"max_new_tokens": 3}, batch_size=2,
                          workers="celery", user=researcher)
    runs.cancel_run(run, user=researcher)

    with django_capture_on_commit_callbacks(execute=True):
        response = researcher_client.post(reverse("run-resume", args=[run.pk]))
    assert response.status_code == 302
    run.refresh_from_db()
    assert run.status == Status.SUCCEEDED, run.message
    assert Prediction.objects.filter(run=run, error="").count() == 2
    assert [t.to_state for t in run.transitions.all()] == [Status.CANCELLED, Status.RUNNING, Status.SUCCEEDED]
    assert run.transitions.get(to_state=Status.RUNNING).reason.startswith("Resumed (was cancelled)")

    again = researcher_client.post(reverse("run-resume", args=[run.pk]))
    assert again.status_code == 409
    assert b"only failed or cancelled runs can be resumed" in again.content
