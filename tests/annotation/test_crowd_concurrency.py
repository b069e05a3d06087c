"""Many workers at once: the database, not the code's good intentions, holds the k cap.

Worker threads each use their own database connection (closed when the thread ends). The tests
run on whatever database the session uses:

    .venv/bin/pytest tests/annotation/test_crowd_concurrency.py                       # SQLite (a test database file)
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/test .venv/bin/pytest tests/annotation/test_crowd_concurrency.py

On SQLite the test database must be a file, not shared-cache memory (tests/conftest.py sets
DATABASES["default"]["TEST"]["NAME"]): shared-cache memory databases answer "table is locked"
to concurrent writers instead of waiting. With a file, WAL and IMMEDIATE transactions
(config/settings.py) make writers queue (for up to 120 s here, see `file_database`).
"""

import random
import threading
import time
import traceback
from collections import Counter

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.db.models import Count, Q

from annotation.crowd import assignment, review, submissions
from annotation.crowd.errors import CrowdError
from annotation.crowd.models import Claim, Study, StudyItem, Submission
from config.models import StateChange
from tests.conftest import create_study

FORM = {"fields": [{"name": "label", "type": "single_choice", "options": ["cat", "dog"]}]}
ANSWER = {"label": "dog"}

ITEMS, K, WORKERS = 200, 3, 20  # 600 claims that submit, plus the returned ones
RELEASE_RATE = 0.05  # some workers give an item back, so freed places are re-handed out under load
DEADLINE_S = 240


def make_study(slug: str, *, items: int, k: int, **fields) -> Study:
    return create_study(slug, form=FORM, items=items, k=k, name=slug, **{"lease_seconds": 3600, **fields})


def make_workers(count: int, prefix: str = "crowd") -> list:
    user_model = get_user_model()
    return [user_model.objects.create(username=f"{prefix}{n}") for n in range(count)]


def run_in_threads(targets: list, *, timeout: float = DEADLINE_S) -> list[str]:
    """Start every target at the same moment, each on its own connection; return their errors."""
    barrier = threading.Barrier(len(targets))
    errors: list[str] = []

    def wrap(target):
        try:
            barrier.wait(timeout=30)
            target()
        except BaseException as exc:  # noqa: BLE001 - reported to the test, which fails on it
            errors.append(f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}")
        finally:
            connection.close()

    threads = [threading.Thread(target=wrap, args=(t,), daemon=True) for t in targets]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout)
    assert not any(t.is_alive() for t in threads), "a worker thread hangs"
    return errors


def holding_per_item(study_id: int):
    """One statement, so one consistent snapshot: places left plus places held must be k."""
    return StudyItem.objects.filter(study_id=study_id).values("pk", "open_slots").annotate(
        holding=Count("claims", filter=Q(claims__status__in=Claim.HOLDS_SLOT)))


@pytest.fixture
def file_database():
    """SQLite: a database file, and a longer wait for the write lock while the threads run.

    SQLite's busy handler is not fair (a waiter polls with growing sleeps, up to 100 ms, and a
    newcomer may take the lock in between), so with 20 writer threads on a loaded 2-core machine one
    thread can wait past the 30 s the settings allow. Waiting is right; failing the request is not
    what this test is about, so the threads get 120 s.
    """
    if connection.vendor != "sqlite":
        yield connection.settings_dict
        return
    if connection.is_in_memory_db():
        pytest.fail("the SQLite test database is in memory: set DATABASES['default']['TEST']['NAME'] to a file "
                    "(tests/conftest.py does) so that worker threads wait for each other instead of failing")
    # the threads' new connections read this same dict
    options = connection.settings_dict.setdefault("OPTIONS", {})
    saved = options.get("timeout")
    options["timeout"] = 120
    try:
        yield connection.settings_dict
    finally:
        if saved is None:
            options.pop("timeout", None)
        else:
            options["timeout"] = saved


# --- The stress test --------------------------------------------------------------------------

def _stress() -> float:
    study = make_study("stress", items=ITEMS, k=K)
    workers = make_workers(WORKERS)
    lock = threading.Lock()
    done = Counter()
    stop = threading.Event()
    observed = {"samples": 0, "max_holding": 0, "violations": []}

    def work(worker, seed):
        rng = random.Random(seed)
        own_study = Study.objects.get(pk=study.pk)
        deadline = time.monotonic() + DEADLINE_S
        while time.monotonic() < deadline:
            claim = assignment.claim_next(own_study, worker)
            if claim is None:
                # Nothing for me now. Only when nobody holds an item can none be returned any more;
                # then the state is final, and there must be nothing left for me either.
                if not Claim.objects.filter(study_id=study.pk, status=Claim.Status.ACTIVE).exists() and not (
                        StudyItem.objects.filter(study_id=study.pk, open_slots__gt=0)
                        .exclude(claims__worker=worker).exists()):
                    return
                time.sleep(0.1)
                continue
            assert claim.status == Claim.Status.ACTIVE and claim.worker_id == worker.pk
            if rng.random() < RELEASE_RATE:
                assignment.release(claim, worker)
                with lock:
                    done["returned"] += 1
                continue
            submission, created, _ = submissions.submit(claim, worker, ANSWER)
            assert created and submission.claim_id == claim.pk
            with lock:
                done["submitted"] += 1
        raise AssertionError(f"{worker} still had work after {DEADLINE_S} s")

    def monitor():
        while not stop.is_set():
            rows = list(holding_per_item(study.pk))
            observed["samples"] += 1
            observed["max_holding"] = max([observed["max_holding"], *(row["holding"] for row in rows)])
            observed["violations"] += [row for row in rows if row["holding"] > K or row["open_slots"] < 0
                                       or row["open_slots"] + row["holding"] != K]
            time.sleep(0.1)

    monitor_errors: list[str] = []

    def run_monitor():
        try:
            monitor()
        except BaseException as exc:  # noqa: BLE001
            monitor_errors.append(f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}")
        finally:
            connection.close()

    watcher = threading.Thread(target=run_monitor, daemon=True)
    started = time.monotonic()
    watcher.start()
    errors = run_in_threads([lambda w=w, n=n: work(w, n) for n, w in enumerate(workers)])
    stop.set()
    watcher.join(30)
    elapsed = time.monotonic() - started
    print(f"\n{connection.vendor}: {WORKERS} workers, {done['submitted']} submitted, {done['returned']} returned, "
          f"{done['submitted'] + done['returned']} claims in {elapsed:.1f} s; monitor took "
          f"{observed['samples']} snapshots, max {observed['max_holding']} holders per item")

    assert errors == [] and monitor_errors == []
    # at every moment the monitor looked: no item over k, no negative places, places + holders == k
    assert observed["violations"] == []
    assert observed["samples"] >= 5 and observed["max_holding"] <= K
    # and at the end
    assert not StudyItem.objects.filter(study=study, open_slots__lt=0).exists()
    assert [row for row in holding_per_item(study.pk) if row["holding"] != K or row["open_slots"] != 0] == []
    assert not Claim.objects.values("item", "worker").annotate(n=Count("pk")).filter(n__gt=1).exists()
    items = StudyItem.objects.filter(study=study)
    assert set(items.values_list("completed_count", "open_slots")) == {(K, 0)}
    per_item = Counter(Submission.objects.filter(claim__study=study).values_list("claim__item", flat=True))
    assert set(per_item.values()) == {K} and len(per_item) == ITEMS
    assert Submission.objects.count() == done["submitted"] == ITEMS * K
    statuses = Counter(Claim.objects.filter(study=study).values_list("status", flat=True))
    assert statuses == Counter({Claim.Status.SUBMITTED: ITEMS * K, Claim.Status.RETURNED: done["returned"]})
    assert sum(statuses.values()) >= 500
    # every claim started and ended in the history
    assert StateChange.objects.about(Claim).filter(to_state="active").count() == sum(statuses.values())
    assert StateChange.objects.about(Claim).filter(to_state="submitted").count() == ITEMS * K
    assert StateChange.objects.about(Claim).filter(to_state="returned").count() == done["returned"]
    return elapsed


@pytest.mark.postgres
def test_no_item_is_handed_out_more_than_k_times_under_load_postgres(transactional_db):
    assert connection.vendor == "postgresql"
    _stress()


def test_no_item_is_handed_out_more_than_k_times_under_load(transactional_db, file_database):
    if connection.vendor == "postgresql":
        pytest.skip("on PostgreSQL the postgres-marked variant runs this")
    _stress()


# --- Races of one worker with themselves, and of curators -------------------------------------

def test_concurrent_claims_of_one_worker_give_one_claim(transactional_db, file_database):
    study = make_study("same-worker", items=10, k=1)
    worker, = make_workers(1)
    got = []

    def claim():
        got.append(assignment.claim_next(Study.objects.get(pk=study.pk), worker).pk)

    assert run_in_threads([claim] * 8) == []
    assert len(got) == 8 and len(set(got)) == 1
    assert Claim.objects.count() == 1
    assert sum(StudyItem.objects.values_list("open_slots", flat=True)) == 9


def test_workers_claiming_at_once_all_get_an_item_while_items_are_left(transactional_db, file_database):
    """Items other requests are taking at this moment (locked, on PostgreSQL) are not "nothing left"."""
    study = make_study("enough-for-all", items=16, k=1)
    workers = make_workers(16)
    got = {}

    def claim(worker):
        def run():
            got[worker.pk] = assignment.claim_next(Study.objects.get(pk=study.pk), worker)
        return run

    assert run_in_threads([claim(w) for w in workers]) == []
    assert all(got[w.pk] is not None for w in workers), [w.username for w in workers if got[w.pk] is None]
    assert len({c.item_id for c in got.values()}) == 16
    assert set(StudyItem.objects.values_list("open_slots", flat=True)) == {0}


def test_a_double_submit_makes_one_submission(transactional_db, file_database):
    study = make_study("double-submit", items=3, k=1)
    worker, = make_workers(1)
    claim_id = assignment.claim_next(study, worker).pk
    results = []

    def submit():
        claim = Claim.objects.select_related("study", "item").get(pk=claim_id)
        submission, created, _ = submissions.submit(claim, worker, ANSWER)
        results.append((submission.pk, created))

    assert run_in_threads([submit] * 8) == []
    assert len(results) == 8 and len({pk for pk, _ in results}) == 1
    assert sorted(created for _, created in results) == [False] * 7 + [True]
    assert Submission.objects.count() == 1
    assert StudyItem.objects.get(claims__pk=claim_id).completed_count == 1
    assert StateChange.objects.of(Claim, claim_id).filter(to_state="submitted").count() == 1


def test_expiry_racing_submissions_never_loses_or_doubles_a_place(transactional_db, file_database):
    study = make_study("expiry-race", items=12, k=1, lease_seconds=60)
    workers = make_workers(12)
    claims = [assignment.claim_next(study, w) for w in workers]
    later = claims[0].lease_expires_at + (claims[0].lease_expires_at - claims[0].claimed_at)

    def submit(claim, worker):
        def run():
            try:
                submissions.submit(Claim.objects.select_related("study", "item").get(pk=claim.pk), worker, ANSWER)
            except CrowdError as exc:  # the lease ran out first: that is one of the two allowed outcomes
                assert exc.status == 409
        return run

    def expire():
        assignment.expire_leases(now=later)

    assert run_in_threads([submit(c, w) for c, w in zip(claims, workers, strict=True)] + [expire] * 2) == []
    for claim in Claim.objects.all():
        has_submission = Submission.objects.filter(claim=claim).exists()
        assert claim.status in (Claim.Status.SUBMITTED, Claim.Status.EXPIRED)
        assert has_submission == (claim.status == Claim.Status.SUBMITTED)
        item = claim.item
        assert (item.open_slots, item.completed_count) == ((0, 1) if has_submission else (1, 0))


def test_curators_deciding_the_same_submission_at_once_decide_it_once(transactional_db, file_database):
    study = make_study("review-race", items=1, k=1, expert_first=5, count_accepted_only=True)
    worker, *curators = make_workers(7, prefix="person")
    submission, _, _ = submissions.submit(assignment.claim_next(study, worker), worker, ANSWER)
    outcomes = []

    def decide(curator, approve):
        def run():
            fresh = Submission.objects.get(pk=submission.pk)
            try:
                if approve:
                    review.approve(fresh, curator)
                else:
                    review.reject(fresh, curator, reason="not a dog")
                outcomes.append("decided")
            except CrowdError as exc:
                assert exc.status == 409
                outcomes.append("409")
        return run

    assert run_in_threads([decide(c, n % 2 == 0) for n, c in enumerate(curators)]) == []
    assert sorted(outcomes) == ["409"] * 5 + ["decided"]
    item = StudyItem.objects.get()
    decided = Claim.objects.get().status
    # a rejection frees the place exactly once; an approval keeps it
    assert (item.open_slots, item.completed_count) == ((1, 0) if decided == Claim.Status.REJECTED else (0, 1))
    assert StateChange.objects.about(Submission).filter(from_state="pending").count() == 1
