"""A worker's claim running at the same moment as that same worker's submit (PostgreSQL).

A claim's first statement takes a place of an item after reading the worker's claims (the items
they had, their claims per video); its second statement inserts the claim. A second request of the
same worker can claim an item and hand it in between the two: the first claim must then neither pass
the per-video cap, nor hold a place while it waits for that submit (a deadlock, a 500).

On SQLite a claim's transaction holds the database's write lock from its first statement, so the
interleaving below cannot happen there; these tests need PostgreSQL (DATABASE_URL, see
tests/annotation/test_crowd_concurrency.py).
"""

import random
import threading
import time
from collections import Counter

import pytest
from django.db import OperationalError, connection
from django.db.models import Count, Q
from rest_framework.test import APIClient

from annotation.crowd import assignment, submissions
from annotation.crowd.errors import CrowdError
from annotation.crowd.models import Claim, Study, StudyItem
from annotation.models import Video
from config.roles import ANNOTATOR
from tests.annotation.test_crowd_concurrency import make_workers, run_in_threads
from tests.annotation.test_crowd_video_cap import ANSWER, FORM, capped_study, videos
from tests.conftest import create_study, make_user

pytestmark = pytest.mark.postgres

HAMMER_SECONDS = 12
OTHER_WORKERS, THREADS_OF_THE_WORKER, CAP, PER_VIDEO = 4, 4, 4, 6


def per_worker_video(study: Study) -> Counter:
    return Counter({(row["worker"], row["item__video"]): row["n"] for row in Claim.objects.filter(
        study=study, status__in=Claim.COUNTS_FOR_VIDEO_CAP).values("worker", "item__video").annotate(n=Count("pk"))})


def over_k(study: Study) -> list:
    return list(StudyItem.objects.filter(study=study).annotate(
        n=Count("claims", filter=Q(claims__status__in=Claim.HOLDS_SLOT))).filter(n__gt=study.annotators_per_item)
        .values_list("pk", "n"))


def test_a_claim_overtaken_by_a_claim_and_submit_of_the_same_worker_keeps_the_video_cap(transactional_db, monkeypatch):
    """The worker's first request is taking a place of an item while their second request records its
    claim on another item of the same video; that claim is then handed in while the first request
    records its own. The first must not make a second claim on a video capped at one, nor wait for the
    submit: it gives its place back and answers with the worker's claim or with no item."""
    assert connection.vendor == "postgresql"
    clip, = videos(1)
    study = capped_study("overtaken", [clip], cap=1, per_video=4)
    worker, = make_workers(1)
    taken = {"first": threading.Event(), "second": threading.Event()}
    go_on = {"first": threading.Event(), "second": threading.Event()}
    record = assignment._record_claim

    def slow_record(*args):
        name = threading.current_thread().name
        if name in taken:
            taken[name].set()
            assert go_on[name].wait(30)
        return record(*args)

    monkeypatch.setattr(assignment, "_record_claim", slow_record)
    got = {}

    def request(name):
        def run():
            threading.current_thread().name = name
            got[name] = assignment.claim_next(Study.objects.get(pk=study.pk), worker)
        return run

    second = in_background(request("second"))
    assert taken["second"].wait(30)
    first = in_background(request("first"))
    waiting_on_the_worker_lock(1)  # the first request's statement has begun while the second holds the lock
    go_on["second"].set()
    second[0].join(30)
    assert second[1] == [] and got["second"] is not None
    assert taken["first"].wait(30)
    # the submit of the second claim; it may wait for the first request when that took a place of the
    # same item, having read the worker's claims before the second claim was made
    handed_in = []
    submit = in_background(lambda: handed_in.append(submissions.submit(
        Claim.objects.select_related("study", "item").get(pk=got["second"].pk), worker, ANSWER)[1]))
    submit[0].join(0.5)
    go_on["first"].set()
    for thread, errors in (first, submit):
        thread.join(30)
        assert not thread.is_alive() and errors == []
    assert handed_in == [True]
    # the worker's current claim when it was not yet handed in, else nothing: the video is at its cap
    assert got["first"] is None or got["first"].pk == got["second"].pk
    assert per_worker_video(study) == Counter({(worker.pk, clip.pk): 1})
    assert sum(StudyItem.objects.filter(study=study).values_list("open_slots", flat=True)) == 4 * 8 - 1


def waiting_on_the_worker_lock(count: int) -> None:
    """Wait (a second at most) until `count` statements wait for a worker's lock."""
    for _attempt in range(100):
        with connection.cursor() as cursor:
            cursor.execute("SELECT COUNT(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted")
            if cursor.fetchone()[0] >= count:
                return
        time.sleep(0.01)


def in_background(target) -> tuple[threading.Thread, list]:
    """Run `target` on its own thread and database connection; its errors land in the list."""
    errors: list = []
    thread = threading.Thread(target=lambda: errors.extend(run_in_threads([target], timeout=60)), daemon=True)
    thread.start()
    return thread, errors


def test_stale_claims_never_wait_for_submits_of_their_worker_so_two_workers_cannot_deadlock(
        transactional_db, monkeypatch):
    """Two workers each hand in their claim while a second request of theirs, which read no current
    claim before that claim was made, claims again. Each of those claims takes a place of the other
    worker's item; if it then waited for its own worker's submit, which waits for that very item, the
    four transactions would wait in a circle (a deadlock: an error, a 500). They answer with the
    worker's current claim instead, at once, and both submits go through."""
    assert connection.vendor == "postgresql"
    study = create_study("circle", form=FORM, items=2, k=2, lease_seconds=3600)
    first, second = make_workers(2)
    mine = {first.pk: assignment.claim_next(study, first)}
    StudyItem.objects.filter(pk=mine[first.pk].item_id).update(completed_count=5)  # the other item is next
    mine[second.pk] = assignment.claim_next(study, second)
    assert mine[first.pk].item_id != mine[second.pk].item_id
    paused, go_on = {w: threading.Event() for w in mine}, threading.Event()
    insert = submissions._insert_submission
    monkeypatch.setattr(assignment, "_current_claim", lambda *args: None)  # read before the claim was made

    def submit_pausing_after_the_claim_ended(submission, active_seconds):
        worker = submission.claim.worker_id
        paused[worker].set()
        assert go_on.wait(30)
        return insert(submission, active_seconds)

    monkeypatch.setattr(submissions, "_insert_submission", submit_pausing_after_the_claim_ended)
    got, started, waiting = {}, [], []
    for worker in (first, second):
        claim = mine[worker.pk]
        started.append(in_background(lambda c=claim, w=worker: submissions.submit(
            Claim.objects.select_related("study", "item").get(pk=c.pk), w, ANSWER)))
        assert paused[worker.pk].wait(30)
        stale = in_background(lambda w=worker: got.__setitem__(w.pk, assignment.claim_next(
            Study.objects.get(pk=study.pk), w)))
        stale[0].join(3)
        waiting.append(stale[0].is_alive())  # waiting for its worker's submit, holding a place
        started.append(stale)
    go_on.set()
    for thread, _errors in started:
        thread.join(60)
        assert not thread.is_alive()
    assert [errors for _thread, errors in started] == [[]] * 4  # no DeadlockDetected
    assert waiting == [False, False]
    assert {pk: claim.pk for pk, claim in got.items()} == {pk: claim.pk for pk, claim in mine.items()}
    assert set(Claim.objects.values_list("status", flat=True)) == {Claim.Status.SUBMITTED}
    assert dict(StudyItem.objects.values_list("pk", "completed_count")) == {
        mine[first.pk].item_id: 6, mine[second.pk].item_id: 1}
    assert set(StudyItem.objects.values_list("open_slots", flat=True)) == {1}


def test_claims_and_submits_of_one_worker_racing_each_other_and_other_workers(transactional_db):
    """Several requests of one worker claim and submit at once (one through the API), beside other
    workers, on studies with k > 1 and a per-video cap, study after study for a bounded time: no 500
    (deadlock), no claim past the cap or k."""
    assert connection.vendor == "postgresql"
    worker = make_user("racer", ANNOTATOR)
    others = make_workers(OTHER_WORKERS, prefix="other")
    lock = threading.Lock()
    seen, messages = Counter(), []
    deadline = time.monotonic() + HAMMER_SECONDS

    def note(what):
        with lock:
            seen[what] += 1

    def work(study, person, seed, api=False):
        def run():
            rng = random.Random(seed)
            own = Study.objects.get(pk=study.pk)
            client = None
            if api:
                client = APIClient()
                client.force_authenticate(person)
            while time.monotonic() < deadline + 30:
                try:
                    if client is not None:
                        response = client.post(f"/api/studies/{study.slug}/claim/")
                        assert response.status_code in (200, 201), response.content
                        claim_id = response.json().get("id")
                        claim = Claim.objects.select_related("study", "item").get(pk=claim_id) if claim_id else None
                    else:
                        claim = assignment.claim_next(own, person)
                    note("claims")
                    if claim is None:
                        if not Claim.objects.filter(study=study, status=Claim.Status.ACTIVE).exists():
                            return
                        time.sleep(0.005)
                        continue
                    if rng.random() < 0.3:
                        time.sleep(rng.random() * 0.002)
                    submissions.submit(claim, person, ANSWER)
                    note("submits")
                except CrowdError as exc:  # another request of the worker handed the claim in first
                    assert exc.status == 409, exc
                    note("409")
                except OperationalError as exc:  # DeadlockDetected, SerializationFailure: a 500
                    note(type(exc.__cause__ or exc).__name__)
                    with lock:
                        messages.append(str(exc))
        return run

    studies = []
    while time.monotonic() < deadline:
        clips = videos(3) if not studies else list(Video.objects.all())
        rows = [{"external_id": f"{clip.pk}-{n}", "payload": {"n": n}, "video": clip} for clip in clips
                for n in range(PER_VIDEO)]
        study = create_study(f"hammer-{len(studies)}", form=FORM, items=0, k=3, extra_rows=rows,
                             lease_seconds=3600, max_items_per_video=CAP)
        studies.append(study)
        targets = [work(study, worker, n, api=n == 0) for n in range(THREADS_OF_THE_WORKER)]
        targets += [work(study, other, 100 + n) for n, other in enumerate(others)]
        assert run_in_threads(targets, timeout=HAMMER_SECONDS + 60) == []
    print(f"\n{len(studies)} studies: {dict(seen)}")
    failures = {name: n for name, n in seen.items() if name not in ("claims", "submits", "409")}
    assert failures == {}, messages[:3]
    for study in studies:
        assert max(per_worker_video(study).values()) <= CAP
        assert over_k(study) == []
    assert seen["submits"] >= 300
