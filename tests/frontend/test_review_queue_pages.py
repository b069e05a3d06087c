"""The review queue page as reviewers and researchers see it: the item's media beside the answers
(behind the media permission checks), an edit form shaped like the answers whose edits are checked
like a submission, and decision controls for reviewers only."""

import re

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.crowd import assignment, submissions
from annotation.crowd.models import Claim, Submission
from config.roles import ANNOTATOR, CURATOR, RESEARCHER
from tests.conftest import create_study, make_user

pytestmark = pytest.mark.django_db

FORM = {"fields": [
    {"name": "caption", "type": "free_text", "label": "Describe the picture.", "min_length": 5, "max_length": 60},
    {"name": "person", "type": "single_choice", "label": "Is there a person?", "options": ["yes", "no"]},
]}
GOOD = {"caption": "An astronaut in a white suit.", "person": "yes"}


@pytest.fixture
def pictures(image):
    return create_study("pictures", form=FORM, items=0,
                        extra_rows=[{"external_id": "pic-1", "payload": {"n": 1}, "image": image}])


@pytest.fixture
def submission(pictures):
    worker = make_user("wanda", ANNOTATOR)
    claim = assignment.claim_next(pictures, worker)
    found, _, _ = submissions.submit(claim, worker, GOOD, active_seconds=3)
    return found


def client_for(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def queue_page(user, study) -> str:
    response = client_for(user).get(reverse("crowd-study-queue", kwargs={"slug": study.slug}))
    assert response.status_code == 200
    return response.content.decode()


def test_reviewers_see_the_picture_and_an_edit_form_of_the_studys_own_fields(pictures, submission, image):
    page = queue_page(make_user("cora", CURATOR), pictures)
    image_url = reverse("media-image-file", kwargs={"pk": image.pk})
    assert f'<img src="{image_url}"' in page
    edit = page[page.index("data-edit-form"):page.index('data-action="edit"')]
    assert 'data-shape="form"' in edit and "Corrected answers (JSON)" not in page
    assert re.search(r'<textarea id="s\d+-field-1-input" name="caption" data-part="text"', edit)
    assert "An astronaut in a white suit." in edit
    assert re.search(r'<input type="radio" name="person" value="[^"]+" data-part="choice" checked>', edit)
    assert 'data-queues="all"' in page and 'data-pending-count="all">1<' in page


def test_a_researcher_sees_the_media_but_no_decision_controls(pictures, submission, image):
    page = queue_page(make_user("rhea", RESEARCHER), pictures)
    assert reverse("media-image-file", kwargs={"pk": image.pk}) in page
    controls = ("data-edit-form", 'data-action="approve"', 'data-action="reject"', 'data-bulk="', "Edit and approve")
    for control in controls:
        assert control not in page
    response = client_for(make_user("rhea2", RESEARCHER)).get(reverse("media-image-file", kwargs={"pk": image.pk}))
    assert response.status_code == 200


def test_the_media_urls_of_the_queue_are_permission_checked(pictures, submission, image):
    page = queue_page(make_user("cora", CURATOR), pictures)
    (url,) = re.findall(r'<img src="([^"]+)"', page)
    assert client_for(make_user("cora2", CURATOR)).get(url).status_code == 200
    # the worker handed the item in: no active claim grants it any more; other annotators never had one
    for user in (submission.claim.worker, make_user("otto", ANNOTATOR)):
        assert client_for(user).get(url).status_code in (403, 404)
    assert Client().get(url).status_code in (302, 401, 403, 404)


@pytest.mark.parametrize(("data", "field"), [
    ({"caption": "x" * 61, "person": "yes"}, "caption"),  # past the field's max_length
    ({"caption": "Fine text here.", "person": "perhaps"}, "person"),  # not one of the choices
    ({"person": "yes"}, "caption"),  # a required field left out
])
def test_an_edit_is_checked_like_a_submission_and_a_refusal_changes_nothing(pictures, submission, data, field):
    api = APIClient()
    api.force_authenticate(make_user("cora", CURATOR))
    url = reverse("api-submission-decide", kwargs={"pk": submission.pk})
    response = api.post(url, {"action": "edit", "data": data, "reason": ""}, format="json")
    assert response.status_code == 400, response.content
    assert field in str(response.json())
    submission.refresh_from_db()
    assert submission.reviewed_data is None and submission.claim.status == Claim.Status.SUBMITTED

    fixed = {**GOOD, "caption": "An astronaut, arms folded."}
    response = api.post(url, {"action": "edit", "data": fixed, "reason": ""}, format="json")
    assert response.status_code == 200, response.content
    submission.refresh_from_db()
    assert submission.reviewed_data["caption"] == "An astronaut, arms folded."
    assert submission.review_state == Submission.Review.APPROVED


def test_a_researcher_cannot_decide_through_the_api(pictures, submission):
    api = APIClient()
    api.force_authenticate(make_user("rhea", RESEARCHER))
    url = reverse("api-submission-decide", kwargs={"pk": submission.pk})
    response = api.post(url, {"action": "edit", "data": GOOD, "reason": ""}, format="json")
    assert response.status_code == 403
    submission.refresh_from_db()
    assert submission.claim.status == Claim.Status.SUBMITTED
