"""`clean_media`: files a killed import or upload left under the media storage, with no row, are removed.

An interrupted import is simulated by an import whose process "dies" after storing its media: the
transaction rolls back (no rows), but neither its own clean-up nor its lease's release runs, as with
kill -9.
"""

import os
import time

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command

from annotation import media_cleanup, tasks, versions
from annotation.importers import release
from annotation.models import BenchmarkVersion, Image
from tests.conftest import files_under
from tests.release_fixtures import write_cvqa

pytestmark = pytest.mark.django_db

HOUR = 3600


def age(paths, seconds: float) -> None:
    """Set the files' modification time `seconds` into the past."""
    stamp = time.time() - seconds
    for path in paths:
        os.utime(path, (stamp, stamp))


def relative(paths, root) -> set[str]:
    return {path.relative_to(root).as_posix() for path in paths}


@pytest.fixture
def interrupted_import(tmp_path, media, media_root, monkeypatch):
    """Files an import stored before it was killed: four images with thumbnails, and its lease."""
    root = tmp_path / "cvqa"
    write_cvqa(root, media)

    def killed(version):
        raise SystemExit("killed")

    with monkeypatch.context() as patched:
        patched.setattr(versions, "freeze", killed)
        patched.setattr(release, "_delete", lambda stored: None)
        patched.setattr(media_cleanup.ImportLease, "__exit__", lambda self, *exc: None)
        with pytest.raises(SystemExit):
            release.import_release("cvqa", root, "v1")
    assert BenchmarkVersion.objects.count() == 0 and Image.objects.count() == 0
    left = files_under(media_root)
    assert len([path for path in left if path.parts[-3] == "images"]) == 4
    assert len([path for path in left if path.parts[-2] == media_cleanup.LEASE_FOLDER]) == 1
    return left


def test_an_interrupted_import_leaves_files_that_clean_media_removes(interrupted_import, media_root, image,
                                                                     capsys):
    referenced = files_under(media_root)  # the library's own image and thumbnail, plus the import's leftovers
    kept = set(referenced) - set(interrupted_import)
    assert relative(kept, media_root) == {image.file.name, image.thumbnail.name}
    age(referenced, 2 * HOUR)

    call_command("clean_media", "--dry-run")
    out = capsys.readouterr().out
    assert files_under(media_root) == referenced  # a dry run deletes nothing
    orphans = {path for path in interrupted_import if path.parts[-2] != media_cleanup.LEASE_FOLDER}
    for name in relative(orphans, media_root):
        assert f"would delete {name} (" in out
    assert "(the lease of an import that stopped)" in out
    assert image.file.name not in out and image.thumbnail.name not in out
    assert f"{len(orphans)} unreferenced file(s)" in out and "nothing deleted (dry run)" in out

    call_command("clean_media")
    out = capsys.readouterr().out
    assert set(files_under(media_root)) == kept
    assert f"{len(orphans)} unreferenced file(s)" in out and "deleted." in out
    image.refresh_from_db()
    assert image.file.storage.exists(image.file.name)


def test_young_files_are_kept_until_the_grace_period_passes(interrupted_import, media_root, capsys):
    call_command("clean_media")
    assert files_under(media_root) == interrupted_import  # just written: within the default hour
    assert "0 unreferenced file(s)" in capsys.readouterr().out

    age(interrupted_import, 900)  # the lease went stale after ten minutes without renewal
    call_command("clean_media", "--older-than", "1000")
    stored = [path for path in interrupted_import if path.parts[-2] != media_cleanup.LEASE_FOLDER]
    assert files_under(media_root) == stored  # only the stale lease went
    call_command("clean_media", "--older-than", "800")
    assert files_under(media_root) == []


def test_the_grace_period_comes_from_the_settings(interrupted_import, media_root, settings):
    age(interrupted_import, 900)
    settings.MEDIA_ORPHAN_GRACE_SECONDS = 800
    media_cleanup.clean()
    assert files_under(media_root) == []


def test_files_of_an_import_in_progress_are_kept_whatever_their_age(media_root, image, capsys):
    with media_cleanup.ImportLease() as lease:
        time.sleep(1.1)  # the lease's start is in whole seconds
        written = media_root / "images" / "ab" / "abcdef.png"
        written.parent.mkdir(parents=True)
        written.write_bytes(b"not yet registered")
        lease.renew()
        call_command("clean_media", "--older-than", "0")
        assert written.exists()
        assert "kept 1 unreferenced file(s) written since an import in progress began" in capsys.readouterr().out
    call_command("clean_media", "--older-than", "0")
    assert not written.exists()
    assert set(files_under(media_root)) == {media_root / image.file.name, media_root / image.thumbnail.name}


def test_only_the_folders_of_the_file_fields_are_looked_at(media_root):
    export = media_root / "exports" / "job-1" / "results.csv"
    export.parent.mkdir(parents=True)
    export.write_text("kept")
    age([export], 2 * HOUR)
    assert media_cleanup.stored_folders(media_cleanup.file_fields()) == [
        "attempt-masks", "attempts", "images", "posters", "thumbnails", "videos"]
    media_cleanup.clean()
    assert export.exists()


def test_a_negative_grace_period_is_refused():
    with pytest.raises(CommandError, match="--older-than must be 0 or more seconds"):
        call_command("clean_media", "--older-than", "-5")


def test_beat_runs_the_clean_up_task(interrupted_import, media_root):
    entry = settings.CELERY_BEAT_SCHEDULE["clean-media"]
    assert entry["task"] == tasks.clean_media.name == "annotation.clean_media"
    assert entry["schedule"] == settings.MEDIA_CLEAN_INTERVAL_SECONDS
    age(interrupted_import, 2 * HOUR)
    assert tasks.clean_media() == 8  # four images and their thumbnails
    assert files_under(media_root) == []
