"""Judge validation in the browser: a researcher draws a seeded sample of a run's judged answers from
its results page, people rate the sampled answers blind (each once), and the pages show Fleiss' kappa
(judge and people, people only), the numbers of answers and raters and the pairwise agreement."""

import pytest
from django.urls import reverse

from config.roles import ANNOTATOR, CURATOR, RESEARCHER
from evaluation import validation_samples
from evaluation.models import EvaluationRun, Prediction, ValidationRating, ValidationSample
from tests.conftest import logged_in_client, make_user
from tests.evaluation.test_judge_validation import H1, H2, maia_run

pytestmark = pytest.mark.django_db


def _label(value) -> str:
    return value if isinstance(value, str) else ("correct" if value else "incorrect")


@pytest.fixture
def run_and_people(researcher):
    run, predictions = maia_run("jvp-1")
    EvaluationRun.objects.filter(pk=run.pk).update(input_strategy="default")
    run.refresh_from_db()
    return run, predictions, make_user("h1", CURATOR), make_user("h2", RESEARCHER)


def _rate(client, sample, predictions, given) -> None:
    items = {item.prediction_id: item.pk for item in sample.items.all()}
    for key, value in given.items():
        if key in predictions and predictions[key].pk in items:
            response = client.post(reverse("judge-validation-rate", args=[sample.pk]),
                                   {"item": items[predictions[key].pk], "label": _label(value)})
            assert response.status_code == 302


def test_researcher_draws_a_sample_people_rate_it_and_the_results_page_shows_kappa(researcher, run_and_people):
    run, predictions, h1, h2 = run_and_people
    client = logged_in_client(researcher)
    results = client.get(reverse("results-run", args=[run.pk])).content.decode()
    assert "data-validation-form" in results and "judge-test" in results
    response = client.post(reverse("results-run-judge-validation", args=[run.pk]),
                           {"size": "10", "seed": "3", "judge_model": "judge-test"})
    sample = ValidationSample.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse("judge-validation-sample",
                                                                           args=[sample.pk])
    # the answers with a readable verdict: a to d (e's verdict did not parse)
    assert sorted(item.prediction.request_id for item in sample.items.all()) == ["a", "b", "c", "d"]
    waiting = client.get(reverse("judge-validation-sample", args=[sample.pk])).content.decode()
    assert "2 raters are needed; 0 rated so far." in waiting

    first, second = logged_in_client(h1), logged_in_client(h2)
    rate_url = reverse("judge-validation-rate", args=[sample.pk])
    page = first.get(rate_url).content.decode()
    assert page.count('name="item"') == 4 and "answer a" in page
    assert "judge-test" not in page and "data-own-verdict" not in page  # blind to the judge
    _rate(first, sample, predictions, H1)
    assert first.get(rate_url).content.decode().count("data-own-verdict") == 4
    assert "data-own-verdict" not in second.get(rate_url).content.decode()  # not another rater's verdicts
    again = first.post(rate_url, {"item": sample.items.first().pk, "label": "incorrect"})
    assert again.status_code == 409 and "each rater rates each answer once" in again.content.decode()
    assert ValidationRating.objects.filter(rater=h1).count() == 4
    _rate(second, sample, predictions, H2)
    listing = second.get(reverse("judge-validation-samples")).content.decode()
    assert f'data-sample="{sample.pk}"' in listing and "<td data-rated>4</td>" in listing

    page = client.get(reverse("results-run", args=[run.pk])).content.decode()
    # hand computed in tests/evaluation/test_judge_validation.py: judge, h1, h2 on a..d → Fleiss' kappa 1/3;
    # h1 and h2 alone: (2,0) (1,1) (0,2) (1,1) → P̄ = 1/2, p(correct) = 4/8 → P_e = 1/2 → kappa 0;
    # h1–h2 agree on 2 of 4 answers, Cohen's kappa 1/5
    assert '<dd data-kappa="all">0.333</dd>' in page
    assert '<dd data-kappa="people">0.000</dd>' in page
    assert "<dd data-shared>4</dd>" in page
    assert "4 sampled answers (seed 3) · 2 raters: h1 (4 rated), h2 (4 rated)" in page
    assert "h1 · h2</td><td>4</td>\n        <td>50.0%</td>\n        <td>0.200</td>" in page
    report = validation_samples.sample_report(sample)
    assert report.report.fleiss_kappa == pytest.approx(1 / 3) and report.humans_kappa == pytest.approx(0)
    assert '<dd data-kappa="all">0.333</dd>' in client.get(
        reverse("judge-validation-sample", args=[sample.pk])).content.decode()


def test_the_same_seed_draws_the_same_answers(researcher, run_and_people):
    run = run_and_people[0]
    drawn = [validation_samples.create_sample(researcher, run, size=2, seed=seed, judge_model="judge-test")
             for seed in (5, 5)]
    ids = [[item.prediction_id for item in sample.items.all()] for sample in drawn]
    assert ids[0] == ids[1] and len(ids[0]) == 2


@pytest.mark.parametrize(("post", "status", "message"), [
    ({"size": "0", "seed": "1"}, 400, "sample size is from 1 to 1000"),
    ({"size": "ten", "seed": "1"}, 400, "sample size is a whole number"),
    ({"size": "5", "seed": "-1"}, 400, "seed is from 0"),
    ({"size": "5", "seed": "1", "judge_model": "other-judge"}, 409, "no maia verdicts of other-judge"),
])
def test_a_bad_sample_request_is_refused_with_the_reason(researcher, run_and_people, post, status, message):
    run = run_and_people[0]
    response = logged_in_client(researcher).post(reverse("results-run-judge-validation", args=[run.pk]), post)
    assert response.status_code == status and message in response.content.decode()
    assert not ValidationSample.objects.exists()


def test_a_run_without_judgments_has_no_sample(researcher, run_and_people):
    run = run_and_people[0]
    bare = EvaluationRun.objects.create(version=run.version, model_id="org/other", backend="openai",
                                        variants=["oeqa"], input_strategy="text_only")
    response = logged_in_client(researcher).post(reverse("results-run-judge-validation", args=[bare.pk]),
                                                 {"size": "5", "seed": "0"})
    assert response.status_code == 409 and "run the judge first" in response.content.decode()


def test_ratings_need_a_known_label_an_item_of_the_sample_and_a_verdict_giver(researcher, run_and_people):
    run, _, h1, _ = run_and_people
    sample = validation_samples.create_sample(researcher, run, size=4, seed=0)
    client = logged_in_client(h1)
    url = reverse("judge-validation-rate", args=[sample.pk])
    item = sample.items.first().pk
    bad = client.post(url, {"item": item, "label": "maybe"})
    assert bad.status_code == 400 and "one of correct, incorrect" in bad.content.decode()
    assert client.post(url, {"item": 987654, "label": "correct"}).status_code == 404
    annotator = logged_in_client(make_user("ann2", ANNOTATOR))
    assert annotator.post(url, {"item": item, "label": "correct"}).status_code == 403
    assert not ValidationRating.objects.exists()


def test_a_rater_sees_the_question_and_the_references(researcher, run_and_people):
    run, predictions, h1, _ = run_and_people
    EvaluationRun.objects.filter(pk=run.pk).update(variants=["oevqa"])
    Prediction.objects.filter(pk=predictions["a"].pk).update(request_id="q1:oevqa")
    sample = validation_samples.create_sample(researcher, run, size=10, seed=0, judge_model="judge-test")
    Prediction.objects.exclude(pk=predictions["a"].pk).delete()  # the sample keeps answer a alone
    assert sample.items.get().prediction_id == predictions["a"].pk
    page = logged_in_client(h1).get(reverse("judge-validation-rate", args=[sample.pk])).content.decode()
    assert "Che cosa fa?" in page and "Taglia pomodori 0." in page and "answer a" in page
