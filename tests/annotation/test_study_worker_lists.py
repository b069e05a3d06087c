"""A study's "only these workers" and "never these workers" lists, edited on its settings page:
usernames one a line, unknown names refused with nothing changed, and the lists obeyed by the claim."""

import pytest
from django.urls import reverse

from annotation.crowd.study_forms import StudySettingsForm
from config.roles import ADMIN, ANNOTATOR, CURATOR, RESEARCHER
from tests.conftest import create_study, logged_in_api, logged_in_client, make_user

pytestmark = pytest.mark.django_db

FORM = {"fields": [{"name": "answer", "type": "single_choice", "label": "Right?", "options": ["yes", "no"]}]}


def settings_data(study, **lists) -> dict:
    form = StudySettingsForm(instance=study)
    values = {name: form[name].value() for name in form.fields}
    data = {name: value for name, value in values.items() if value is not None and value is not False}
    return {**data, **lists}


@pytest.fixture
def study(db):
    return create_study("lists", form=FORM, items=3)


@pytest.fixture
def workers(db):
    return [make_user(name, ANNOTATOR) for name in ("ana", "ben", "cy")]


def names(study, field):
    return sorted(getattr(study, field).values_list("username", flat=True))


def test_the_settings_page_saves_both_lists(study, workers, curator):
    url = reverse("crowd-study-settings", args=[study.slug])
    saved = logged_in_client(curator).post(url, settings_data(
        study, include_workers="ana\nben\n\n  ben  ", exclude_workers="cy"))
    assert saved.status_code == 302
    assert names(study, "include_workers") == ["ana", "ben"] and names(study, "exclude_workers") == ["cy"]
    page = logged_in_client(curator).get(url).content.decode()
    assert "data-worker-lists" in page and "ana\nben</textarea>" in page
    cleared = logged_in_client(curator).post(url, settings_data(study, include_workers="", exclude_workers="cy"))
    assert cleared.status_code == 302 and names(study, "include_workers") == []


def test_unknown_usernames_are_a_400_naming_them_and_change_nothing(study, workers, curator):
    study.exclude_workers.set([workers[2]])
    url = reverse("crowd-study-settings", args=[study.slug])
    response = logged_in_client(curator).post(url, settings_data(
        study, name="Renamed", include_workers="ana\nghost\nspecter", exclude_workers="nobody"))
    assert response.status_code == 400
    body = response.content.decode()
    assert "unknown usernames: ghost, specter" in body and "unknown username: nobody" in body
    study.refresh_from_db()
    assert study.name != "Renamed" and names(study, "include_workers") == []
    assert names(study, "exclude_workers") == ["cy"]


def test_listed_workers_are_obeyed_by_the_claim(study, workers, curator):
    url = reverse("crowd-study-settings", args=[study.slug])
    assert logged_in_client(curator).post(url, settings_data(study, exclude_workers="cy")).status_code == 302
    claim = reverse("api-study-claim", args=[study.slug])
    refused = logged_in_api(workers[2]).post(claim)
    assert refused.status_code == 403 and "not open to your account" in refused.json()["error"]
    assert logged_in_api(workers[0]).post(claim).status_code == 201
    assert logged_in_client(curator).post(url, settings_data(study, include_workers="ana")).status_code == 302
    assert logged_in_api(workers[1]).post(claim).status_code == 403
    assert logged_in_api(workers[2]).post(claim).status_code == 403


@pytest.mark.parametrize("role, allowed", [(ANNOTATOR, False), (RESEARCHER, False), (CURATOR, True), (ADMIN, True)])
def test_only_curators_and_admins_edit_the_lists(study, workers, role, allowed):
    user = make_user(f"someone-{role}", role)
    response = logged_in_client(user).post(reverse("crowd-study-settings", args=[study.slug]),
                                           settings_data(study, exclude_workers="ana"))
    assert response.status_code == (302 if allowed else 403)
    assert names(study, "exclude_workers") == (["ana"] if allowed else [])
