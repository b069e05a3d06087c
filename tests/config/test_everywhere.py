"""What every page shares: one date-time format, a favicon, the Admin link for whoever may use the
admin, quiet logs for refused requests, a plain 404 page, models named by what they are, durations
in words."""

import logging
from datetime import UTC, datetime
from pathlib import Path

import pytest
from django.apps import apps
from django.contrib.admin import site
from django.contrib.staticfiles import finders
from django.db import models
from django.template import Context, Template
from django.test import Client, override_settings
from django.utils import timezone

from annotation.crowd import assignment, submissions
from annotation.crowd.study_forms import SETTING_LABELS, StudySettingsForm
from evaluation.models import Prediction
from frontend.templatetags.display import duration_text, when_text
from tests.conftest import create_study, logged_in_client

PROJECT_APPS = {"config", "generation", "annotation", "evaluation", "frontend"}


def render(source: str, **context) -> str:
    return Template("{% load display %}" + source).render(Context(context))


# --- Date-times ---------------------------------------------------------------------------

def test_when_shows_an_iso_like_date_time_with_its_zone():
    moment = datetime(2025, 3, 1, 13, 5, 9, tzinfo=UTC)
    with timezone.override("Europe/Berlin"):
        html = render("{{ t|when }}", t=moment)
        assert html == ('<time datetime="2025-03-01T13:05:09+00:00" data-when="minutes">'
                        "2025-03-01 14:05 CET</time>")
        assert render('{{ t|when:"seconds" }}', t=moment).endswith(">2025-03-01 14:05:09 CET</time>")
    assert when_text(moment) == "2025-03-01 13:05 UTC"
    assert render("{{ t|when }}", t=None) == "—"
    # stored results keep their times as ISO strings
    assert render("{{ t|when }}", t=moment.isoformat()).endswith(">2025-03-01 13:05 UTC</time>")
    assert render("{{ t|when }}", t="not a time") == "—"


@pytest.mark.django_db
def test_pages_show_date_times_in_the_one_format(curator_client, curator):
    study = create_study("dated", form={"fields": [{"name": "a", "type": "free_text", "label": "A"}]},
                         created_by=curator)
    html = curator_client.get(f"/studies/{study.slug}/").content.decode()
    expected = when_text(study.created_at)
    assert f'data-when="minutes">{expected}</time>' in html


# --- Durations and labels -----------------------------------------------------------------

@pytest.mark.parametrize("seconds, words", [
    (2700, "45 minutes"), (1800, "30 minutes"), (60, "1 minute"), (45, "45 seconds"), (3600, "1 hour"),
    (5400, "1 hour 30 minutes"), (86400 + 7200, "1 day 2 hours"), (0, "0 seconds"), (None, "—"), ("x", "—"),
])
def test_durations_are_shown_in_words(seconds, words):
    assert duration_text(seconds) == words


@pytest.mark.django_db
def test_study_page_names_its_settings_in_words(curator_client):
    study = create_study("kept", form={"fields": [{"name": "a", "type": "free_text", "label": "A"}]},
                         lease_seconds=2700)
    html = curator_client.get(f"/studies/{study.slug}/").content.decode()
    assert "<dt>Item kept for a worker</dt>" in html and '<dd data-setting="lease">45 minutes</dd>' in html
    assert "2700 s" not in html
    labels = {name: field.label for name, field in StudySettingsForm(instance=study).fields.items()}
    assert labels["lease_seconds"] == "Item kept for a worker (seconds)"
    assert labels["annotators_per_item"] == "Annotators per item (k)"
    plain_words = {"name", "instructions", "currency"}  # their field names already read as words
    assert set(labels) - set(SETTING_LABELS) <= plain_words


# --- Favicon ------------------------------------------------------------------------------

@pytest.mark.django_db
def test_favicon_is_served_and_linked(annotator_client):
    found = finders.find("frontend/favicon.svg")
    assert found and Path(found).read_text().startswith("<svg")
    home = annotator_client.get("/").content.decode()
    assert '<link rel="icon" href="/static/frontend/favicon.svg" type="image/svg+xml">' in home
    with override_settings(DEBUG=True):  # served from the app folders, as in the demo
        response = Client().get("/static/frontend/favicon.svg")
        assert response.status_code == 200
        assert response["Content-Type"].startswith("image/svg+xml")


# --- Admin link ---------------------------------------------------------------------------

@pytest.mark.django_db
def test_every_role_that_may_use_the_admin_sees_its_link(role_users):
    for role, user in role_users.items():
        html = logged_in_client(user).get("/").content.decode()
        may_use_admin = logged_in_client(user).get("/admin/").status_code == 200
        assert may_use_admin == (role != "annotator"), role
        assert ("data-nav-admin" in html) == may_use_admin, role


# --- Refused requests ---------------------------------------------------------------------

@pytest.mark.django_db
def test_a_403_is_logged_in_one_line_without_a_traceback(annotator_client, caplog):
    with caplog.at_level(logging.INFO, logger="django.request"):
        assert annotator_client.get("/runs/").status_code == 403
    records = [r for r in caplog.records if r.name == "django.request"]
    assert records and all(r.levelno <= logging.WARNING for r in records)
    assert all(r.exc_info is None for r in records)
    assert "Traceback" not in caplog.text
    assert "Forbidden" in caplog.text


@pytest.mark.django_db
@override_settings(DEBUG=True)
def test_not_found_is_the_plain_page_even_with_debug(curator_client):
    for address in ("/no-such-page/", "/studies/no-such-study/"):
        response = curator_client.get(address)
        html = response.content.decode()
        assert response.status_code == 404, address
        assert "<h1>Not found</h1>" in html and "There is nothing at this address." in html, address
        assert "DEBUG = True" not in html and "URLconf" not in html, address
    assert curator_client.get("/studies").status_code == 301  # a missing slash is still added


# --- Models named by what they are -------------------------------------------------------

def test_every_model_of_the_project_names_itself():
    unnamed = [model._meta.label for model in apps.get_models()
               if model._meta.app_label in PROJECT_APPS and model.__str__ is models.Model.__str__]
    assert not unnamed, f"models without __str__: {unnamed}"


@pytest.mark.django_db
def test_a_submission_is_named_in_the_admin(admin_client_role, annotator):
    study = create_study("named", form={"fields": [{"name": "a", "type": "free_text", "label": "A"}]})
    claim = assignment.claim_next(study, annotator)
    submission, _, _ = submissions.submit(claim, annotator, {"a": "hello"})
    assert str(submission) == f"submission {submission.pk} of claim {claim.pk} (not sampled)"
    html = admin_client_role.get("/admin/annotation/submission/").content.decode()
    assert "Submission object" not in html and f"submission {submission.pk} of claim" in html


# --- Latencies ----------------------------------------------------------------------------

def test_latencies_are_rounded_in_the_admin():
    model_admin = site._registry[Prediction]
    assert "latency_s" not in model_admin.list_display
    assert model_admin.latency(Prediction(latency_s=0.123456789)) == "0.12 s"
    assert model_admin.latency(Prediction(latency_s=None)) == "—"
