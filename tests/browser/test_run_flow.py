"""A researcher starts an evaluation run in a real browser: Runs → "Start a run" on a small frozen
CVRR-ES version with the tiny Qwen2-VL → the run's page follows its progress live (polling
/api/runs/<id>/progress/) while a real Celery worker runs the chunk on the `gpu` queue → the page
reloads when the run has succeeded and shows one prediction per request, with the prompt sent and
the frame indices the model saw."""

import json
import threading
from pathlib import Path

import pytest
from playwright.sync_api import expect

from config.roles import RESEARCHER
from tests.frontend.test_runs_page import QUESTIONS, cvrr_version

pytestmark = [
    pytest.mark.browser,
    pytest.mark.timeout(180),
    # WhiteNoise warns that STATIC_ROOT was never collected; the live server serves static itself.
    pytest.mark.filterwarnings("ignore:No directory at:UserWarning"),
]

DETAIL_SCREENSHOT = Path("/tmp/run_detail_page.png")
RUN_TIMEOUT_MS = 90_000  # loading the tiny model and two generations on CPU, on a loaded machine


@pytest.fixture
def chunk_gate(monkeypatch):
    """Chunks wait in the worker until the test has seen the run in progress, so the page is shown
    unfinished (and polls) for certain rather than by luck of timing."""
    from evaluation import runs, tasks

    gate = threading.Event()
    run_chunk = runs.run_chunk

    def gated(chunk_id, **kwargs):
        gate.wait(timeout=60)
        return run_chunk(chunk_id, **kwargs)

    tasks.WORKER_BACKENDS.clear()
    monkeypatch.setattr(runs, "run_chunk", gated)
    yield gate
    gate.set()


def test_researcher_starts_a_run_and_watches_it_finish_with_its_predictions(
        live_server, browser_page, make_user, login, celery_worker, chunk_gate, video, tiny_models_dir,
        tiny_registry):
    from evaluation.models import EvaluationRun, Prediction

    version = cvrr_version(video, label="browser")
    qwen = str(tiny_models_dir / "qwen2-vl")
    page = browser_page
    polls = []  # what each poll of the progress API answered the page, read before the page gets it

    def record_poll(route):
        response = route.fetch()
        polls.append(response.json())
        route.fulfill(response=response)

    page.route("**/api/runs/*/progress/", record_poll)
    login(page, make_user("rita", RESEARCHER))

    # 1. The runs page: nothing yet, so the form is open.
    page.goto(live_server.url + "/runs/")
    expect(page.locator("#run-table")).to_contain_text("No evaluation run yet.")
    form = page.locator("#run-form")
    expect(form).to_be_visible()

    # 2. Fill in "Start a run" and submit.
    form.locator("#run-version").select_option(label="cvrr:browser (2 items)")
    form.locator("#run-model").select_option("tiny-qwen2-vl")  # a registered model
    form.locator("#run-prompting").select_option("standard")
    form.locator("#run-frames").fill("uniform:2@64")
    form.get_by_label("Batch size").fill("1")
    form.get_by_label("Max new tokens").fill("4")
    form.get_by_label("Seed", exact=True).fill("3")
    form.locator('textarea[name="backend_options"]').fill("native_video=false\ndevice=cpu")
    form.get_by_role("button", name="Start the run").click()

    # 3. The run's page, while its chunk waits in the worker: running, 0 of 2, polled.
    page.wait_for_url(f"{live_server.url}/runs/*/")
    run = EvaluationRun.objects.get()
    assert page.url == f"{live_server.url}/runs/{run.pk}/"
    assert run.version == version and run.model_id == qwen
    expect(page.get_by_text(f"Run {run.pk} started: 2 predictions for 2 requests.")).to_be_visible()
    progress = page.locator("#run-progress")
    expect(progress.locator('[data-field="status"] .badge')).to_have_text("running")
    expect(progress.locator('[data-field="completed"]')).to_have_text("0")
    expect(progress.locator('[data-field="total"]')).to_have_text("2")
    expect(progress).to_have_attribute("data-run-id", str(run.pk))
    expect(page.locator("#prediction-table")).to_contain_text("No prediction yet.")
    page.evaluate("() => { window.beforeReload = true; }")  # gone once the page has reloaded
    with page.expect_response(lambda r: r.url.endswith(f"/api/runs/{run.pk}/progress/")):
        pass  # the page polls the run's progress while it waits
    assert polls[0]["status"] == "running" and polls[0]["is_finished"] is False

    # 4. Let the worker run the chunk; the page follows it and reloads when the run has succeeded.
    chunk_gate.set()
    expect(progress.locator('[data-field="status"] .badge')).to_have_text("succeeded", timeout=RUN_TIMEOUT_MS)
    expect(progress.locator('[data-field="completed"]')).to_have_text("2")
    expect(progress.locator('[data-field="total"]')).to_have_text("2")
    expect(progress).not_to_have_attribute("data-run-id", str(run.pk))  # finished: nothing left to poll
    assert page.evaluate("() => window.beforeReload") is None  # the page reloaded itself
    last = polls[-1]
    assert last["status"] == "succeeded" and last["is_finished"] is True, last
    assert last["completed_predictions"] == last["total_predictions"] == 2 and last["percent"] == 100.0
    expect(page.get_by_role("button", name="Cancel the run")).to_have_count(0)
    history = page.locator("#run-history tbody tr")
    expect(history).to_have_count(2)
    expect(history.last.locator(".badge")).to_have_text("succeeded")

    run.refresh_from_db()
    assert run.status == EvaluationRun.Status.SUCCEEDED, run.message
    assert any(r["task"] == "evaluation.run_chunk" and r["thread"] is celery_worker.thread
               for r in celery_worker.runs), celery_worker.runs
    assert celery_worker.failures == []

    # 5. One prediction row per request, each with the model's answer and no error.
    predictions = list(Prediction.objects.filter(run=run).order_by("request_id", "sample_index"))
    assert len(predictions) == run.total_requests == 2
    rows = page.locator("#prediction-table tbody tr[id^='prediction-']")
    expect(rows).to_have_count(2)
    for row, prediction in zip(rows.all(), predictions, strict=True):
        expect(row).to_have_attribute("id", f"prediction-{prediction.pk}")
        expect(row.locator("code")).to_have_text(prediction.request_id)
        expect(row.locator("td.output")).to_have_text(prediction.raw_output)
        expect(row.locator("td.error")).to_have_text("")
    assert all(p.error == "" and p.raw_output for p in predictions)

    # 6. Unfold the first row: the prompt sent, and the frame indices of the video the model saw.
    first = predictions[0]
    frames = first.inputs["media"][0]["frames"]
    assert len(frames) == 2
    details = page.locator(f"#prediction-{first.pk} + tr.details-row details")
    prompt = details.locator('pre[data-part="prompt"]')
    expect(prompt).to_be_hidden()
    summary = details.locator("summary")
    expect(summary).to_have_text(f"Prompt and inputs · video: frames {frames}")
    summary.click()
    expect(prompt).to_be_visible()
    expect(prompt).to_contain_text(QUESTIONS[0][1])
    assert json.loads(prompt.inner_text()) == first.prompt
    expect(details.locator('pre[data-part="inputs"]')).to_contain_text('"frames"')
    page.screenshot(path=str(DETAIL_SCREENSHOT), full_page=True)
    assert page.js_errors == []
