"""The worker's and the curator's REST API of the crowd engine: drafts, submissions, reviews.

Every refusal is checked twice: the HTTP answer (status and message), and that nothing was
written (no submission, the claim still where it was, no history entry).
"""

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.crowd import assignment, submissions
from annotation.crowd.errors import ClaimNotActive
from annotation.crowd.models import Claim, Draft, Study, StudyItem, Submission
from config.models import StateChange
from config.roles import ANNOTATOR, CURATOR, RESEARCHER
from tests.conftest import create_study, logged_in_api, make_user

pytestmark = pytest.mark.django_db

FORM = {"fields": [
    {"name": "label", "type": "single_choice", "options": ["cat", "dog"], "explanation": "optional"},
    {"name": "quality", "type": "likert", "min": 1, "max": 5},
    {"name": "note", "type": "free_text", "min_length": 0, "max_length": 50},
]}
GOOD = {"label": "cat", "quality": 4, "note": "clear picture"}
CLEAN = {"label": "cat", "label_explanation": "", "quality": 4, "note": "clear picture"}


def make_study(slug: str = "pets", *, items: int = 3, k: int = 1, state: str = Study.State.OPEN, **fields) -> Study:
    return create_study(slug, form=FORM, items=items, k=k, state=state, name=slug.title(),
                        payload=lambda n: {"url": f"https://x.test/{n}.jpg"}, **fields)


@pytest.fixture
def alice(db):
    return make_user("alice", ANNOTATOR)


@pytest.fixture
def bob(db):
    return make_user("bob", ANNOTATOR)


@pytest.fixture
def alice_api(alice):
    return logged_in_api(alice)


@pytest.fixture
def bob_api(bob):
    return logged_in_api(bob)


@pytest.fixture
def curator_user(db):
    return make_user("carol", CURATOR)


@pytest.fixture
def curator_http(curator_user):
    return logged_in_api(curator_user)


def claim_via_api(client, study) -> dict:
    response = client.post(f"/api/studies/{study.slug}/claim/")
    assert response.status_code in (200, 201), response.content
    return response.json()


def snapshot(claim_id: int) -> tuple:
    """What a refused request must leave as it was."""
    claim = Claim.objects.get(pk=claim_id)
    return (claim.status, claim.finished_at, Submission.objects.count(), StateChange.objects.count(),
            list(StudyItem.objects.order_by("pk").values_list("open_slots", "completed_count")),
            list(Draft.objects.order_by("pk").values_list("data", "revision")))


# --- Drafts -----------------------------------------------------------------------------------

def test_a_draft_is_saved_and_restored(alice_api):
    study = make_study()
    claim = claim_via_api(alice_api, study)
    assert claim["draft"] is None
    first = alice_api.put(f"/api/claims/{claim['id']}/draft/", {"data": {"label": "dog"}, "active_seconds": 5},
                          format="json")
    assert first.status_code == 200 and first.json()["revision"] == 1
    # a draft may be incomplete; a later save wins
    second = alice_api.put(f"/api/claims/{claim['id']}/draft/", {"data": {"label": "cat", "note": "half"}},
                           format="json")
    assert second.json()["revision"] == 2
    restored = alice_api.get(f"/api/claims/{claim['id']}/")
    assert restored.status_code == 200
    assert restored.json()["draft"]["data"] == {"label": "cat", "note": "half"}
    # coming back to the study (a reload) gives the same claim with its draft
    again = alice_api.post(f"/api/studies/{study.slug}/claim/")
    assert again.status_code == 200 and again.json()["id"] == claim["id"]
    assert again.json()["draft"]["revision"] == 2
    assert Draft.objects.get().active_seconds == 5


def test_a_draft_must_be_an_object(alice_api):
    study = make_study()
    claim = claim_via_api(alice_api, study)
    response = alice_api.put(f"/api/claims/{claim['id']}/draft/", {"data": ["cat"]}, format="json")
    assert response.status_code == 400 and response.json()["error"] == "A draft must be a JSON object."
    assert not Draft.objects.exists()


def test_a_draft_on_someone_elses_claim_is_refused(alice_api, bob_api):
    study = make_study()
    claim = claim_via_api(alice_api, study)
    before = snapshot(claim["id"])
    response = bob_api.put(f"/api/claims/{claim['id']}/draft/", {"data": {"label": "dog"}}, format="json")
    assert response.status_code == 404 and response.json()["error"] == "No such claim."
    assert snapshot(claim["id"]) == before and not Draft.objects.exists()
    # other workers' claims do not even exist for them
    assert bob_api.get(f"/api/claims/{claim['id']}/").status_code == 404
    assert [c["id"] for c in bob_api.get("/api/claims/").json()["results"]] == []


CLAIM_ACTIONS = [  # (method, path after /api/claims/<id>/): every action of a worker's claim
    ("put", "draft/"), ("post", "draft/"), ("post", "submit/"), ("post", "release/"), ("get", "stage/"),
    ("put", "steps/forecaster/draft/"), ("post", "steps/forecaster/draft/"), ("post", "steps/forecaster/submit/"),
]


@pytest.mark.parametrize(("method", "ending"), CLAIM_ACTIONS)
def test_every_action_on_someone_elses_claim_is_404_like_the_claim_itself(alice_api, bob_api, method, ending):
    """Another worker's claim does not exist for a worker: each action answers exactly as GET on it."""
    study = make_study()
    claim = claim_via_api(alice_api, study)
    before = snapshot(claim["id"])
    shown = bob_api.get(f"/api/claims/{claim['id']}/")
    body = None if method == "get" else {"data": GOOD}  # a GET's data would be query parameters it does not take
    response = getattr(bob_api, method)(f"/api/claims/{claim['id']}/{ending}", body, format="json")
    assert shown.status_code == response.status_code == 404
    assert response.json() == {"error": "No such claim."}
    assert snapshot(claim["id"]) == before
    # the same action on a claim id nobody has answers the same
    missing = getattr(bob_api, method)(f"/api/claims/{claim['id'] + 1000}/{ending}", body, format="json")
    assert (missing.status_code, missing.json()) == (404, {"error": "No such claim."})


@pytest.mark.parametrize("ending", ["submit", "release"])
def test_a_draft_after_the_claim_ended_is_refused_with_409(alice_api, ending):
    study = make_study()
    claim = claim_via_api(alice_api, study)
    body = {"data": GOOD} if ending == "submit" else {}
    assert alice_api.post(f"/api/claims/{claim['id']}/{ending}/", body, format="json").status_code in (200, 201)
    before = snapshot(claim["id"])
    response = alice_api.put(f"/api/claims/{claim['id']}/draft/", {"data": {"label": "dog"}}, format="json")
    assert response.status_code == 409
    assert "can no longer change" in response.json()["error"]
    assert snapshot(claim["id"]) == before


# --- Submitting -------------------------------------------------------------------------------

def test_submitting_twice_returns_the_first_submission(alice_api):
    study = make_study()
    claim = claim_via_api(alice_api, study)
    first = alice_api.post(f"/api/claims/{claim['id']}/submit/", {"data": GOOD}, format="json")
    assert first.status_code == 201 and first.json()["created"] is True
    history_after_first = StateChange.objects.count()
    second = alice_api.post(f"/api/claims/{claim['id']}/submit/", {"data": {**GOOD, "label": "dog"}}, format="json")
    assert second.status_code == 200
    assert second.json() == {"submission": first.json()["submission"], "created": False, "feedback": {}}
    submission = Submission.objects.get()
    assert submission.data == CLEAN  # the repeat changed nothing
    assert submission.claim.status == Claim.Status.SUBMITTED
    assert StudyItem.objects.get(external_id=claim["item"]["external_id"]).completed_count == 1
    assert StateChange.objects.count() == history_after_first


def test_submitting_twice_through_the_service_says_created_false():
    worker = make_user("dora", ANNOTATOR)
    study = make_study()
    claim = assignment.claim_next(study, worker)
    first, created, _ = submissions.submit(claim, worker, GOOD)
    again, created_again, feedback = submissions.submit(claim, worker, GOOD)
    assert (created, created_again, again.pk, feedback) == (True, False, first.pk, {})
    assert Submission.objects.count() == 1


def test_malformed_answers_get_400_per_field_and_nothing_is_written(alice_api):
    study = make_study()
    claim = claim_via_api(alice_api, study)
    alice_api.put(f"/api/claims/{claim['id']}/draft/", {"data": {"label": "horse"}}, format="json")
    before = snapshot(claim["id"])
    response = alice_api.post(f"/api/claims/{claim['id']}/submit/",
                              {"data": {"label": "horse", "quality": 9, "note": "x" * 51, "colour": "red"}},
                              format="json")
    assert response.status_code == 400
    assert response.json() == {"error": "Some answers are missing or invalid.", "details": {
        "label": "choose one of the options", "quality": "pick a value from 1 to 5",
        "note": "write at most 50 characters", "colour": "unknown field"}}
    missing = alice_api.post(f"/api/claims/{claim['id']}/submit/", {"data": {"note": "only a note"}}, format="json")
    assert missing.status_code == 400
    assert set(missing.json()["details"]) == {"label", "quality"}
    assert snapshot(claim["id"]) == before
    assert Claim.objects.get(pk=claim["id"]).status == Claim.Status.ACTIVE
    # the worker fixes the answers and submits
    fixed = alice_api.post(f"/api/claims/{claim['id']}/submit/", {"data": GOOD}, format="json")
    assert fixed.status_code == 201


@pytest.mark.parametrize("body", [{"data": ["cat"]}, {"data": "cat"}, {"answers": GOOD}, {}])
def test_a_submission_that_is_not_an_object_of_answers_gets_400(alice_api, body):
    study = make_study()
    claim = claim_via_api(alice_api, study)
    before = snapshot(claim["id"])
    response = alice_api.post(f"/api/claims/{claim['id']}/submit/", body, format="json")
    assert response.status_code == 400 and response.json()["error"]
    assert snapshot(claim["id"]) == before


@pytest.mark.parametrize("verb,method", [("submit", "post"), ("draft", "put"), ("release", "post")])
def test_an_unknown_claim_is_404(alice_api, verb, method):
    make_study()
    response = getattr(alice_api, method)(f"/api/claims/987654/{verb}/", {"data": GOOD}, format="json")
    assert response.status_code == 404 and response.json() == {"error": "No such claim."}
    assert not Submission.objects.exists() and not StateChange.objects.exists()


def test_submitting_without_a_claim_is_404(alice_api, bob_api):
    """A worker who never claimed (or whose claim id is stale after a reset) cannot submit."""
    study = make_study()
    bobs = claim_via_api(bob_api, study)
    assignment.release(Claim.objects.get(pk=bobs["id"]), Claim.objects.get(pk=bobs["id"]).worker)
    response = alice_api.post(f"/api/claims/{bobs['id'] + 1000}/submit/", {"data": GOOD}, format="json")
    assert response.status_code == 404
    assert not Submission.objects.exists()


def test_submitting_to_someone_elses_claim_is_404_and_writes_nothing(alice_api, bob_api):
    study = make_study()
    claim = claim_via_api(alice_api, study)
    before = snapshot(claim["id"])
    response = bob_api.post(f"/api/claims/{claim['id']}/submit/", {"data": GOOD}, format="json")
    assert response.status_code == 404 and response.json() == {"error": "No such claim."}
    assert snapshot(claim["id"]) == before
    assert alice_api.post(f"/api/claims/{claim['id']}/submit/", {"data": GOOD}, format="json").status_code == 201


def test_submitting_a_returned_or_expired_claim_is_409(alice_api):
    study = make_study(items=2, lease_seconds=600)
    returned = claim_via_api(alice_api, study)
    alice_api.post(f"/api/claims/{returned['id']}/release/")
    response = alice_api.post(f"/api/claims/{returned['id']}/submit/", {"data": GOOD}, format="json")
    assert response.status_code == 409 and "returned" in response.json()["error"]
    expired = claim_via_api(alice_api, study)
    assignment.expire_leases(now=timezone.now() + timedelta(seconds=601))
    response = alice_api.post(f"/api/claims/{expired['id']}/submit/", {"data": GOOD}, format="json")
    assert response.status_code == 409 and "timed out" in response.json()["error"]
    assert not Submission.objects.exists()


def test_claiming_on_a_closed_study_is_409(alice_api):
    study = make_study(state=Study.State.CLOSED)
    response = alice_api.post(f"/api/studies/{study.slug}/claim/")
    assert response.status_code == 409 and response.json() == {"error": "The study 'Pets' is closed."}
    assert not Claim.objects.exists()


def test_claiming_when_nothing_is_left_says_so(alice_api, bob_api):
    study = make_study(items=1)
    claim_via_api(bob_api, study)
    response = alice_api.post(f"/api/studies/{study.slug}/claim/")
    assert response.status_code == 200 and response.json()["claim"] is None
    assert "no item left" in response.json()["message"]


def test_active_and_wall_time_are_recorded(alice_api):
    study = make_study()
    claim = claim_via_api(alice_api, study)
    Claim.objects.filter(pk=claim["id"]).update(claimed_at=timezone.now() - timedelta(seconds=120))
    alice_api.put(f"/api/claims/{claim['id']}/draft/", {"data": {}, "active_seconds": 12.5}, format="json")
    alice_api.put(f"/api/claims/{claim['id']}/draft/", {"data": {}, "active_seconds": 20}, format="json")
    response = alice_api.post(f"/api/claims/{claim['id']}/submit/", {"data": GOOD, "active_seconds": 7.5},
                              format="json")
    assert response.status_code == 201
    submission = Submission.objects.get()
    assert submission.active_seconds == pytest.approx(40.0)
    assert 120 <= submission.wall_seconds < 180


def test_implausible_active_time_is_capped_or_refused(alice_api):
    study = make_study()
    claim = claim_via_api(alice_api, study)
    negative = alice_api.put(f"/api/claims/{claim['id']}/draft/", {"data": {}, "active_seconds": -5}, format="json")
    assert negative.status_code == 400
    alice_api.put(f"/api/claims/{claim['id']}/draft/", {"data": {}, "active_seconds": 10**9}, format="json")
    assert Draft.objects.get().active_seconds == submissions.MAX_ACTIVE_SECONDS_PER_SAVE


# --- Review -----------------------------------------------------------------------------------

def submitted(study, worker, data=None) -> Submission:
    claim = assignment.claim_next(study, worker)
    submission, _, _ = submissions.submit(claim, worker, data or GOOD)
    return submission


@pytest.fixture
def reviewed_study(db):
    return make_study("review-me", items=4, expert_first=10)


def test_the_review_queue_lists_pending_submissions(reviewed_study, alice, curator_http):
    submission = submitted(reviewed_study, alice)
    response = curator_http.get(f"/api/studies/{reviewed_study.slug}/queue/?queue=expert_sample")
    assert response.status_code == 200
    body = response.json()
    assert [row["id"] for row in body["results"]] == [submission.pk]
    assert body["results"][0]["worker"] == "alice" and body["results"][0]["review_state"] == "pending"
    assert body["counts"]["expert_sample"] == {"pending": 1, "approved": 0, "rejected": 0}


@pytest.mark.parametrize("reason", [None, "", "   "])
def test_a_rejection_needs_a_reason(reviewed_study, alice, curator_http, reason):
    submission = submitted(reviewed_study, alice)
    before = snapshot(submission.claim_id)
    body = {"action": "reject"} if reason is None else {"action": "reject", "reason": reason}
    response = curator_http.post(f"/api/submissions/{submission.pk}/review/", body, format="json")
    assert response.status_code == 400 and response.json() == {"error": "A rejection needs a reason."}
    assert snapshot(submission.claim_id) == before
    bulk = curator_http.post(f"/api/studies/{reviewed_study.slug}/review/",
                             {"submission_ids": [submission.pk], "action": "reject", "reason": reason or ""},
                             format="json")
    assert bulk.status_code == 400 and bulk.json()["error"] == "A rejection needs a reason."
    assert snapshot(submission.claim_id) == before


def test_a_rejected_answer_reopens_the_item_for_another_worker(alice, bob_api, curator_http):
    study = make_study("one-item", items=1, k=1, expert_first=10, count_accepted_only=True)
    item = study.items.get()
    submission = submitted(study, alice)
    assert bob_api.post(f"/api/studies/{study.slug}/claim/").json()["claim"] is None
    response = curator_http.post(f"/api/submissions/{submission.pk}/review/",
                                 {"action": "reject", "reason": "the animal is a dog"}, format="json")
    assert response.status_code == 200
    assert (response.json()["claim_status"], response.json()["review_state"]) == ("rejected", "rejected")
    assert response.json()["review_reason"] == "the animal is a dog" and response.json()["reviewed_by"] == "carol"
    item.refresh_from_db()
    assert (item.open_slots, item.completed_count) == (1, 0)
    taken = bob_api.post(f"/api/studies/{study.slug}/claim/")
    assert taken.status_code == 201 and taken.json()["item"]["external_id"] == item.external_id
    # the rejected worker never gets the same item again
    assert logged_in_api(alice).post(f"/api/studies/{study.slug}/claim/").json()["claim"] is None


def test_a_rejected_answer_keeps_its_place_when_every_answer_counts(alice, bob_api, curator_http):
    study = make_study("all-count", items=1, k=1, expert_first=10, count_accepted_only=False)
    submission = submitted(study, alice)
    curator_http.post(f"/api/submissions/{submission.pk}/review/", {"action": "reject", "reason": "wrong"},
                      format="json")
    item = study.items.get()
    assert (item.open_slots, item.completed_count) == (0, 1)
    assert bob_api.post(f"/api/studies/{study.slug}/claim/").json()["claim"] is None


def test_edit_and_approve_keeps_the_original_answers(reviewed_study, alice, curator_http):
    submission = submitted(reviewed_study, alice, {"label": "dog", "quality": 2, "note": "blurry"})
    original = submission.data
    response = curator_http.post(f"/api/submissions/{submission.pk}/review/",
                                 {"action": "edit", "data": {"label": "cat", "quality": 2, "note": "blurry"},
                                  "reason": "it is a cat"}, format="json")
    assert response.status_code == 200
    submission.refresh_from_db()
    assert submission.data == original
    assert submission.reviewed_data == {"label": "cat", "label_explanation": "", "quality": 2, "note": "blurry"}
    assert submission.final_data == submission.reviewed_data
    assert (submission.review_state, submission.claim.status) == ("approved", "approved")
    assert response.json()["data"] == original and response.json()["reviewed_data"]["label"] == "cat"


def test_an_invalid_edit_is_refused_and_changes_nothing(reviewed_study, alice, curator_http):
    submission = submitted(reviewed_study, alice)
    before = snapshot(submission.claim_id)
    response = curator_http.post(f"/api/submissions/{submission.pk}/review/",
                                 {"action": "edit", "data": {"label": "horse"}}, format="json")
    assert response.status_code == 400 and response.json()["details"]["label"] == "choose one of the options"
    no_data = curator_http.post(f"/api/submissions/{submission.pk}/review/", {"action": "edit"}, format="json")
    assert no_data.status_code == 400
    assert snapshot(submission.claim_id) == before
    submission.refresh_from_db()
    assert submission.reviewed_data is None and submission.review_state == "pending"


def test_bulk_approve(reviewed_study, alice, bob, curator_http, curator_user):
    chosen = [submitted(reviewed_study, alice), submitted(reviewed_study, bob), submitted(reviewed_study, alice)]
    response = curator_http.post(f"/api/studies/{reviewed_study.slug}/review/",
                                 {"submission_ids": [s.pk for s in chosen], "action": "approve"}, format="json")
    assert response.status_code == 200
    assert sorted(response.json()["done"]) == sorted(s.pk for s in chosen) and response.json()["failed"] == {}
    for submission in chosen:
        submission.refresh_from_db()
        assert (submission.review_state, submission.claim.status) == ("approved", "approved")
        assert submission.reviewed_by == curator_user
    # a second bulk decision on the same submissions fails for each, and says why
    again = curator_http.post(f"/api/studies/{reviewed_study.slug}/review/",
                              {"submission_ids": [chosen[0].pk], "action": "reject", "reason": "late"},
                              format="json")
    assert again.json() == {"done": [], "failed": {str(chosen[0].pk): "This submission was already approved."}}


def test_bulk_review_refuses_submissions_of_another_study(reviewed_study, alice, curator_http):
    other = make_study("other", items=1, expert_first=10)
    foreign = submitted(other, alice)
    response = curator_http.post(f"/api/studies/{reviewed_study.slug}/review/",
                                 {"submission_ids": [foreign.pk], "action": "approve"}, format="json")
    assert response.status_code == 400
    foreign.refresh_from_db()
    assert foreign.review_state == "pending"


@pytest.mark.parametrize("first,second", [("approve", "approve"), ("approve", "reject"), ("reject", "approve"),
                                          ("reject", "edit")])
def test_deciding_twice_is_409(reviewed_study, alice, curator_http, first, second):
    submission = submitted(reviewed_study, alice)
    body = {"reason": "because", "data": GOOD}
    assert curator_http.post(f"/api/submissions/{submission.pk}/review/", {"action": first, **body},
                             format="json").status_code == 200
    before = snapshot(submission.claim_id)
    response = curator_http.post(f"/api/submissions/{submission.pk}/review/", {"action": second, **body},
                                 format="json")
    assert response.status_code == 409 and response.json()["error"].startswith("This submission was already")
    assert snapshot(submission.claim_id) == before


@pytest.mark.parametrize("role", [ANNOTATOR, RESEARCHER])
def test_workers_and_researchers_cannot_decide_and_workers_cannot_read(reviewed_study, alice, role):
    """Researchers read submissions (annotation.crowd.access) but only reviewers decide; workers do neither."""
    submission = submitted(reviewed_study, alice)
    outsider = alice if role == ANNOTATOR else make_user("rita", RESEARCHER)
    client = logged_in_api(outsider)
    before = snapshot(submission.claim_id)
    calls = [
        client.post(f"/api/submissions/{submission.pk}/review/", {"action": "approve"}, format="json"),
        client.post(f"/api/submissions/{submission.pk}/review/", {"action": "reject", "reason": "x"}, format="json"),
        client.post(f"/api/studies/{reviewed_study.slug}/review/",
                    {"submission_ids": [submission.pk], "action": "approve"}, format="json"),
    ]
    reads = [
        client.get(f"/api/studies/{reviewed_study.slug}/queue/"),
        client.get(f"/api/submissions/{submission.pk}/"),
        client.get(f"/api/submissions/{submission.pk}/history/"),
    ]
    assert [c.status_code for c in calls] == [403] * len(calls)
    assert [c.status_code for c in reads] == [200 if role == RESEARCHER else 403] * len(reads)
    assert snapshot(submission.claim_id) == before


def test_the_review_history_of_a_submission(reviewed_study, alice, curator_http):
    submission = submitted(reviewed_study, alice)
    curator_http.post(f"/api/submissions/{submission.pk}/review/", {"action": "reject", "reason": "off topic"},
                      format="json")
    rows = curator_http.get(f"/api/submissions/{submission.pk}/history/").json()
    assert [(r["entity"], r["from"], r["to"], r["by"]) for r in rows] == [
        ("claim", "", "active", "alice"),
        ("claim", "active", "submitted", "alice"),
        ("submission", "", "pending", "alice"),
        ("claim", "submitted", "rejected", "carol"),
        ("submission", "pending", "rejected", "carol"),
    ]
    assert rows[-1]["reason"] == "off topic"


# --- Leases: an answer after the lease ran out is refused, and renews nothing --------------------

def _run_out(claim_id: int) -> None:
    Claim.objects.filter(pk=claim_id).update(lease_expires_at=timezone.now() - timedelta(seconds=1))


@pytest.mark.parametrize("verb", ["draft", "submit"])
def test_an_answer_on_an_expired_lease_is_409_before_the_sweep_and_renews_nothing(alice_api, verb):
    study = make_study(items=1, lease_seconds=600)
    claim = claim_via_api(alice_api, study)
    assert alice_api.put(f"/api/claims/{claim['id']}/draft/", {"data": {"label": "dog"}},
                         format="json").status_code == 200
    _run_out(claim["id"])
    expires = Claim.objects.get(pk=claim["id"]).lease_expires_at
    if verb == "draft":
        response = alice_api.put(f"/api/claims/{claim['id']}/draft/", {"data": {"label": "cat"}}, format="json")
    else:
        response = alice_api.post(f"/api/claims/{claim['id']}/submit/", {"data": GOOD}, format="json")
    assert response.status_code == 409
    assert "ran out" in response.json()["error"] and "can no longer" in response.json()["error"]
    after = Claim.objects.get(pk=claim["id"])
    assert after.lease_expires_at == expires  # not renewed
    assert after.status == Claim.Status.EXPIRED  # timed out on the spot
    assert Draft.objects.get(claim_id=claim["id"]).data == {"label": "dog"}
    assert not Submission.objects.exists()
    assert StudyItem.objects.get(study=study).open_slots == 1  # the place is free for someone else


def test_the_service_refuses_a_stale_claim_object_whose_lease_ran_out(alice):
    study = make_study(items=1, lease_seconds=600)
    claim = assignment.claim_next(study, alice)
    _run_out(claim.pk)  # the in-memory claim still believes its lease runs: the statement itself checks
    with pytest.raises(ClaimNotActive):
        submissions.save_draft(claim, alice, {"label": "dog"})
    claim = assignment.claim_next(make_study("other", items=1, lease_seconds=600), alice)
    _run_out(claim.pk)
    with pytest.raises(ClaimNotActive):
        submissions.submit(claim, alice, GOOD)
    assert not Draft.objects.exists() and not Submission.objects.exists()


# --- Drafts hold the form's fields only, within a size -------------------------------------------

def test_a_draft_with_fields_the_form_does_not_have_is_400(alice_api):
    claim = claim_via_api(alice_api, make_study())
    response = alice_api.put(f"/api/claims/{claim['id']}/draft/", {"data": {"label": "dog", "sneaky": "x"}},
                             format="json")
    assert response.status_code == 400
    assert response.json()["details"] == {"sneaky": "unknown field"}
    assert not Draft.objects.exists()
    ok = alice_api.put(f"/api/claims/{claim['id']}/draft/", {"data": {"label": "dog", "label_explanation": "ears"}},
                       format="json")
    assert ok.status_code == 200


def test_an_oversized_draft_is_413(alice_api):
    claim = claim_via_api(alice_api, make_study())
    big = "x" * (submissions.MAX_DRAFT_BYTES + 1)
    response = alice_api.put(f"/api/claims/{claim['id']}/draft/", {"data": {"note": big}}, format="json")
    assert response.status_code == 413
    assert "too large" in response.json()["error"]
    assert not Draft.objects.exists()


# --- Study settings: checked in one place, frozen once work started --------------------------------

@pytest.mark.parametrize(("field", "value"), [
    ("gold_share", 1.5), ("expert_share", -0.1), ("min_accept_rate", 1.01), ("annotators_per_item", 0),
    ("annotators_per_item", 100000), ("step_kind", "telepathy"), ("lease_seconds", 0), ("required_submissions", 0),
    ("platform_study_id", "bad id!"),
])
def test_study_settings_out_of_range_are_400_naming_the_field(curator_http, field, value):
    study = make_study(items=1)
    before = Study.objects.filter(pk=study.pk).values().get()
    response = curator_http.patch(f"/api/studies/{study.slug}/", {field: value}, format="json")
    assert response.status_code == 400, response.content
    assert field in response.json() and response.json()["error"].startswith(f"{field}:")
    assert Study.objects.filter(pk=study.pk).values().get() == before
    created = curator_http.post("/api/studies/", {"name": "New", "slug": "new-one", "form_schema": FORM,
                                                  field: value}, format="json")
    assert created.status_code == 400 and field in created.json()
    assert not Study.objects.filter(slug="new-one").exists()


def test_a_prolific_study_needs_its_study_id(curator_http):
    study = make_study(items=1)
    response = curator_http.patch(f"/api/studies/{study.slug}/", {"recruitment_platform": "prolific"}, format="json")
    assert response.status_code == 400 and "platform_study_id" in response.json()
    response = curator_http.patch(f"/api/studies/{study.slug}/", {"recruitment_platform": "prolific",
                                                                  "platform_study_id": "60a1b2c3"}, format="json")
    assert response.status_code == 200
    assert response.json()["recruitment_platform"] == "prolific"


@pytest.mark.parametrize(("field", "value"), [
    ("annotators_per_item", 3), ("form_schema", {"fields": [{"name": "other", "type": "free_text"}]}),
    ("step_kind", "blackswan_staged"),
])
def test_a_study_with_claims_keeps_its_step_kind_form_and_k(alice_api, curator_http, field, value):
    study = make_study(items=2)
    claim_via_api(alice_api, study)
    response = curator_http.patch(f"/api/studies/{study.slug}/", {field: value}, format="json")
    assert response.status_code == 409
    assert "work has started" in response.json()["error"] and field in response.json()["details"]
    study.refresh_from_db()
    assert (study.annotators_per_item, study.form_schema, study.step_kind) == (1, FORM, "form")
    # settings that do not change the work itself still may
    assert curator_http.patch(f"/api/studies/{study.slug}/", {"pay_per_item": "0.30", "annotators_per_item": 1},
                              format="json").status_code == 200


def test_before_any_claim_k_may_change_and_the_items_follow(curator_http):
    study = make_study(items=2, state=Study.State.DRAFT)
    response = curator_http.patch(f"/api/studies/{study.slug}/", {"annotators_per_item": 3}, format="json")
    assert response.status_code == 200
    assert list(StudyItem.objects.filter(study=study).values_list("open_slots", flat=True)) == [3, 3]
