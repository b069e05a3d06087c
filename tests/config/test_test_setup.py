"""The test set-up itself: nothing is written into var/, models stay offline, and the
`postgres` marker skips off PostgreSQL but fails on CI."""

import os
from pathlib import Path

import pytest
from django.conf import settings

from config.celery import app as celery_app
from tests.conftest import BadFiles, postgres_outcome
from tests.parallel_workers import worker_broker_url


def test_hugging_face_hub_is_offline():
    assert os.environ["HF_HUB_OFFLINE"] == "1"


def test_nothing_points_into_var(media_root):
    var = (Path(settings.BASE_DIR) / "var").resolve()
    for path in (settings.MEDIA_ROOT, settings.STATIC_ROOT, settings.MODEL_CACHE_DIR, settings.BROKER_DIR):
        assert not Path(path).resolve().is_relative_to(var), path
    assert Path(settings.MEDIA_ROOT) == media_root
    assert list(media_root.iterdir()) == []  # every test starts with an empty media folder
    # Celery reads CELERY_BROKER_URL from the environment before its configuration: in CI the
    # worker tests run over the real Redis, elsewhere over the in-memory broker.
    assert celery_app.conf.broker_url == (os.environ.get("CELERY_BROKER_URL") or "memory://")
    assert celery_app.conf.task_always_eager is True


def test_default_storage_follows_the_per_test_media_root(media_root):
    from django.core.files.base import ContentFile
    from django.core.files.storage import default_storage

    name = default_storage.save("probe/hello.txt", ContentFile(b"hi"))
    assert (media_root / name).read_bytes() == b"hi"


@pytest.mark.parametrize(("engine", "ci", "expected"), [
    ("django.db.backends.postgresql", None, "run"),
    ("django.db.backends.postgresql", "true", "run"),
    ("django.db.backends.sqlite3", None, "skip"),
    ("django.db.backends.sqlite3", "", "skip"),
    ("django.db.backends.sqlite3", "false", "skip"),
    ("django.db.backends.sqlite3", "true", "fail"),
    ("django.db.backends.sqlite3", "TRUE", "fail"),
    ("django.db.backends.sqlite3", "1", "fail"),
])
def test_postgres_marker_policy(engine, ci, expected):
    assert postgres_outcome(engine, ci) == expected


@pytest.mark.postgres
@pytest.mark.django_db
def test_database_is_postgresql():
    """Runs only on PostgreSQL (and fails on CI when the suite is not pointed at it)."""
    from django.db import connection

    assert connection.vendor == "postgresql"
    with connection.cursor() as cursor:
        cursor.execute("SHOW server_version_num")
        assert int(cursor.fetchone()[0]) >= 130000


def test_sample_media_are_real_files(bigbuckbunny, bikes, astronaut, coffee):
    assert bigbuckbunny.read_bytes()[4:8] == b"ftyp"
    assert bikes.stat().st_size > 100_000
    assert astronaut.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert coffee.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_synthetic_bad_files(bad_files: BadFiles):
    import av

    assert bad_files.empty().stat().st_size == 0
    assert bad_files.truncated_video().read_bytes()[4:8] == b"ftyp"
    assert bad_files.garbage_png().read_bytes()[:4] == b"\x89PNG"
    zero = bad_files.zero_frame_video()
    assert zero.read_bytes()[4:8] == b"ftyp"  # a real MP4 container ...
    with av.open(str(zero)) as container:  # ... that holds no decodable video at all
        assert not container.streams.video
    tiny = bad_files.tiny_video()
    with av.open(str(tiny)) as container:
        assert sum(1 for _ in container.decode(video=0)) == 5


def test_each_parallel_worker_gets_its_own_redis_database():
    assert worker_broker_url("redis://127.0.0.1:6379/0", "gw0") == "redis://127.0.0.1:6379/0"
    assert worker_broker_url("redis://127.0.0.1:6379/0", "gw1") == "redis://127.0.0.1:6379/1"
    assert worker_broker_url("redis://redis:6379", "gw3") == "redis://redis:6379/3"
    assert worker_broker_url("rediss://:pw@cache:6380/15?ssl_cert_reqs=none", "gw2") == \
        "rediss://:pw@cache:6380/1?ssl_cert_reqs=none"
    assert worker_broker_url("redis://127.0.0.1:6379/0", None) == "redis://127.0.0.1:6379/0"
    assert worker_broker_url("memory://", "gw1") == "memory://"
    assert worker_broker_url("filesystem://", "gw1") == "filesystem://"
