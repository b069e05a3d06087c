"""Quality control: qualification tests, expert sampling and exclusion, gold items, attention checks.

A worker must never learn a check's expected answer: every API answer a worker gets while doing
gold items is searched for the secret answer and for the answer key.
"""

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.crowd import assignment, quality, review, submissions
from annotation.crowd.errors import CrowdError
from annotation.crowd.models import (
    Claim,
    Qualification,
    QualificationAttempt,
    QualificationTest,
    Study,
    StudyExclusion,
    StudyItem,
    Submission,
    WorkerQualification,
)
from config.models import StateChange
from config.roles import ANNOTATOR, CURATOR
from tests.conftest import create_study, logged_in_api, make_user

pytestmark = pytest.mark.django_db

FORM = {"fields": [
    {"name": "label", "type": "single_choice", "options": ["cat", "dog"]},
    {"name": "caption", "type": "free_text", "min_length": 1, "max_length": 200},
]}
ANSWER = {"label": "cat", "caption": "a cat on a sofa"}
SECRET = "okapi-under-a-lighthouse"
GOLD_KEY = {"fields": {"caption": {"answer": SECRET, "rule": "contains"}, "label": {"answer": "dog", "rule": "exact"}}}
ATTENTION_KEY = {"fields": {"label": {"answer": "dog", "rule": "exact"}}}


def make_study(slug: str = "quality", *, items: int = 10, k: int = 1, checks: int = 0,
               check_role: str = StudyItem.Role.GOLD, **fields) -> Study:
    key = GOLD_KEY if check_role == StudyItem.Role.GOLD else ATTENTION_KEY
    checks_rows = [{"external_id": f"check-{n}", "payload": {"url": f"https://x.test/c{n}.jpg"}, "role": check_role,
                    "answer_key": key} for n in range(checks)]
    return create_study(slug, form=FORM, items=items, k=k, name=slug.title(),
                        payload=lambda n: {"url": f"https://x.test/{n}.jpg"}, extra_rows=checks_rows, **fields)


@pytest.fixture
def worker(db):
    return make_user("wanda", ANNOTATOR)


@pytest.fixture
def curator_user(db):
    return make_user("carol", CURATOR)


def submit_next(study, worker, data=None) -> Submission:
    claim = assignment.claim_next(study, worker)
    assert claim is not None
    submission, created, _ = submissions.submit(claim, worker, data or ANSWER)
    assert created
    return submission


# --- Qualification tests ----------------------------------------------------------------------

QUESTIONS = [
    {"id": "q1", "prompt": "Which animal barks?", "choices": ["cat", "dog"], "answer": "dog"},
    {"id": "q2", "prompt": "Which colour is the sky on a clear day?", "choices": ["blue", "green"], "answer": "blue"},
]


@pytest.fixture
def qualification_test(db):
    qualification = Qualification.objects.create(name="pet-experts")
    return QualificationTest.objects.create(qualification=qualification, name="Pets 101", questions=QUESTIONS,
                                            pass_threshold=1.0, retry_delay_seconds=3600)


def test_the_questions_are_shown_without_their_answers(worker, qualification_test):
    response = logged_in_api(worker).get(f"/api/qualification-tests/{qualification_test.pk}/")
    assert response.status_code == 200
    assert [q["id"] for q in response.json()["questions"]] == ["q1", "q2"]
    assert all("answer" not in q for q in response.json()["questions"])


def test_passing_a_qualification_test_opens_the_studies_that_need_it(worker, qualification_test):
    study = make_study(required_qualification=qualification_test.qualification)
    client = logged_in_api(worker)
    refused = client.post(f"/api/studies/{study.slug}/claim/")
    assert refused.status_code == 403 and "pet-experts" in refused.json()["error"]
    response = client.post(f"/api/qualification-tests/{qualification_test.pk}/attempt/",
                           {"answers": {"q1": "Dog", "q2": " blue "}}, format="json")
    assert response.status_code == 201
    assert response.json() == {"score": 1.0, "passed": True, "qualification": "pet-experts"}
    granted = WorkerQualification.objects.get(profile__user=worker)
    assert granted.qualification == qualification_test.qualification
    assert granted.source == f"test:{qualification_test.pk}"
    assert client.post(f"/api/studies/{study.slug}/claim/").status_code == 201
    # passing once is enough
    again = client.post(f"/api/qualification-tests/{qualification_test.pk}/attempt/",
                        {"answers": {"q1": "dog", "q2": "blue"}}, format="json")
    assert again.status_code == 409


def test_failing_grants_nothing_and_a_retry_waits_for_the_delay(worker, qualification_test):
    study = make_study(required_qualification=qualification_test.qualification)
    client = logged_in_api(worker)
    url = f"/api/qualification-tests/{qualification_test.pk}/attempt/"
    failed = client.post(url, {"answers": {"q1": "dog", "q2": "green"}}, format="json")
    assert failed.status_code == 201
    assert failed.json() == {"score": 0.5, "passed": False, "qualification": None}
    assert not WorkerQualification.objects.exists()
    assert client.post(f"/api/studies/{study.slug}/claim/").status_code == 403
    too_soon = client.post(url, {"answers": {"q1": "dog", "q2": "blue"}}, format="json")
    assert too_soon.status_code == 429
    assert too_soon.json() == {"error": "You can try again in 60 minutes."}
    assert QualificationAttempt.objects.count() == 1 and not WorkerQualification.objects.exists()
    # an hour later the worker may try again
    QualificationAttempt.objects.update(created_at=timezone.now() - timedelta(seconds=3601))
    retry = client.post(url, {"answers": {"q1": "dog", "q2": "blue"}}, format="json")
    assert retry.status_code == 201 and retry.json()["passed"] is True
    assert client.post(f"/api/studies/{study.slug}/claim/").status_code == 201
    assert list(StateChange.objects.about(QualificationAttempt).values_list("to_state", flat=True)) == [
        "failed", "passed"]


def test_the_retry_delay_in_the_service(worker, qualification_test):
    first = quality.take_qualification_test(qualification_test, worker, {"q1": "cat", "q2": "blue"})
    assert not first.passed
    with pytest.raises(CrowdError) as refused:
        quality.take_qualification_test(qualification_test, worker, {"q1": "dog", "q2": "blue"},
                                        now=first.created_at + timedelta(seconds=3599))
    assert refused.value.status == 429
    later = quality.take_qualification_test(qualification_test, worker, {"q1": "dog", "q2": "blue"},
                                            now=first.created_at + timedelta(seconds=3600))
    assert later.passed


# --- Expert sampling and exclusion ------------------------------------------------------------

def test_each_workers_first_submissions_go_to_the_expert_queue_then_a_share(worker, curator_user):
    study = make_study(items=20, expert_first=2, expert_share=0.25)
    other = make_user("otto", ANNOTATOR)
    states = [submit_next(study, worker).review_state for _ in range(10)]
    pending, skipped = Submission.Review.PENDING, Submission.Review.NOT_SAMPLED
    # 1st, 2nd always; then the 4th and the 8th (a quarter of the submissions so far)
    assert states == [pending, pending, skipped, pending, skipped, skipped, skipped, pending, skipped, skipped]
    # another worker's first submissions are reviewed too, whatever the first worker did
    assert [submit_next(study, other).review_state for _ in range(2)] == [pending, pending]
    queued = review.queue(study, "expert_sample")
    assert queued.count() == 6 and {s.review_queue for s in queued} == {"expert_sample"}


def test_the_expert_share_is_kept_over_many_submissions(worker):
    study = make_study(items=100, expert_first=0, expert_share=0.1)
    for _ in range(100):
        submit_next(study, worker)
    assert Submission.objects.filter(review_state=Submission.Review.PENDING).count() == 10


def test_a_worker_the_experts_reject_is_excluded_and_a_good_one_goes_on(curator_user):
    study = make_study(items=12, k=2, expert_first=3, min_reviews_for_exclusion=3, min_accept_rate=0.7)
    bad, good = make_user("bad", ANNOTATOR), make_user("good", ANNOTATOR)
    bad_work = [submit_next(study, bad) for _ in range(3)]
    good_work = [submit_next(study, good) for _ in range(3)]
    open_claim = assignment.claim_next(study, bad)
    curator = logged_in_api(curator_user)

    for number, submission in enumerate(bad_work, start=1):
        response = curator.post(f"/api/submissions/{submission.pk}/review/",
                                {"action": "reject", "reason": "random clicking"}, format="json")
        assert response.status_code == 200
        assert StudyExclusion.objects.filter(study=study, worker=bad).exists() == (number == 3)
    for submission in good_work:
        curator.post(f"/api/submissions/{submission.pk}/review/", {"action": "approve"}, format="json")

    exclusion = StudyExclusion.objects.get(study=study, worker=bad)
    assert exclusion.reason == "expert-accepted rate 0/3 below 70%"
    open_claim.refresh_from_db()
    assert open_claim.status == Claim.Status.RETURNED  # the excluded worker's open item goes back to the pool
    assert open_claim.item.open_slots == 2
    refused = logged_in_api(bad).post(f"/api/studies/{study.slug}/claim/")
    assert refused.status_code == 403 and "no longer part of this study" in refused.json()["error"]
    late = logged_in_api(bad).post(f"/api/claims/{open_claim.pk}/submit/", {"data": ANSWER}, format="json")
    assert late.status_code == 409
    # the good worker keeps working
    assert not StudyExclusion.objects.filter(worker=good).exists()
    assert logged_in_api(good).post(f"/api/studies/{study.slug}/claim/").status_code == 201
    assert StateChange.objects.of(type(bad), bad.pk).filter(to_state="excluded").count() == 1


def test_no_exclusion_before_enough_reviews_or_above_the_threshold(worker, curator_user):
    study = make_study(items=12, expert_first=4, min_reviews_for_exclusion=3, min_accept_rate=0.7)
    work = [submit_next(study, worker) for _ in range(4)]
    review.reject(work[0], curator_user, reason="wrong")
    review.reject(work[1], curator_user, reason="wrong")
    assert not StudyExclusion.objects.exists()  # two reviews are not enough to judge
    review.approve(work[2], curator_user)
    assert StudyExclusion.objects.exists()  # 1/3 accepted is below 70%
    study2 = make_study("lenient", items=12, expert_first=4, min_reviews_for_exclusion=3, min_accept_rate=0.7)
    work = [submit_next(study2, worker) for _ in range(4)]
    for submission in work[:3]:
        review.approve(submission, curator_user)
    review.reject(work[3], curator_user, reason="wrong")
    assert not StudyExclusion.objects.filter(study=study2).exists()  # 3/4 = 75% stays


# --- Gold items -------------------------------------------------------------------------------

def test_gold_items_are_mixed_in_at_the_gold_share(worker):
    study = make_study(items=12, checks=3, gold_share=0.25)
    roles = [submit_next(study, worker).claim.item.role for _ in range(12)]
    assert [n for n, role in enumerate(roles, start=1) if role == StudyItem.Role.GOLD] == [4, 8, 12]
    # every worker sees the gold items: they take no place from anyone
    other = make_user("otto", ANNOTATOR)
    other_roles = [submit_next(study, other).claim.item.role for _ in range(4)]
    assert other_roles.count(StudyItem.Role.GOLD) == 1


def _leaks(response) -> list[str]:
    text = response.content.decode()
    return [needle for needle in (SECRET, "answer_key", "okapi", '"rule"', json.dumps(GOLD_KEY)) if needle in text]


def test_gold_feedback_never_reveals_the_answer(worker):
    study = make_study(items=6, checks=1, gold_share=0.25)
    client = logged_in_api(worker)
    seen = []
    for _ in range(3):
        claim = client.post(f"/api/studies/{study.slug}/claim/")
        seen.append(claim)
        seen.append(client.post(f"/api/claims/{claim.json()['id']}/submit/", {"data": ANSWER}, format="json"))
    gold_claim = client.post(f"/api/studies/{study.slug}/claim/")
    assert gold_claim.status_code == 201
    claim_id = gold_claim.json()["id"]
    assert Claim.objects.get(pk=claim_id).item.role == StudyItem.Role.GOLD
    assert set(gold_claim.json()["item"]) == {"external_id", "payload"}  # no role, no key
    seen += [
        gold_claim,
        client.post(f"/api/studies/{study.slug}/claim/"),  # the current claim again
        client.get(f"/api/claims/{claim_id}/"),
        client.get("/api/claims/"),
        client.put(f"/api/claims/{claim_id}/draft/", {"data": {"caption": "first try"}}, format="json"),
    ]
    failed = client.post(f"/api/claims/{claim_id}/submit/", {"data": {"label": "cat", "caption": "a zebra"}},
                         format="json")
    assert failed.status_code == 201
    assert failed.json()["feedback"] == {"message": quality.GOLD_FAILED_FEEDBACK}
    seen += [failed, client.post(f"/api/claims/{claim_id}/submit/", {"data": ANSWER}, format="json"),
             client.get(f"/api/claims/{claim_id}/"), client.get("/api/claims/"),
             client.post(f"/api/studies/{study.slug}/claim/")]
    assert [_leaks(r) for r in seen] == [[] for _ in seen]
    assert all(r.status_code < 400 for r in seen)
    submission = Submission.objects.get(claim_id=claim_id)
    assert (submission.check_passed, submission.review_queue) == (False, "gold")
    # and the worker cannot read the review side, where the key's results are
    assert client.get(f"/api/submissions/{submission.pk}/").status_code == 403


def test_a_passed_gold_item_gives_no_feedback(worker):
    study = make_study(items=0, checks=1, gold_share=1.0)
    claim = assignment.claim_next(study, worker)
    assert claim.item.role == StudyItem.Role.GOLD
    submission, _, feedback = submissions.submit(claim, worker, {"label": "dog", "caption": f"An {SECRET.upper()}!"})
    assert feedback == {} and submission.check_passed is True


# --- Attention checks -------------------------------------------------------------------------

def test_a_missed_attention_check_warns_and_the_second_one_excludes(worker):
    study = make_study(items=6, checks=3, check_role=StudyItem.Role.ATTENTION, gold_share=0.5,
                       attention_warn_after=1, attention_block_after=2)
    client = logged_in_api(worker)

    def work(data):
        claim = client.post(f"/api/studies/{study.slug}/claim/").json()
        role = Claim.objects.get(pk=claim["id"]).item.role
        response = client.post(f"/api/claims/{claim['id']}/submit/", {"data": data}, format="json")
        assert response.status_code == 201 and "dog" not in json.dumps(response.json()["feedback"])
        return role, response.json()["feedback"]

    assert work(ANSWER) == (StudyItem.Role.REGULAR, {})
    assert work(ANSWER) == (StudyItem.Role.ATTENTION, {"message": quality.GOLD_FAILED_FEEDBACK,
                                                       "warning": quality.ATTENTION_WARNING})
    assert not StudyExclusion.objects.exists()
    assert work(ANSWER) == (StudyItem.Role.REGULAR, {})
    assert work({"label": "dog", "caption": "paying attention"}) == (StudyItem.Role.ATTENTION, {})
    assert work(ANSWER) == (StudyItem.Role.REGULAR, {})
    assert work(ANSWER) == (StudyItem.Role.ATTENTION, {"message": quality.GOLD_FAILED_FEEDBACK, "blocked": True})
    assert StudyExclusion.objects.get(worker=worker).reason == "failed 2 attention checks"
    refused = client.post(f"/api/studies/{study.slug}/claim/")
    assert refused.status_code == 403


@pytest.mark.parametrize("rule,expected,value,ok", [
    ({"rule": "exact"}, "Dog", " dog ", True),
    ({"rule": "exact"}, "dog", "dogs", False),
    ({"rule": "one_of"}, ["dog", "puppy"], "Puppy", True),
    ({"rule": "set_equal"}, ["a", "b"], ["b", "a"], True),
    ({"rule": "set_equal"}, ["a", "b"], ["a"], False),
    ({"rule": "within", "tolerance": 0.5}, 3, "3.4", True),
    ({"rule": "within", "tolerance": 0.5}, 3, "x", False),
    ({"rule": "contains"}, "okapi", "An OKAPI here", True),
    ({"rule": "mapping"}, {"s1": "yes", "s2": "no"}, {"s1": "yes", "s2": "no"}, True),
    ({"rule": "mapping"}, {"s1": "yes", "s2": "no"}, {"s1": "yes", "s2": "yes"}, False),
])
def test_answer_key_rules(rule, expected, value, ok):
    key = {"fields": {"f": {**rule, "answer": expected}}}
    assert quality.passes_key(key, {"f": value}) is ok


def test_an_empty_answer_key_never_passes():
    assert quality.passes_key({}, {"f": "x"}) is False
