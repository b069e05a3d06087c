"""Failure analysis of wrong NL-EYE predictions (seeds/002 §6): the benchmark's failure factors, tags
recorded from the drill-down and the failure page (history kept, one current tag per prediction), the
distribution per model on the leaderboard, the API and the command, and who may tag."""

import io
import json

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.management import CommandError, call_command
from django.urls import reverse

from evaluation import benchmarks, failure_analysis
from evaluation.models import FailureTag
from tests.conftest import logged_in_api
from tests.eval_support import frozen_version
from tests.evaluation.test_human_eval import make_run, predict, triplet

pytestmark = pytest.mark.django_db

# gold: order1 → 1, order2 → 2 (the gold hypothesis is shown first in order 1)
ANSWERS = {"t1:triplet:order1": "2. The man dances because music is on.",  # wrong
           "t1:triplet:order2": "2. The wet floor makes him slip.",  # right
           "t2:triplet:order1": "2. Dancing needs music, the picture is dark.",  # wrong
           "t2:triplet:order2": "I cannot tell.",  # unparsed: nothing to analyse
           "t3:triplet:order1": "1. Ice is slippery."}  # right; t3 order 2 is missing


@pytest.fixture
def run():
    version = frozen_version("nleye", "fa", [("t1", triplet(1, "A wet floor."), {}),
                                             ("t2", triplet(1, "Music plays."), {}),
                                             ("t3", triplet(1, "Ice on the road."), {})])
    found = make_run(version, "org/alpha", input_strategy="text_only", variants=["triplet"])
    return found, predict(found, ANSWERS)


def test_nleye_declares_the_five_factors_of_section_6():
    benchmark = benchmarks.get("nleye")
    assert [factor.label for factor in benchmark.failure_factors] == [
        "Style & consistency", "Time", "Ignored key details", "Missing knowledge", "Failed comparison"]
    assert benchmark.failure_variants == ("triplet",)
    assert failure_analysis.factors_of(benchmarks.get("cvqa")) == {}


def test_only_wrong_answers_are_tagged_and_the_latest_tag_counts(run, curator, researcher):
    found, made = run
    wrong = failure_analysis.wrong_predictions(found)
    assert [entry.request.request_id for entry in wrong] == ["t1:triplet:order1", "t2:triplet:order1"]
    first, second = made[("t1:triplet:order1", 0)], made[("t2:triplet:order1", 0)]

    failure_analysis.tag(curator, first, "time", "reads the scene backwards")
    failure_analysis.tag(researcher, first, "ignored_key_details")
    failure_analysis.tag(curator, second, "time")
    assert failure_analysis.distribution(found)["tagged"] == 2
    counts = {f["key"]: (f["count"], f["share"]) for f in failure_analysis.distribution(found)["factors"]}
    assert counts["time"] == (1, 0.5) and counts["ignored_key_details"] == (1, 0.5)
    assert counts["failed_comparison"] == (0, 0.0)
    assert [tag.factor for tag in failure_analysis.history(first)] == ["ignored_key_details", "time"]

    failure_analysis.tag(curator, second, "")  # cleared
    shown = failure_analysis.distribution(found)
    assert (shown["wrong"], shown["tagged"]) == (2, 1)
    assert {f["key"]: f["share"] for f in shown["factors"]}["ignored_key_details"] == 1.0

    for prediction, factor, why in ((made[("t1:triplet:order2", 0)], "time", "not a wrong answer"),
                                    (made[("t2:triplet:order2", 0)], "time", "not a wrong answer"),
                                    (first, "bad_luck", "Unknown failure factor")):
        with pytest.raises(failure_analysis.FailureTagError, match=why):
            failure_analysis.tag(curator, prediction, factor)
    with pytest.raises(ValidationError):
        tag = FailureTag.objects.first()
        tag.note = "edited"
        tag.save()
    with pytest.raises(ValidationError):
        FailureTag.objects.first().delete()


def test_annotators_cannot_tag(run, annotator, annotator_client):
    found, made = run
    prediction = made[("t1:triplet:order1", 0)]
    with pytest.raises(PermissionDenied):
        failure_analysis.tag(annotator, prediction, "time")
    response = annotator_client.post(reverse("prediction-failure-tag", args=[prediction.pk]), {"factor": "time"})
    assert response.status_code == 403 and FailureTag.objects.count() == 0


def test_drill_down_and_failure_page_tag_and_leaderboard_shows_the_distribution(run, researcher_client,
                                                                                 curator_client):
    found, made = run
    first, second = made[("t1:triplet:order1", 0)], made[("t2:triplet:order1", 0)]
    drill_url = reverse("results-drill", args=[found.pk, "triplet.consistency_accuracy"])
    drill = researcher_client.get(drill_url).content.decode()
    assert f'data-prediction="{first.pk}"' in drill and f'data-prediction="{second.pk}"' in drill
    assert f'data-prediction="{made[("t1:triplet:order2", 0)].pk}"' not in drill  # right: nothing to tag

    tag_url = reverse("prediction-failure-tag", args=[first.pk])
    response = researcher_client.post(tag_url, {"factor": "style_consistency", "note": "the lighting",
                                                "next": drill_url})
    assert response.status_code == 302 and response.url == drill_url
    assert researcher_client.post(tag_url, {"factor": "x", "next": drill_url}).status_code == 400
    away = researcher_client.post(tag_url, {"factor": "time", "next": "https://elsewhere.example/"})
    assert away.url == reverse("results-run-failures", args=[found.pk])
    assert "Failure factor: time" in researcher_client.get(drill_url).content.decode()

    page = curator_client.get(reverse("results-run-failures", args=[found.pk]))
    assert page.status_code == 200
    html = page.content.decode()
    assert "1 of 2 wrong answers tagged" in html
    assert 'data-request-id="t1:triplet:order1"' in html and 'data-request-id="t2:triplet:order1"' in html
    untagged = curator_client.get(reverse("results-run-failures", args=[found.pk]) + "?factor=untagged")
    assert 'data-request-id="t1:triplet:order1"' not in untagged.content.decode()
    assert curator_client.post(reverse("prediction-failure-tag", args=[second.pk]),
                               {"factor": "missing_knowledge"}).status_code == 302

    board = researcher_client.get(reverse("results-version", args=[found.version.pk])).content.decode()
    section = board.split('id="failure-factors"')[1].split("</section>")[0]
    row = section.split(f'<tr data-failure-run="{found.pk}">')[1].split("</tr>")[0]
    assert "<td data-tagged>2 / 2</td>" in row
    assert '<td data-factor="time">50.0% <span class="n">(1)</span></td>' in row
    assert '<td data-factor="missing_knowledge">50.0% <span class="n">(1)</span></td>' in row
    assert '<td data-factor="failed_comparison">0.0% <span class="n">(0)</span></td>' in row
    run_page = researcher_client.get(reverse("results-run", args=[found.pk])).content.decode()
    assert 'id="failure-analysis"' in run_page


def test_api_and_command_mirror_the_pages(run, curator, researcher):
    found, made = run
    first = made[("t1:triplet:order1", 0)]
    url = reverse("api-run-failure-tags", args=[found.pk])
    created = logged_in_api(curator).post(url, {"prediction": first.pk, "factor": "failed_comparison",
                                                "note": "argues well for the wrong one"}, format="json")
    assert created.status_code == 201 and created.json()["factor"] == "failed_comparison"
    assert logged_in_api(curator).post(url, {"factor": "time"}, format="json").status_code == 400
    right = made[("t1:triplet:order2", 0)]
    refused = logged_in_api(curator).post(url, {"prediction": right.pk, "factor": "time"}, format="json")
    assert refused.status_code == 400 and "not a wrong answer" in refused.json()["error"]
    listed = logged_in_api(researcher).get(url).json()
    assert (listed["wrong"], listed["tagged"]) == (2, 1)
    assert [p["factor"] for p in listed["predictions"]] == ["failed_comparison", None]

    call_command("failure_tags", "tag", "--run", str(found.pk), "--prediction",
                 str(made[("t2:triplet:order1", 0)].pk), "--factor", "time", "--user", researcher.username,
                 stdout=io.StringIO())
    printed = io.StringIO()
    call_command("failure_tags", "show", "--run", str(found.pk), stdout=printed)
    shown = json.loads(printed.getvalue())
    assert shown["tagged"] == 2 and {f["key"]: f["count"] for f in shown["factors"]}["time"] == 1
    with pytest.raises(CommandError, match="Unknown failure factor"):
        call_command("failure_tags", "tag", "--run", str(found.pk), "--prediction", str(first.pk), "--factor",
                     "nope", "--user", researcher.username)
