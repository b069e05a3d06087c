"""Background jobs: a real Celery worker runs them, progress is visible while they run, and the
job row tells what happened (success, failure with traceback, cancellation)."""

import os
import threading
from contextlib import contextmanager

import pytest
from celery.contrib.testing.worker import start_worker
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import transaction

from annotation.models import MediaAsset, Video
from config.celery import app as celery_app
from config.roles import ANNOTATOR, CURATOR
from generation import jobs
from generation.jobs import job_handler
from generation.models import Job
from tests.conftest import logged_in_api, make_user
from tests.waiting import poll

# --- Job kinds used only by these tests -----------------------------------------------------


class Gates:
    """Lets a test hold a running handler between its steps."""

    def __init__(self, steps: int):
        self.release = [threading.Event() for _ in range(steps)]


GATES: dict[str, Gates] = {}
RUNS: dict[str, int] = {}


@job_handler("test_stepwise", label="Test: stepwise job")
def stepwise(job, *, gate: str, steps: int):
    gates = GATES[gate]
    for step in range(steps):
        job.progress((step + 1) * 100 / (steps + 1), f"step {step + 1} of {steps}")
        job.log(f"waiting after step {step + 1}")
        if not gates.release[step].wait(timeout=30):
            raise TimeoutError(f"the test never released step {step + 1}")
    return {"message": f"all {steps} steps done", "steps": steps}


@job_handler("test_failing", label="Test: failing job")
def failing(job, *, reason: str):
    job.progress(40, "about to fail")
    raise RuntimeError(reason)


@job_handler("test_counting", label="Test: counting job")
def counting(job, *, key: str):
    RUNS[key] = RUNS.get(key, 0) + 1
    job.progress(150)  # clamped to 100
    return {"runs": RUNS[key]}


@job_handler("test_cancelled_midway", label="Test: cancelled while running")
def cancelled_midway(job):
    job.progress(30, "working")
    jobs.cancel(job.job)  # somebody presses "cancel" now
    job.progress(60, "still working")  # the next progress report stops the handler
    raise AssertionError("not reached")


# --- A real worker ---------------------------------------------------------------------------

@contextmanager
def celery_worker():
    """An embedded worker thread on the in-memory broker, with eager execution switched off."""
    celery_app.conf.update(task_always_eager=False, broker_url="memory://",
                           broker_transport_options={"polling_interval": 0.05})
    # The Django fixup runs every system check when a worker starts; the suite has done that already.
    skip_checks = os.environ.get("CELERY_SKIP_CHECKS")
    os.environ["CELERY_SKIP_CHECKS"] = "1"
    try:
        with start_worker(celery_app, perform_ping_check=False, pool="solo", concurrency=1,
                          queues=["default", "generation", "gpu"], shutdown_timeout=30) as worker:
            yield worker
    finally:
        celery_app.conf.update(task_always_eager=True, broker_transport_options={})
        if skip_checks is None:
            os.environ.pop("CELERY_SKIP_CHECKS", None)
        else:
            os.environ["CELERY_SKIP_CHECKS"] = skip_checks


@pytest.mark.django_db(transaction=True)
def test_job_runs_on_a_worker_and_reports_progress():
    requester = make_user("requester", ANNOTATOR)
    api = logged_in_api(requester)
    GATES["worker"] = Gates(steps=3)
    seen_progress = []
    with celery_worker():
        with transaction.atomic():
            job = jobs.enqueue("test_stepwise", params={"gate": "worker", "steps": 3}, user=requester)
            # Nothing is sent before the transaction commits.
            assert Job.objects.get(pk=job.pk).status == Job.Status.QUEUED
        url = f"/api/jobs/{job.pk}/"

        for step in range(3):
            expected = (step + 1) * 100 // 4
            data = poll(lambda: api.get(url).json(), lambda d, e=expected: d["progress"] == e)
            assert data["status"] == "running"
            assert 0 < data["progress"] < 100
            assert data["message"] == f"step {step + 1} of 3"
            assert data["started_at"] is not None and data["finished_at"] is None
            assert data["is_finished"] is False
            seen_progress.append(data["progress"])
            GATES["worker"].release[step].set()

        data = poll(lambda: api.get(url).json(), lambda d: d["is_finished"])
    assert seen_progress == [25, 50, 75]
    assert data["status"] == "succeeded"
    assert data["progress"] == 100
    assert data["message"] == "all 3 steps done"
    assert data["result"] == {"steps": 3}
    assert data["requested_by"] == "requester"
    assert "waiting after step 3" in data["log"]


@pytest.mark.django_db(transaction=True)
def test_upload_is_probed_by_the_worker(bikes, media_root):
    """The whole path from the API: upload, the probe job goes to the worker, the video gets ready."""
    curator = make_user("curator-w", CURATOR)
    api = logged_in_api(curator)
    with celery_worker():
        response = api.post("/api/videos/", {"file": SimpleUploadedFile("bikes.mp4", bikes.read_bytes())},
                            format="multipart")
        assert response.status_code == 201
        assert response.json()["status"] == "probing"
        job_url = f"/api/jobs/{response.json()['probe_job']}/"
        job = poll(lambda: api.get(job_url).json(), lambda d: d["is_finished"])
    assert job["status"] == "succeeded", job["message"]
    video = Video.objects.get(pk=response.json()["id"])
    assert video.status == MediaAsset.Status.READY
    assert (video.width, video.height, video.frame_count) == (640, 272, 250)
    assert video.duration == pytest.approx(10.0, abs=0.05)


# --- Outcomes recorded on the row (run in-process) ------------------------------------------

@pytest.mark.django_db
def test_failing_job_records_message_and_traceback(annotator):
    job = jobs.create("test_failing", params={"reason": "the GPU caught fire"}, user=annotator)
    job = jobs.run_job(job.pk)
    assert job.status == Job.Status.FAILED
    assert job.message == "the GPU caught fire"
    assert job.progress == 40  # where it stopped
    assert job.finished_at is not None and job.is_finished
    assert "Traceback (most recent call last)" in job.log
    assert "RuntimeError: the GPU caught fire" in job.log
    assert job.result == {}


@pytest.mark.django_db
def test_run_job_twice_runs_once(annotator):
    RUNS.pop("twice", None)
    job = jobs.create("test_counting", params={"key": "twice"}, user=annotator)
    first = jobs.run_job(job.pk)
    finished_at = first.finished_at
    second = jobs.run_job(job.pk)
    assert RUNS["twice"] == 1
    assert first.status == second.status == Job.Status.SUCCEEDED
    assert second.finished_at == finished_at
    assert second.result == {"runs": 1}
    assert second.progress == 100


@pytest.mark.django_db
def test_a_running_job_is_not_started_again(annotator):
    RUNS.pop("running", None)
    job = jobs.create("test_counting", params={"key": "running"}, user=annotator)
    Job.objects.filter(pk=job.pk).update(status=Job.Status.RUNNING)  # another worker has it
    assert jobs.run_job(job.pk).status == Job.Status.RUNNING
    assert "running" not in RUNS
    assert jobs.run_job(999999) is None


@pytest.mark.django_db
def test_job_cancelled_while_running_stops_and_stays_cancelled(annotator):
    job = jobs.create("test_cancelled_midway", user=annotator)
    job = jobs.run_job(job.pk)
    assert job.status == Job.Status.CANCELLED
    assert job.message == "Cancelled"
    assert job.progress == 30


@pytest.mark.django_db
def test_enqueue_refuses_unknown_kinds(annotator):
    with pytest.raises(ValueError, match="Unknown job kind 'no-such-kind'"):
        jobs.enqueue("no-such-kind", user=annotator)
    assert Job.objects.count() == 0
    assert {"probe_video", "probe_image", "test_stepwise"} <= set(jobs.registered_kinds())


@pytest.mark.django_db
def test_enqueue_sends_on_commit_only(annotator, django_capture_on_commit_callbacks):
    RUNS.pop("commit", None)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        job = jobs.enqueue("test_counting", params={"key": "commit"}, user=annotator)
    assert len(callbacks) == 1 and "commit" not in RUNS
    callbacks[0]()  # the commit happens: eager Celery runs it here
    job.refresh_from_db()
    assert job.status == Job.Status.SUCCEEDED and RUNS["commit"] == 1


# --- The API: cancel, and who sees which jobs -----------------------------------------------

@pytest.mark.django_db
def test_cancel_endpoint(annotator, annotator_api, curator_api, admin_api):
    own = jobs.create("test_counting", params={"key": "never"}, user=annotator)
    response = curator_api.post(f"/api/jobs/{own.pk}/cancel/")
    assert response.status_code == 403
    assert "Only the person who started a job" in response.json()["error"]

    response = annotator_api.post(f"/api/jobs/{own.pk}/cancel/")
    assert response.status_code == 200
    assert response.json()["status"] == "cancelled" and response.json()["finished_at"]
    again = annotator_api.post(f"/api/jobs/{own.pk}/cancel/")
    assert again.status_code == 409 and "already finished (cancelled)" in again.json()["error"]

    # A cancelled job that a worker picks up later is not run.
    assert jobs.run_job(own.pk).status == Job.Status.CANCELLED
    assert "never" not in RUNS

    other = jobs.create("test_counting", params={"key": "never"}, user=annotator)
    assert admin_api.post(f"/api/jobs/{other.pk}/cancel/").json()["status"] == "cancelled"


@pytest.mark.django_db
def test_annotators_see_only_their_own_jobs(annotator, annotator_api, curator, curator_api, researcher_api):
    other_annotator = make_user("ann2", ANNOTATOR)
    mine = jobs.create("test_counting", params={"key": "a"}, user=annotator)
    theirs = jobs.create("test_counting", params={"key": "b"}, user=other_annotator)
    curators = jobs.create("test_counting", params={"key": "c"}, user=curator)

    listed = annotator_api.get("/api/jobs/").json()
    assert [row["id"] for row in listed["results"]] == [mine.pk]
    assert annotator_api.get(f"/api/jobs/{theirs.pk}/").status_code == 404
    assert annotator_api.get(f"/api/jobs/{curators.pk}/").status_code == 404
    assert annotator_api.post(f"/api/jobs/{theirs.pk}/cancel/").status_code == 404
    assert logged_in_api(other_annotator).get("/api/jobs/").json()["count"] == 1

    for staff_api in (curator_api, researcher_api):
        ids = {row["id"] for row in staff_api.get("/api/jobs/").json()["results"]}
        assert ids == {mine.pk, theirs.pk, curators.pk}
    filtered = curator_api.get("/api/jobs/", {"status": "queued", "kind": "test_counting"}).json()
    assert filtered["count"] == 3
    assert curator_api.get("/api/jobs/", {"status": "succeeded"}).json()["count"] == 0


@pytest.mark.django_db
def test_job_pages(annotator, annotator_client, curator_client):
    job = jobs.create("test_counting", params={"key": "page"}, user=annotator)
    page = annotator_client.get(f"/jobs/{job.pk}/")
    assert page.status_code == 200
    assert b"test_counting" in page.content
    assert annotator_client.get("/jobs/").status_code == 403  # the list is for staff
    listing = curator_client.get("/jobs/")
    assert listing.status_code == 200 and f"/jobs/{job.pk}/".encode() in listing.content
