"""Uploading media through the REST API, background probing, and `manage.py import_media`.

Every rejected upload must answer 4xx with a readable `error`, and leave neither a row nor a
file behind. Accepted uploads are probed by a background job that fills in the metadata.
"""

import io
import shutil
import threading
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.db import connection

from annotation import media as media_service
from annotation.models import Image, MediaAsset, Video
from generation import jobs
from generation.media_probe import MediaError
from generation.models import Job
from tests.conftest import files_under, ingest_path, logged_in_api

pytestmark = pytest.mark.django_db

VIDEOS = "/api/videos/"
IMAGES = "/api/images/"


def upload(client, endpoint: str, path: Path, name: str | None = None, **extra):
    with open(path, "rb") as handle:
        return client.post(endpoint, {"file": SimpleUploadedFile(name or path.name, handle.read()), **extra},
                           format="multipart")


def assert_nothing_stored(media_root):
    assert Video.objects.count() == 0
    assert Image.objects.count() == 0
    assert files_under(media_root) == []


# --- Happy paths ----------------------------------------------------------------------------

def test_video_upload_is_stored_and_probed_in_the_background(curator_api, bigbuckbunny, media_root,
                                                             django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        response = upload(curator_api, VIDEOS, bigbuckbunny, title="Big Buck Bunny")
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["title"] == "Big Buck Bunny"
    assert body["original_name"] == "bigbuckbunny.mp4"
    assert body["size_bytes"] == bigbuckbunny.stat().st_size
    assert body["uploaded_by"] == "cur"
    assert len(callbacks) == 1  # the probe is sent only once the upload's transaction commits

    video = Video.objects.get(pk=body["id"])
    stored = Path(video.file.path)
    assert stored.is_relative_to(media_root)
    assert stored.read_bytes() == bigbuckbunny.read_bytes()

    job = Job.objects.get(pk=body["probe_job"])
    assert job.kind == "probe_video"
    assert job.params == {"asset_id": video.pk}
    assert job.requested_by.username == "cur"
    # CELERY_TASK_ALWAYS_EAGER (set for the session in conftest) ran the job when the commit hook fired.
    assert job.status == Job.Status.SUCCEEDED, job.message
    assert job.progress == 100
    assert "5.28 s" in job.message and "1280×720" in job.message

    video.refresh_from_db()
    assert video.status == MediaAsset.Status.READY
    assert video.duration == pytest.approx(5.28, abs=0.05)
    assert (video.width, video.height) == (1280, 720)
    assert video.fps == pytest.approx(25.0)
    assert video.codec == "h264"
    assert video.frame_count == 132
    assert video.poster and Path(video.poster.path).is_relative_to(media_root)
    assert Path(video.poster.path).read_bytes()[:3] == b"\xff\xd8\xff"  # a JPEG

    detail = curator_api.get(f"{VIDEOS}{video.pk}/").json()
    assert detail["status"] == "ready"
    assert detail["poster_url"] == f"/media/files/videos/{video.pk}/poster/"


def test_image_upload_then_run_job_directly(curator_api, astronaut, media_root):
    response = upload(curator_api, IMAGES, astronaut)
    assert response.status_code == 201, response.json()
    image = Image.objects.get(pk=response.json()["id"])
    assert (image.width, image.height, image.format) == (512, 512, "png")  # known at upload time
    assert image.status == MediaAsset.Status.PROBING
    assert Path(image.file.path).is_relative_to(media_root)
    job = Job.objects.get(pk=response.json()["probe_job"])
    assert job.kind == "probe_image" and job.status == Job.Status.QUEUED

    job = jobs.run_job(job.pk)
    assert job.status == Job.Status.SUCCEEDED, job.message
    assert job.result["width"] == 512
    image.refresh_from_db()
    assert image.status == MediaAsset.Status.READY
    assert image.thumbnail and Path(image.thumbnail.path).is_file()


def test_admin_may_upload_too(admin_api, coffee):
    response = upload(admin_api, IMAGES, coffee)
    assert response.status_code == 201
    assert Image.objects.filter(original_name="coffee.png").count() == 1


# --- Rejected uploads -----------------------------------------------------------------------

BAD_UPLOADS = [
    # id, endpoint, how to make the file, expected status, words the error must contain
    ("empty file", VIDEOS, lambda bad: bad.empty(), 400, "empty"),
    ("unsupported extension", VIDEOS, lambda bad: bad.text(), 415, "Unsupported file type '.txt'"),
    ("text named .mp4", VIDEOS, lambda bad: bad.text_named_video(), 415, "does not contain a video"),
    ("truncated mp4", VIDEOS, lambda bad: bad.truncated_video(), 400, "not a readable video"),
    ("mp4 cut in its media data", VIDEOS, lambda bad: bad.cut_in_media_data(), 400, "not a readable video"),
    ("faststart mp4 cut in its media data", VIDEOS, lambda bad: bad.faststart_cut(), 400,
     "The video is cut short: its frames stop decoding after"),
    ("faststart mp4 without its last frame", VIDEOS, lambda bad: bad.faststart_without_last_frame(), 400,
     "The video is cut short: its frames end at 5.24 s of the 5.28 s it declares"),
    ("PNG with garbage body", IMAGES, lambda bad: bad.garbage_png(), 400, "not a readable image"),
    ("zero-frame mp4", VIDEOS, lambda bad: bad.zero_frame_video(), 400, "no video stream"),
    ("image sent to the video endpoint", VIDEOS, lambda bad: bad.sample_image, 415, "is not a video file"),
    ("video sent to the image endpoint", IMAGES, lambda bad: bad.sample_video, 415, "is not an image file"),
    ("empty image", IMAGES, lambda bad: bad.empty("empty.png"), 400, "empty"),
]


@pytest.mark.parametrize(("endpoint", "make", "status", "words"), [case[1:] for case in BAD_UPLOADS],
                         ids=[case[0] for case in BAD_UPLOADS])
def test_bad_upload_is_refused_and_leaves_nothing(curator_api, bad_files, media_root, endpoint, make, status,
                                                  words, django_capture_on_commit_callbacks):
    path = make(bad_files)
    with django_capture_on_commit_callbacks(execute=True):
        response = upload(curator_api, endpoint, path)
    assert response.status_code == status, response.content
    error = response.json()["error"]
    assert isinstance(error, str) and words in error
    assert_nothing_stored(media_root)
    assert Job.objects.count() == 0


def test_whole_faststart_video_is_accepted(curator_api, bad_files, django_capture_on_commit_callbacks):
    """The end check does not refuse a complete file whose index comes first."""
    with django_capture_on_commit_callbacks(execute=True):
        response = upload(curator_api, VIDEOS, bad_files.faststart_video())
    assert response.status_code == 201, response.json()
    video = Video.objects.get(pk=response.json()["id"])
    assert video.status == MediaAsset.Status.READY
    assert video.frame_count == 132


def test_upload_over_the_size_limit_is_refused(curator_api, bigbuckbunny, media_root, settings):
    settings.MEDIA_MAX_UPLOAD_MB = 1  # bigbuckbunny.mp4 is 1,055,736 bytes, just over 1 MiB
    response = upload(curator_api, VIDEOS, bigbuckbunny)
    assert response.status_code == 413  # refused as it is read, at the first byte past the limit (config.uploads)
    assert response.json()["error"] == "'bigbuckbunny.mp4' is larger than the 1 MB the platform accepts."
    assert_nothing_stored(media_root)


def test_duplicate_upload_is_refused_with_409(curator_api, bikes, media_root):
    first = upload(curator_api, VIDEOS, bikes)
    assert first.status_code == 201
    files_after_first = files_under(media_root)
    assert len(files_after_first) == 1

    again = upload(curator_api, VIDEOS, bikes, name="bikes-copy.mp4")  # same bytes, other name
    assert again.status_code == 409
    assert again.json()["existing_id"] == first.json()["id"]
    assert "already in the library" in again.json()["error"]
    assert Video.objects.count() == 1
    assert files_under(media_root) == files_after_first


def test_missing_file_field(curator_api, media_root):
    response = curator_api.post(VIDEOS, {"title": "no file here"}, format="multipart")
    assert response.status_code == 400
    assert response.json()["error"] == "Send the file in the multipart field 'file'."
    assert "file" in response.json()
    assert_nothing_stored(media_root)


def test_json_body_is_not_an_upload(curator_api, media_root):
    response = curator_api.post(VIDEOS, {"file": "bikes.mp4"}, format="json")
    assert response.status_code == 415
    assert response.json()["error"]
    assert_nothing_stored(media_root)


@pytest.mark.parametrize("role_api", ["annotator_api", "researcher_api"])
def test_annotators_and_researchers_cannot_upload(request, role_api, bikes, astronaut, media_root):
    client = request.getfixturevalue(role_api)
    for endpoint, path in ((VIDEOS, bikes), (IMAGES, astronaut)):
        response = upload(client, endpoint, path)
        assert response.status_code == 403
        assert response.json()["error"] == "Your role does not allow this."
    assert_nothing_stored(media_root)


def test_anonymous_cannot_upload(bikes, media_root):
    response = upload(logged_in_api(None), VIDEOS, bikes)
    assert response.status_code in (401, 403)
    assert response.json()["error"]
    assert_nothing_stored(media_root)


def test_failed_store_removes_the_file(curator, bikes, media_root, monkeypatch):
    """If writing the row fails after the file was saved, the file is removed again."""

    def broken_enqueue(*args, **kwargs):
        raise RuntimeError("queue is down")

    monkeypatch.setattr(media_service.jobs, "enqueue", broken_enqueue)
    incoming = media_service.incoming_from_path(bikes)
    with pytest.raises(RuntimeError, match="queue is down"):
        media_service.ingest(incoming, user=curator)
    incoming.fileobj.close()
    assert_nothing_stored(media_root)


# --- The background probe fails -------------------------------------------------------------

def test_failed_video_probe_removes_row_and_file(curator_api, bikes, media_root, monkeypatch,
                                                 django_capture_on_commit_callbacks):
    def broken_probe(path):
        raise MediaError("the moov atom is damaged")

    monkeypatch.setattr("annotation.media_jobs.probe_video", broken_probe)
    with django_capture_on_commit_callbacks(execute=True):
        response = upload(curator_api, VIDEOS, bikes)
    assert response.status_code == 201  # it passed the quick check at upload time
    job = Job.objects.get(pk=response.json()["probe_job"])
    assert job.status == Job.Status.FAILED
    assert job.message == "bikes.mp4 was removed: the moov atom is damaged"
    assert "Traceback" in job.log and "MediaError" in job.log
    assert job.finished_at is not None
    assert_nothing_stored(media_root)

    job_view = curator_api.get(f"/api/jobs/{job.pk}/").json()
    assert job_view["status"] == "failed" and job_view["is_finished"] is True


def test_failed_image_probe_removes_row_and_file(curator_api, astronaut, media_root, monkeypatch):
    def broken_thumbnail(path, max_side=320):
        raise OSError("truncated image data")

    monkeypatch.setattr("annotation.media_jobs.thumbnail_jpeg", broken_thumbnail)
    response = upload(curator_api, IMAGES, astronaut)
    assert response.status_code == 201
    job = jobs.run_job(response.json()["probe_job"])
    assert job.status == Job.Status.FAILED
    assert "astronaut.png was removed" in job.message and "truncated image data" in job.message
    assert_nothing_stored(media_root)


def test_probe_of_a_deleted_asset_fails_cleanly(curator, bikes):
    video = ingest_path(bikes, user=curator, probe=False)
    job = jobs.create("probe_video", params={"asset_id": video.pk + 1000}, user=curator)
    job = jobs.run_job(job.pk)
    assert job.status == Job.Status.FAILED
    assert job.message == f"Video #{video.pk + 1000} no longer exists."


# --- Concurrency: the same file uploaded twice at once -------------------------------------

@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_concurrent_duplicate_uploads_store_one(curator, bikes, media_root, monkeypatch):
    """Both requests pass the duplicate check before either writes; the unique checksum decides."""
    barrier = threading.Barrier(2, timeout=20)
    real_check = media_service.check_video

    def check_then_wait(source):
        real_check(source)
        barrier.wait()  # both uploads are now past the "already in the library?" query

    monkeypatch.setattr(media_service, "check_video", check_then_wait)
    outcomes = []

    def upload_once(name):
        try:
            with open(bikes, "rb") as handle:
                data = handle.read()
            incoming = media_service.Incoming(fileobj=io.BytesIO(data), name=name, size=len(data))
            try:
                media_service.ingest(incoming, user=curator, probe=False)
                outcomes.append("stored")
            except media_service.MediaRejected as exc:
                outcomes.append(exc.status)
        finally:
            connection.close()

    threads = [threading.Thread(target=upload_once, args=(f"copy-{i}.mp4",)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert sorted(outcomes, key=str) == [409, "stored"]
    assert Video.objects.count() == 1
    assert len(files_under(media_root)) == 1


# --- manage.py import_media -----------------------------------------------------------------

def test_import_media_command(tmp_path, bigbuckbunny, bikes, astronaut, media_root):
    folder = tmp_path / "incoming"
    (folder / "nested").mkdir(parents=True)
    shutil.copy(bigbuckbunny, folder / bigbuckbunny.name)
    shutil.copy(bikes, folder / "nested" / bikes.name)
    shutil.copy(astronaut, folder / astronaut.name)
    (folder / "readme.txt").write_text("not media")

    out = io.StringIO()
    call_command("import_media", str(folder), stdout=out)
    text = out.getvalue()
    assert "3 added, 0 already present, 0 rejected, 1 not media." in text
    assert Video.objects.count() == 2 and Image.objects.count() == 1
    assert set(Video.objects.values_list("status", flat=True)) == {MediaAsset.Status.READY}
    assert Image.objects.get().status == MediaAsset.Status.READY
    assert set(Video.objects.values_list("source", flat=True)) == {MediaAsset.Source.IMPORT}
    bunny = Video.objects.get(original_name="bigbuckbunny.mp4")
    assert bunny.duration == pytest.approx(5.28, abs=0.05) and bunny.probe_job.status == Job.Status.SUCCEEDED
    stored = files_under(media_root)
    assert len(stored) == 6  # 3 files, 2 posters, 1 thumbnail

    out = io.StringIO()
    call_command("import_media", str(folder), stdout=out)
    assert "0 added, 3 already present, 0 rejected, 1 not media." in out.getvalue()
    assert "already in the library" in out.getvalue()
    assert Video.objects.count() == 2 and Image.objects.count() == 1
    assert files_under(media_root) == stored


@pytest.mark.parametrize("background", [False, True], ids=["probed here", "queued for a worker"])
def test_import_media_reports_rejected_files(tmp_path, bad_files, media_root, background):
    folder = tmp_path / "incoming"
    folder.mkdir()
    shutil.copy(bad_files.truncated_video(), folder / "broken.mp4")
    shutil.copy(bad_files.faststart_cut(), folder / "cut.mp4")
    out = io.StringIO()
    call_command("import_media", str(folder), "--no-recursive", *(["--background"] if background else []), stdout=out)
    assert "0 added, 0 already present, 2 rejected, 0 not media." in out.getvalue()
    assert "broken.mp4" in out.getvalue()
    assert "cut.mp4: 'cut.mp4': The video is cut short" in out.getvalue()
    assert_nothing_stored(media_root)
    assert Job.objects.count() == 0

    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="2 file\\(s\\) rejected"):
        call_command("import_media", str(folder), "--strict", stdout=io.StringIO())
    with pytest.raises(CommandError, match="is not a folder"):
        call_command("import_media", str(folder / "missing"), stdout=io.StringIO())
