"""The statements each request of the crowd work loop costs (claim → draft → submit), counted with
Django's `CaptureQueriesContext` through the API with a token, as the load test (`bench/claims.py`)
makes them. The loop's speed rests on these counts: a change that adds a statement to a hot
request fails here."""

import pytest
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.crowd.models import Claim, Study, StudyItem, Submission
from config.roles import ANNOTATOR
from tests.conftest import create_study, make_user

pytestmark = pytest.mark.django_db

FORM = {"fields": [{"name": "label", "type": "single_choice", "options": ["yes", "no", "unsure"]}]}
# the most statements each request may take, counting BEGIN/COMMIT/SAVEPOINT (as measured before the
# hand-written decoding was replaced by Django's own)
MOST = {"claim": 8, "draft": 6, "submit": 9}


def _token_client(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


def _counted(client, method: str, path: str, body=None) -> tuple[object, int]:
    with CaptureQueriesContext(connection) as queries:
        response = getattr(client, method)(path, body, format="json")
    return response, len(queries)


def test_claim_draft_and_submit_take_no_more_statements_than_before(db):
    study = create_study("statements", form=FORM, items=5, k=3, lease_seconds=600, expert_share=0.1, expert_first=2)
    worker = make_user("worker", ANNOTATOR)
    client = _token_client(worker)
    # history rows name their content types, which each process reads once and keeps (a server has
    # read them after its first requests)
    ContentType.objects.get_for_models(Claim, Study, StudyItem, Submission)
    counts = {}
    for round_number in range(3):  # the first submissions are sampled for review, later ones by share
        response, counts["claim"] = _counted(client, "post", f"/api/studies/{study.slug}/claim/")
        assert response.status_code == 201, response.content
        claim = f"/api/claims/{response.json()['id']}"
        response, counts["draft"] = _counted(client, "put", f"{claim}/draft/",
                                             {"data": {"label": "yes"}, "active_seconds": 2})
        assert response.status_code == 200, response.content
        response, counts["submit"] = _counted(client, "post", f"{claim}/submit/",
                                              {"data": {"label": "no"}, "active_seconds": 1})
        assert response.status_code == 201, response.content
        for endpoint, most in MOST.items():
            assert counts[endpoint] <= most, (round_number, counts)
    assert Claim.objects.filter(worker=worker, status=Claim.Status.SUBMITTED).count() == 3
    assert Submission.objects.filter(claim__worker=worker).count() == 3
    print(f"statements per request on {connection.vendor}: {counts}")
