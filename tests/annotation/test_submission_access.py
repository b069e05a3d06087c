"""One rule decides who reads workers' submissions (`annotation.crowd.access.can_read_submissions`):
the API, the admin, the pages and the exports give the same user the same answer for the same study."""

import pytest
from django.contrib.auth.models import Permission
from django.core.exceptions import PermissionDenied
from django.urls import reverse

from annotation.crowd import assignment, submissions
from annotation.crowd.access import can_read_submissions
from annotation.crowd.models import Submission
from config.roles import ADMIN, ANNOTATOR, CURATOR, RESEARCHER
from evaluation import exports
from generation.models import Job
from tests.conftest import create_study, logged_in_api, logged_in_client, make_user

pytestmark = pytest.mark.django_db

FORM = {"fields": [{"name": "label", "type": "single_choice", "options": ["cat", "dog"]}]}
READERS = {CURATOR, RESEARCHER, ADMIN}


@pytest.fixture
def submission(db) -> Submission:
    study = create_study("pets", form=FORM, items=2, expert_first=10)
    worker = make_user("wanda", ANNOTATOR)
    found, _, _ = submissions.submit(assignment.claim_next(study, worker), worker, {"label": "dog"})
    return found


def people() -> dict:
    """One user per role, every one of them admitted to the admin site, so that only the rule decides."""
    return {role: make_user(f"user-{role}", role, staff=True) for role in (ANNOTATOR, CURATOR, RESEARCHER, ADMIN)}


def reads_in_the_api(user, submission) -> bool:
    client = logged_in_api(user)
    answers = {client.get(f"/api/submissions/{submission.pk}/").status_code,
               client.get(f"/api/submissions/{submission.pk}/history/").status_code,
               client.get(f"/api/studies/{submission.claim.study.slug}/queue/?queue=expert_sample").status_code}
    assert answers in ({200}, {403}), answers
    return answers == {200}


def reads_in_the_admin(user, submission) -> bool:
    client = logged_in_client(user)
    listing = client.get(reverse("admin:annotation_submission_changelist"))
    detail = client.get(reverse("admin:annotation_submission_change", args=[submission.pk]))
    answers = {listing.status_code, detail.status_code}
    assert answers in ({200}, {403}), answers
    if answers == {200}:
        assert f"/admin/annotation/submission/{submission.pk}/change/" in listing.content.decode()
        assert "dog" in detail.content.decode()
    return answers == {200}


def reads_in_the_pages(user, submission) -> bool:
    response = logged_in_client(user).get(reverse("crowd-study-queue", kwargs={"slug": submission.claim.study.slug}),
                                          {"queue": "expert_sample"})
    assert response.status_code in (200, 403)
    if response.status_code == 200:
        assert f'data-submission-id="{submission.pk}"' in response.content.decode()
    return response.status_code == 200


def reads_in_the_exports(user, submission, capture) -> bool:
    try:
        with capture(execute=True):
            job = exports.enqueue_export(user, "submissions", "jsonl", studies=[submission.claim.study.slug])
    except PermissionDenied:
        return False
    job.refresh_from_db()
    assert job.status == Job.Status.SUCCEEDED, job.message
    response = logged_in_client(user).get(reverse("export-download", kwargs={"pk": job.pk}))
    assert response.status_code == 200
    assert b'"dog"' in b"".join(response.streaming_content)
    return True


def test_the_api_the_admin_the_pages_and_the_exports_agree(submission, django_capture_on_commit_callbacks):
    for role, user in people().items():
        expected = can_read_submissions(user)
        assert expected == (role in READERS), role
        seen = {"api": reads_in_the_api(user, submission), "admin": reads_in_the_admin(user, submission),
                "pages": reads_in_the_pages(user, submission),
                "exports": reads_in_the_exports(user, submission, django_capture_on_commit_callbacks)}
        assert seen == dict.fromkeys(seen, expected), (role, seen)


def test_a_django_permission_alone_does_not_open_submissions_in_the_admin(submission):
    """The admin follows the rule, not model permissions: an annotator given view_submission still sees nothing."""
    worker = make_user("staffed-worker", ANNOTATOR, staff=True)
    worker.user_permissions.add(Permission.objects.get(codename="view_submission"))
    assert not can_read_submissions(worker)
    assert not reads_in_the_admin(worker, submission)


def test_readers_who_do_not_review_see_no_decision_controls(submission):
    researcher, curator = make_user("rita", RESEARCHER), make_user("cora", CURATOR)
    url = reverse("crowd-study-queue", kwargs={"slug": submission.claim.study.slug})
    research_page = logged_in_client(researcher).get(url, {"queue": "expert_sample"}).content.decode()
    curator_page = logged_in_client(curator).get(url, {"queue": "expert_sample"}).content.decode()
    for control in ('data-action="approve"', 'data-bulk="reject"', 'class="row-select"'):
        assert control in curator_page and control not in research_page
    # deciding stays with reviewers
    refused = logged_in_api(researcher).post(f"/api/submissions/{submission.pk}/review/", {"action": "approve"},
                                             format="json")
    assert refused.status_code == 403
    assert Submission.objects.get(pk=submission.pk).review_state == Submission.Review.PENDING


def test_an_export_of_submissions_is_downloaded_only_by_whoever_may_still_read_them(
        submission, django_capture_on_commit_callbacks):
    curator = make_user("cora", CURATOR)
    with django_capture_on_commit_callbacks(execute=True):
        job = exports.enqueue_export(curator, "submissions", "csv", studies=["pets"])
    url = reverse("export-download", kwargs={"pk": job.pk})
    assert logged_in_client(curator).get(url).status_code == 200
    # curators export submissions, not evaluation results
    with pytest.raises(PermissionDenied, match="Only researchers and admins export results"):
        exports.enqueue_export(curator, "runs", "csv")
    with pytest.raises(PermissionDenied, match="Only curators, researchers and admins export crowd submissions"):
        exports.enqueue_export(make_user("ann", ANNOTATOR), "submissions", "csv")
