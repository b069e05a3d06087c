"""Gunicorn settings for the web service (deploy/Dockerfile runs `gunicorn --config deploy/gunicorn.conf.py`).

Every value can be changed from the environment. Gunicorn sits behind nginx, which buffers slow
clients and uploads and sends protected media itself (X-Accel-Redirect).
"""

import multiprocessing
import os

bind = os.environ.get("GUNICORN_BIND", "0.0.0.0:8000")
worker_class = "gthread"
workers = int(os.environ.get("GUNICORN_WORKERS", min(2 * multiprocessing.cpu_count() + 1, 9)))
# Each crowd request spends part of its time waiting for its commit: enough threads keep the CPUs
# busy meanwhile (bench/claims.py: 2 workers x 16 threads on 2 cores).
threads = int(os.environ.get("GUNICORN_THREADS", "8"))
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "120"))
graceful_timeout = 30
keepalive = 5
# Recycle workers now and then, so that a slow leak cannot grow without bound.
max_requests = 1000
max_requests_jitter = 100
# Only nginx reaches this port; trust its X-Forwarded-* headers.
forwarded_allow_ips = os.environ.get("GUNICORN_FORWARDED_ALLOW_IPS", "*")
accesslog = "-"
errorlog = "-"
loglevel = os.environ.get("LOG_LEVEL", "info").lower()
if os.path.isdir("/dev/shm"):
    # Heartbeat files on tmpfs: a container's overlay disk can stall them and get workers killed.
    worker_tmp_dir = "/dev/shm"
