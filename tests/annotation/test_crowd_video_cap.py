"""A study's per-worker, per-video cap (`Study.max_items_per_video`): held by the claim statement itself,
alone and under concurrent claims; its settings' checks, its copy and the statements a claim costs."""

import threading
from collections import Counter

import pytest
from django.db import connection
from django.db.models import Count
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation.crowd import assignment, study_copy, study_settings, submissions
from annotation.crowd.errors import CrowdError
from annotation.crowd.models import Claim, Study, StudyItem
from annotation.models import Video
from tests.annotation.test_crowd_concurrency import file_database, make_workers, run_in_threads  # noqa: F401 - a fixture
from tests.conftest import create_study, logged_in_api, logged_in_client
from tests.frontend.test_study_setup_pages import settings_post

FORM = {"fields": [{"name": "label", "type": "single_choice", "options": ["cat", "dog"]}]}
ANSWER = {"label": "dog"}
K, CAP, PER_VIDEO = 8, 12, 24


def videos(count: int) -> list[Video]:
    return [Video.objects.create(title=f"clip {n}", original_name=f"c{n}.mp4", size_bytes=1,
                                 checksum=f"{n:064d}", file=f"videos/c{n}.mp4") for n in range(count)]


def capped_study(slug: str, clips: list[Video], *, cap: int = CAP, per_video: int = PER_VIDEO) -> Study:
    rows = [{"external_id": f"{clip.pk}-{n}", "payload": {"n": n}, "video": clip}
            for clip in clips for n in range(per_video)]
    return create_study(slug, form=FORM, items=0, k=K, extra_rows=rows, lease_seconds=3600,
                        max_items_per_video=cap)


def work_through(study: Study, worker) -> list[StudyItem]:
    """Claim and submit until nothing is left for the worker; the items they got, in order."""
    got = []
    while (claim := assignment.claim_next(study, worker)) is not None:
        got.append(claim.item)
        submissions.submit(claim, worker, ANSWER)
    return got


def test_a_worker_gets_at_most_the_cap_of_one_video_then_another_video_then_nothing(db):
    first, second = videos(2)
    study = capped_study("capped", [first, second])
    worker, = make_workers(1)
    got = work_through(study, worker)
    assert [item.video_id for item in got] == [first.pk] * CAP + [second.pk] * CAP
    assert len({item.pk for item in got}) == 2 * CAP
    assert assignment.claim_next(study, worker) is None
    # the other workers still find the places this one could not take
    other, = make_workers(1, prefix="other")
    assert len(work_through(study, other)) == 2 * CAP


def test_returned_and_timed_out_claims_do_not_count_rejected_and_active_ones_do(db):
    clip, = videos(1)
    study = capped_study("capped-returns", [clip], cap=2, per_video=6)
    worker, = make_workers(1)
    assignment.release(assignment.claim_next(study, worker), worker)
    expired = assignment.claim_next(study, worker)
    Claim.objects.filter(pk=expired.pk).update(lease_expires_at="2000-01-01T00:00:00Z")
    assert assignment.expire_leases(study=study) == 1
    active = assignment.claim_next(study, worker)
    assert active.status == Claim.Status.ACTIVE
    submissions.submit(active, worker, ANSWER)
    Claim.objects.filter(pk=active.pk).update(status=Claim.Status.REJECTED)
    second = assignment.claim_next(study, worker)
    assert second is not None
    submissions.submit(second, worker, ANSWER)
    assert assignment.claim_next(study, worker) is None
    assert Counter(Claim.objects.filter(worker=worker).values_list("status", flat=True)) == Counter(
        {Claim.Status.RETURNED: 1, Claim.Status.EXPIRED: 1, Claim.Status.REJECTED: 1, Claim.Status.SUBMITTED: 1})


def test_items_without_a_video_and_studies_without_a_cap_are_not_capped(db):
    clip, = videos(1)
    study = capped_study("uncapped", [clip], cap=0, per_video=5)
    assignment.add_items(study, [{"external_id": f"plain-{n}", "payload": {"n": n}} for n in range(3)])
    worker, = make_workers(1)
    assert len(work_through(study, worker)) == 8
    capped = capped_study("capped-plain", [clip], cap=1, per_video=5)
    assignment.add_items(capped, [{"external_id": f"plain-{n}", "payload": {"n": n}} for n in range(3)])
    got = work_through(capped, worker)
    assert len(got) == 4 and sum(item.video_id == clip.pk for item in got) == 1


def test_the_cap_adds_no_statement_to_a_claim(db):
    clip, = videos(1)
    counts = {}
    for cap in (0, CAP):
        study = capped_study(f"statements-{cap}", [clip], cap=cap)
        worker, = make_workers(1, prefix=f"s{cap}-")
        assignment.claim_next(study, worker)  # content types and the like are read once per process
        submissions.submit(assignment.active_claim(study, worker), worker, ANSWER)
        with CaptureQueriesContext(connection) as queries:
            assert assignment.claim_next(study, worker) is not None
        counts[cap] = len(queries)
    assert counts[CAP] == counts[0]


def test_the_cap_is_a_checked_setting_and_is_copied(db, curator):
    assert study_settings.problems({"max_items_per_video": -1})["max_items_per_video"].startswith("must be a whole")
    assert "max_items_per_video" in study_settings.problems({"max_items_per_video": 1.5})
    assert "max_items_per_video" in study_settings.problems({"max_items_per_video": True})
    assert "max_items_per_video" not in study_settings.problems({"max_items_per_video": 12})
    with pytest.raises(CrowdError, match="max_items_per_video"):
        study_settings.check({"max_items_per_video": 10**6})
    clip, = videos(1)
    study = capped_study("to-copy", [clip])
    assert study_copy.duplicate(study, curator).max_items_per_video == CAP


def test_the_new_study_page_and_the_api_set_the_cap(db, curator):
    response = logged_in_client(curator).post(reverse("crowd-study-new"),
                                              settings_post(name="Capped", max_items_per_video="12"))
    assert response.status_code == 302
    assert Study.objects.get(slug="capped").max_items_per_video == 12
    assert logged_in_client(curator).post(reverse("crowd-study-new"), settings_post(name="Plain")).status_code == 302
    assert Study.objects.get(slug="plain").max_items_per_video == 0
    response = logged_in_client(curator).post(reverse("crowd-study-new"),
                                              settings_post(name="Bad", max_items_per_video="-3"))
    assert response.status_code == 400 and "max_items_per_video" in response.context["form"].errors
    api = logged_in_api(curator)
    response = api.patch("/api/studies/capped/", {"max_items_per_video": 4}, format="json")
    assert response.status_code == 200, response.content
    assert response.json()["max_items_per_video"] == 4
    response = api.patch("/api/studies/capped/", {"max_items_per_video": 10**5}, format="json")
    assert response.status_code == 400 and "max_items_per_video" in response.json()
    assert Study.objects.get(slug="capped").max_items_per_video == 4


# --- Under concurrent claims ----------------------------------------------------------------------

WORKERS, REQUESTS_PER_WORKER = 20, 3


def _claim_at_once():
    """Every worker sends several claim requests at once, again and again; between two rounds one of
    them hands the claim in (a worker's claim racing their own submit is another race, not the cap's)."""
    clips = videos(2)
    study = capped_study("capped-load", clips)
    workers = make_workers(WORKERS)
    lock = threading.Lock()
    submitted = Counter()

    def work(worker, index, rounds, got):
        def run():
            own = Study.objects.get(pk=study.pk)
            while True:
                got[index] = assignment.claim_next(own, worker)
                rounds.wait(timeout=60)
                claims = {claim.pk: claim for claim in got if claim is not None}
                assert len(claims) <= 1, claims  # the requests of one worker got the same claim
                if not claims:
                    return
                if index == 0:
                    _submission, created, _ = submissions.submit(next(iter(claims.values())), worker, ANSWER)
                    with lock:
                        submitted[worker.pk] += int(created)
                rounds.wait(timeout=60)
        return run

    targets = []
    for worker in workers:
        rounds, got = threading.Barrier(REQUESTS_PER_WORKER), [None] * REQUESTS_PER_WORKER
        targets += [work(worker, index, rounds, got) for index in range(REQUESTS_PER_WORKER)]
    assert run_in_threads(targets) == []
    per_worker_video = (Claim.objects.filter(study=study).exclude(status__in=[Claim.Status.RETURNED,
                                                                               Claim.Status.EXPIRED])
                        .values("worker", "item__video").annotate(n=Count("pk")))
    assert max(row["n"] for row in per_worker_video) <= CAP
    per_item = StudyItem.objects.filter(study=study).annotate(n=Count("claims")).values_list("n", flat=True)
    assert max(per_item) <= K
    # nothing was left that a worker could still have taken: a place left open is on an item every
    # worker either had or is capped on the video of
    held = Counter((row["worker"], row["item__video"]) for row in Claim.objects.filter(study=study)
                   .values("worker", "item__video"))
    had = set(Claim.objects.filter(study=study).values_list("worker", "item"))
    for item in StudyItem.objects.filter(study=study, open_slots__gt=0):
        assert all((w.pk, item.pk) in had or held[(w.pk, item.video_id)] == CAP for w in workers), item
    assert sum(submitted.values()) == Claim.objects.filter(study=study).count() >= 2 * PER_VIDEO * K - 8
    assert not Claim.objects.filter(status=Claim.Status.ACTIVE).exists()


@pytest.mark.postgres
def test_concurrent_claims_never_pass_the_video_cap_or_k_postgres(transactional_db):
    assert connection.vendor == "postgresql"
    _claim_at_once()


def test_concurrent_claims_never_pass_the_video_cap_or_k(transactional_db, file_database):  # noqa: F811
    if connection.vendor == "postgresql":
        pytest.skip("on PostgreSQL the postgres-marked variant runs this")
    _claim_at_once()
