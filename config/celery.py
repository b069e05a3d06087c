import os

from celery import Celery
from celery.signals import beat_init, before_task_publish, celeryd_init

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("platform")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


def ensure_broker_folders() -> None:
    """The file-system broker needs its folders before the first message."""
    options = app.conf.broker_transport_options or {}
    for key in ("data_folder_in", "data_folder_out", "control_folder"):
        if options.get(key):
            os.makedirs(options[key], exist_ok=True)


_folders_ready = False


@before_task_publish.connect
def _broker_folders_before_first_message(**_kwargs) -> None:
    """Any process may send the first message (a web request, `seed_demo`, a command), not only the
    worker that `rundemo` starts: the folders are made once per process, before its first send."""
    global _folders_ready
    if not _folders_ready:
        ensure_broker_folders()
        _folders_ready = True


@celeryd_init.connect
@beat_init.connect
def _broker_folders_at_start(**_kwargs) -> None:
    """A plain `celery -A config worker` (or `beat`) on a fresh var folder makes the folders it
    listens on before it declares its queues; `rundemo` is not needed for that."""
    ensure_broker_folders()
