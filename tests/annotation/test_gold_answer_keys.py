"""Answer keys of gold and attention items (`annotation.crowd.answer_keys`): the short form the API documents,
`{"fields": {name: expected answer}}`, scores a worker's submission end to end as a rule object does; a key
that is malformed is refused with a 400 naming the problem wherever it is set (the API, the study's items page,
the admin's form), never accepted and then failing every submit; a key stored before keys were checked leaves
the check undecided instead of sticking the worker's claim."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotation.crowd import assignment
from annotation.crowd.models import Claim, Study, StudyItem, Submission
from annotation.crowd.study_forms import StudyItemForm
from config.roles import ANNOTATOR
from tests.conftest import create_study, logged_in_api, logged_in_client, make_user

pytestmark = pytest.mark.django_db

FORM = {"fields": [
    {"name": "label", "type": "single_choice", "options": ["cat", "dog"]},
    {"name": "tags", "type": "multi_select", "options": ["pet", "wild", "small"]},
    {"name": "size", "type": "likert", "min": 1, "max": 5},
    {"name": "caption", "type": "free_text", "min_length": 1, "max_length": 200},
]}


def gold_study(slug: str = "gold") -> Study:
    return create_study(slug, form=FORM, items=0, gold_share=1.0, name="Gold")


def add_items(client, study, rows):
    return client.post(f"/api/studies/{study.slug}/items/", rows, format="json")


def work(worker, study, data) -> tuple[dict, Claim]:
    client = logged_in_api(worker)
    claimed = client.post(f"/api/studies/{study.slug}/claim/")
    assert claimed.status_code == 201, claimed.content
    response = client.post(f"/api/claims/{claimed.json()['id']}/submit/", {"data": data}, format="json")
    assert response.status_code == 201, response.content
    return response.json()["feedback"], Claim.objects.get(pk=claimed.json()["id"])


def test_the_documented_short_form_scores_submissions_end_to_end(curator_api):
    study = gold_study()
    short = {"fields": {"label": "dog", "tags": ["pet", "small"], "size": 2}}
    assert add_items(curator_api, study, [{"external_id": "g1", "payload": {"url": "x"}, "role": "gold",
                                           "answer_key": short}]).status_code == 201
    right = {"label": "dog", "tags": ["small", "pet"], "size": 2, "caption": "a small dog"}
    feedback, claim = work(make_user("wanda", ANNOTATOR), study, right)
    submission = Submission.objects.get(claim=claim)
    assert feedback == {} and submission.check_passed is True and claim.status == Claim.Status.SUBMITTED
    feedback, claim = work(make_user("otto", ANNOTATOR), study, {**right, "tags": ["pet"]})
    assert Submission.objects.get(claim=claim).check_passed is False and "message" in feedback
    assert "dog" not in json.dumps(feedback) and claim.status == Claim.Status.SUBMITTED


def test_the_short_form_from_the_study_items_page_scores_too(curator):
    study = gold_study("page-gold")
    text = 'external_id,url,role,answer_key\ng1,x,gold,"{""fields"": {""label"": ""cat""}}"\n'
    response = logged_in_client(curator).post(reverse("crowd-study-items", args=[study.slug]), {
        "source": "file", "file": SimpleUploadedFile("items.csv", text.encode())})
    assert response.status_code == 302
    _, claim = work(make_user("wanda", ANNOTATOR), study, {"label": "cat", "tags": [], "size": 1, "caption": "c"})
    assert Submission.objects.get(claim=claim).check_passed is True


MALFORMED = [
    ({"fields": {"label": {"answer": "dog", "rule": "regex"}}},
     "answer_key field 'label': unknown rule 'regex' (the rules: exact, one_of, set_equal, within, contains, "
     "mapping)"),
    ({"fields": {"label": {"answer": "dog", "rule": "one_of"}}},
     "answer_key field 'label': the rule 'one_of' needs a non-empty list as its answer"),
    ({"fields": {"size": {"answer": "big", "rule": "within", "tolerance": 1}}},
     "answer_key field 'size': the rule 'within' needs a number as its answer and a tolerance of at least 0"),
    ({"fields": {"label": None}},
     "answer_key field 'label': the rule 'exact' needs a text, a number or true/false as its answer (got None)"),
    ({"fields": {"colour": "red"}},
     "answer_key field 'colour' is not a field of the study's form (its fields: label, tags, size, caption)"),
    ({"fields": ["label"]}, "answer_key 'fields' must be an object: field name → the expected answer, or a rule "
                            '{"answer": …, "rule": …}'),
    ({}, "gold and attention items need an answer_key with 'fields'"),
]


@pytest.mark.parametrize(("key", "message"), MALFORMED)
def test_a_malformed_key_is_refused_by_the_api_naming_the_problem(curator_api, key, message):
    study = gold_study()
    response = add_items(curator_api, study, [{"external_id": "g1", "payload": {}, "role": "gold",
                                               "answer_key": key}])
    assert response.status_code == 400, response.content
    assert response.json()["error"] == f"0: {message}", response.json()
    assert not study.items.exists()


def test_a_malformed_key_is_refused_on_the_items_page_and_in_the_admin(curator):
    study = gold_study()
    lines = "\n".join(json.dumps({"external_id": f"g{n}", "payload": {}, "role": "attention", "answer_key": key})
                      for n, (key, _) in enumerate(MALFORMED))
    response = logged_in_client(curator).post(reverse("crowd-study-items", args=[study.slug]), {
        "source": "file", "file": SimpleUploadedFile("items.jsonl", lines.encode())})
    assert response.status_code == 400
    problems = {p["row"]: p["problem"] for p in response.context["outcome"].problems}
    assert [problems[n + 1][:len(message)] for n, (_, message) in enumerate(MALFORMED)] == [
        message for _, message in MALFORMED]
    assert not study.items.exists()
    form = StudyItemForm(data={"study": study.pk, "external_id": "g1", "payload": '{"url": "x"}', "role": "gold",
                               "answer_key": json.dumps(MALFORMED[0][0])})
    assert not form.is_valid() and form.errors["answer_key"] == [MALFORMED[0][1]]
    form = StudyItemForm(data={"study": study.pk, "external_id": "g1", "payload": '{"url": "x"}', "role": "gold",
                               "answer_key": json.dumps({"fields": {"label": "dog"}})})
    assert form.is_valid(), form.errors


def test_a_key_stored_before_keys_were_checked_leaves_the_check_undecided(db):
    study = gold_study()
    assignment.add_items(study, [{"external_id": "g1", "payload": {}, "role": StudyItem.Role.GOLD,
                                  "answer_key": {"fields": {"label": {"answer": "dog", "rule": "regex"}}}}])
    feedback, claim = work(make_user("wanda", ANNOTATOR), study, {"label": "dog", "tags": [], "size": 1,
                                                                   "caption": "c"})
    assert feedback == {} and claim.status == Claim.Status.SUBMITTED
    assert Submission.objects.get(claim=claim).check_passed is None
