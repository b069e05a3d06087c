"""What keeps the test workers of `pytest -n N` (pytest-xdist) apart, as a pytest plugin (tests/conftest.py).

Each worker is a process named gw0, gw1, ... (PYTEST_XDIST_WORKER). pytest-django gives each its own test
database (`test_<name>_gw0`, ...), pytest its own temporary folders (so each test's MEDIA_ROOT and the
session's var/ folders), the live server of the browser tests a free port, Django's cache is in memory.
What workers would still share is a Redis broker (CI sets CELERY_BROKER_URL): a Celery worker thread in one
test worker would consume the jobs another sent, about rows of a database it cannot see. So each test worker
talks to its own Redis database of that server. The tiny models are shared on purpose
(`generation.tiny_model_cache`: built once under a lock).
"""

import os
import re

import torch

REDIS_DATABASES = 16  # Redis's default `databases`


def worker_number(worker: str | None) -> int | None:
    """0 for "gw0", 1 for "gw1", ...; None outside a test worker."""
    match = re.fullmatch(r"gw(\d+)", worker or "")
    return int(match.group(1)) if match else None


def worker_broker_url(url: str, worker: str | None) -> str:
    """The broker URL for test worker `worker`: a Redis URL moves to database (its own + the worker's number),
    modulo 16; any other URL, or no worker, is left as it is."""
    number = worker_number(worker)
    match = re.fullmatch(r"(rediss?://[^/]*)(?:/(\d*))?(\?.*)?", url or "")
    if number is None or match is None:
        return url
    server, database, query = match.group(1), int(match.group(2) or 0), match.group(3) or ""
    return f"{server}/{(database + number) % REDIS_DATABASES}{query}"


def threads_per_worker(workers: str | None) -> int | None:
    """The CPU threads each of `workers` test workers gives torch and the math libraries (the cores shared
    out, at least one); None outside a run with workers."""
    if not (workers or "").isdigit() or int(workers) < 1:
        return None
    return max(1, (os.cpu_count() or 1) // int(workers))


def pytest_configure(config):
    """Before any test runs (Celery reads CELERY_BROKER_URL from the environment on each use). Workers share
    the cores: each gives torch its share of threads rather than one per core, which would oversubscribe them."""
    threads = threads_per_worker(os.environ.get("PYTEST_XDIST_WORKER_COUNT"))
    if threads is not None and os.environ.get("PYTEST_XDIST_WORKER"):
        for variable in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
            os.environ.setdefault(variable, str(threads))
        torch.set_num_threads(threads)
    url = os.environ.get("CELERY_BROKER_URL")
    if url:
        os.environ["CELERY_BROKER_URL"] = worker_broker_url(url, os.environ.get("PYTEST_XDIST_WORKER"))
