import signal
import subprocess
import sys
import time

from django.conf import settings
from django.core.management.base import BaseCommand

from config.celery import ensure_broker_folders


class Command(BaseCommand):
    help = ("Serve the platform for a single machine: the development web server plus one Celery worker "
            "(with its beat scheduler) on every queue, on the broker the settings name.")

    def add_arguments(self, parser):
        parser.add_argument("--addr", default="127.0.0.1")
        parser.add_argument("--port", default="8000")
        parser.add_argument("--concurrency", default="2")

    def handle(self, addr, port, concurrency, **options):
        ensure_broker_folders()
        worker = subprocess.Popen([
            sys.executable, "-m", "celery", "-A", "config", "worker", "--beat",
            "-Q", ",".join(settings.JOB_QUEUES), "--concurrency", concurrency, "--pool", "threads",
            "--loglevel", "INFO", "--schedule", str(settings.VAR_DIR / "celerybeat-schedule"),
        ])
        web = subprocess.Popen([sys.executable, "manage.py", "runserver", "--noreload", f"{addr}:{port}"])
        self.stdout.write(self.style.SUCCESS(f"Serving http://{addr}:{port}/ with a background worker. Ctrl-C stops."))
        processes = [web, worker]
        try:
            while all(p.poll() is None for p in processes):
                time.sleep(0.5)
        except KeyboardInterrupt:
            pass
        finally:
            for process in processes:
                if process.poll() is None:
                    process.send_signal(signal.SIGTERM)
            for process in processes:
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    process.kill()
