"""Fixtures for the browser tests: a real headless Chromium and a real Celery worker thread.

A pytest plugin (`pytest_plugins` in tests/conftest.py), so that a browser test works in any folder:
tests/browser/ holds the generic ones, tests/benchmarks/<slug>/ a benchmark's own (`test_*_browser.py`).
Each is marked `browser`. Every test already gets a fresh MEDIA_ROOT (tests/conftest.py's `media_root`).

Layout of one browser test:

* the test thread drives Chromium through Playwright's sync API;
* pytest-django's `live_server` serves the site from its own thread;
* `celery_worker` consumes jobs from an in-memory broker in a third thread.

Playwright's sync API keeps an asyncio event loop running in the test thread, which makes Django
refuse ORM calls there ("You cannot call this from an async context"); the tests really are
synchronous, so DJANGO_ALLOW_ASYNC_UNSAFE is set before Chromium starts (and with it that loop).
"""

import os
import threading
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-quic",
    "--no-first-run",
    "--disable-component-update",
    "--disable-sync",
]
# Generous for a loaded machine, but far below the suite's budget.
DEFAULT_TIMEOUT_MS = 15_000


def _unavailable(reason: str):
    """Skip on a developer machine without Chromium; fail on CI, where it must be there."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"Browser tests cannot run: {reason} (CI=true, so this is an error, not a skip).")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def _chromium():
    if not CHROMIUM.exists():
        _unavailable(f"{CHROMIUM} is not installed")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("the playwright package is not installed")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def browser_page(_chromium):
    """A fresh page in its own context (own cookies), closed after the test.

    Whatever the Content-Security-Policy refused on the way (Chromium logs each refusal as a console
    error) fails the test: every flow of the platform's own pages runs under the policy without a violation.
    """
    context = _chromium.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(DEFAULT_TIMEOUT_MS)
    page = context.new_page()
    errors, refused = [], []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda message: refused.append(f"{page.url}: {message.text}")
            if message.type == "error" and "Content Security Policy" in message.text else None)
    page.js_errors = errors
    page.csp_violations = refused
    try:
        yield page
    finally:
        context.close()
    assert refused == [], f"the Content-Security-Policy refused: {refused}"


class WorkerRecord:
    """What the embedded worker ran, and in which thread."""

    def __init__(self, worker):
        self.worker = worker
        self.thread: threading.Thread | None = None  # the thread the worker consumes in
        self.runs: list[dict] = []
        self.failures: list[str] = []
        self.done = threading.Event()


def _forget_broker_pools(app):
    """Drop the app's cached broker connection and producer pools (they are tied to a broker URL).

    kombu keeps its pools in process-wide registries keyed by the connection's URL, so a pool
    closed by hand would be handed out again; `kombu.pools.reset()` closes and unregisters them.
    """
    from kombu import pools

    pools.reset()
    app._pool = None
    if "amqp" in app.__dict__:
        app.amqp._producer_pool = None


@pytest.fixture
def celery_worker(transactional_db):
    """A real Celery worker in a thread, consuming the job queues from an in-memory broker.

    Nothing runs eagerly: `enqueue()` publishes to the broker on commit, the HTTP request ends,
    and this worker picks the message up on its own thread, exactly as the separate worker
    process does in production.

    Database. The project's tests/conftest.py gives SQLite tests a database *file* (WAL, 30 s busy
    timeout), where the live server's and the worker's connections simply wait for each other.
    Run without it, pytest-django uses an in-memory database with a shared cache
    (file:memorydb_default?mode=memory&cache=shared): the live server threads borrow the test
    thread's connection and the worker thread opens a second one to the same database. Shared-cache
    SQLite locks per table and does not wait: a job's UPDATE of generation_job while the page
    polls /api/jobs/<id>/ fails at once with "database table is locked: generation_job" (seen in
    a stress run: the job ended `failed`). For that case this fixture turns on
    `PRAGMA read_uncommitted` on every in-memory connection while the worker runs, so readers
    take no table locks; writes still exclude each other, and in these tests the page only
    writes (login, the upload itself) while the worker has nothing to do.
    Celery's Django fix-up "closes" connections around each task, but Django ignores close() on
    an in-memory database, so the worker's connection would outlive the test; `on_postrun`
    closes it for real, inside the worker thread (the database lives on through the test
    thread's connection).
    """
    from celery import signals
    from celery.contrib.testing.worker import start_worker, test_worker_started
    from django.conf import settings
    from django.db import connection, connections
    from django.db.backends.base.base import BaseDatabaseWrapper
    from django.db.backends.signals import connection_created

    from config.celery import app

    overrides = {
        "broker_url": "memory://",
        "broker_transport_options": {"polling_interval": 0.1},
        "task_always_eager": False,
        "worker_hijack_root_logger": False,
    }
    saved = {key: app.conf[key] for key in overrides}
    app.conf.update(overrides)
    _forget_broker_pools(app)

    record = WorkerRecord(worker=None)

    def shared_memory(conn) -> bool:
        return conn.vendor == "sqlite" and conn.is_in_memory_db()

    def set_dirty_reads(conn, on: bool):
        with conn.cursor() as cursor:
            cursor.execute(f"PRAGMA read_uncommitted = {int(on)}")

    def on_connection_created(sender=None, connection=None, **kwargs):
        if shared_memory(connection):
            set_dirty_reads(connection, True)

    def on_started(**kwargs):  # sent from the worker's own thread once its consumer is ready
        record.thread = threading.current_thread()

    def on_prerun(sender=None, task_id=None, args=None, **kwargs):
        record.runs.append({"task": sender.name, "args": list(args or []), "thread": threading.current_thread(),
                            "eager": bool(sender.request.is_eager)})

    def on_postrun(**kwargs):
        for conn in connections.all(initialized_only=True):
            if shared_memory(conn) and conn.connection is not None:
                BaseDatabaseWrapper.close(conn)
        record.done.set()

    def on_failure(sender=None, exception=None, **kwargs):
        record.failures.append(f"{sender.name}: {exception!r}")

    if shared_memory(connection):  # the test thread's connection, which the live server borrows
        set_dirty_reads(connection, True)
    connection_created.connect(on_connection_created, weak=False)
    test_worker_started.connect(on_started, sender=app, weak=False)
    signals.task_prerun.connect(on_prerun, weak=False)
    signals.task_postrun.connect(on_postrun, weak=False)
    signals.task_failure.connect(on_failure, weak=False)
    try:
        with start_worker(app, pool="solo", concurrency=1, perform_ping_check=False,
                          queues=list(settings.JOB_QUEUES), shutdown_timeout=20) as worker:
            record.worker = worker
            yield record
    finally:
        connection_created.disconnect(on_connection_created)
        if shared_memory(connection):
            set_dirty_reads(connection, False)
        test_worker_started.disconnect(on_started, sender=app)
        signals.task_prerun.disconnect(on_prerun)
        signals.task_postrun.disconnect(on_postrun)
        signals.task_failure.disconnect(on_failure)
        app.conf.update(saved)
        _forget_broker_pools(app)


@pytest.fixture
def make_user(transactional_db):
    """A user in one role group (the groups come from annotation.bootstrap's post_migrate hook)."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group

    def make(username: str, role: str, password: str = "browser-test-pass-1"):
        user = get_user_model().objects.create_user(username=username, password=password)
        user.groups.add(Group.objects.get(name=role))
        user.test_password = password
        return user

    return make


@pytest.fixture
def login(live_server):
    """Log a user in through the real login form."""

    def do_login(page, user):
        page.goto(live_server.url + "/login/")
        page.get_by_label("Username").fill(user.username)
        page.get_by_label("Password").fill(user.test_password)
        page.get_by_role("button", name="Log in").click()
        page.wait_for_url(live_server.url + "/")
        return page

    return do_login


@pytest.fixture
def start_work(live_server):
    """Press the button of a study's work page that claims the next item (opening the page claims
    nothing): on the page the browser shows, or on `/work/<slug>/` opened first when `slug` is given."""

    def start(page, slug: str | None = None):
        if slug is not None:
            page.goto(f"{live_server.url}/work/{slug}/")
        with page.expect_navigation():
            page.locator("[data-start] #next-item").click()
        return page

    return start
