"""The embedded file-system broker: a plain `celery -A config worker` on a fresh var folder makes the
broker folders itself (no `rundemo` needed) and starts listening."""

import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_plain_worker_on_a_fresh_var_folder_makes_its_broker_folders(tmp_path):
    var_dir = tmp_path / "fresh-var"
    env = {key: value for key, value in os.environ.items() if not key.startswith(("CELERY_", "DJANGO_"))}
    env.update(PLATFORM_VAR_DIR=str(var_dir), DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}",
               DJANGO_DEBUG="true", PYTHONUNBUFFERED="1")
    log = tmp_path / "worker.log"
    worker = subprocess.Popen([sys.executable, "-m", "celery", "-A", "config", "worker", "-Q", "gpu", "--pool", "solo",
                               "--loglevel", "INFO", "--without-heartbeat", "--without-mingle", "--without-gossip"],
                              cwd=ROOT, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while " ready." not in log.read_text(errors="replace") and worker.poll() is None \
                and time.monotonic() < deadline:
            time.sleep(0.1)
        output = log.read_text(errors="replace")
        assert worker.poll() is None and " ready." in output, output
    finally:
        worker.terminate()
        worker.wait(20)
    assert (var_dir / "broker" / "queue").is_dir()
    assert (var_dir / "broker" / "control").is_dir()
