"""Chain-of-thought reasoning rate (BlackSwanSuite §7.2: "only 14/300 answers actually produced a reason at
all"): for requests asked with chain of thought, the share of responses that hold any reasoning before the
answer, reported with the run's predictions summary and on its results page."""

import pytest
from django.urls import reverse

from evaluation import named_parsers, reasoning, results, scoring
from evaluation.benchmarks.base import RequestOptions
from evaluation.benchmarks.blackswan import benchmark as blackswan
from evaluation.models import EvaluationRun, Prediction
from tests.benchmarks.blackswan.test_scoring import mcq, yes_no
from tests.conftest import cvqa_payload
from tests.eval_support import frozen_version


def cot_requests(prompting: str = "cot") -> list:
    options = RequestOptions(seed=3, prompting=prompting)
    return [request for item in (mcq("m1", ["no", "no", "no"]), yes_no("y1", "yes"))
            for request in blackswan.BENCHMARK.requests(item, options)]


def by_type(requests, answer_type: str):
    return next(request for request in requests if request.answer_type == answer_type)


@pytest.mark.parametrize(("answer_type", "text", "expected"), [
    ("letter", "A", False),
    ("letter", "A. He slips on the ice and falls.", False),  # the option restated is no reason
    ("letter", "The answer is option A.", False),
    ("letter", "At first he runs across the frozen yard, then his feet lose grip. So the answer is A.", True),
    ("letter", "A. He slips on the ice and falls, because the yard is frozen solid and slippery.", False),  # after
    ("letter", "I cannot tell what happens in these frames at all, sorry about that.", True),  # unparsed: all of it
    ("yes_no", "Yes.", False),
    ("yes_no", "The man is walking on a frozen pond in the first part and lies on the ice after. Yes", True),
])
def test_reasoning_is_counted_only_before_the_answer_and_beyond_the_options(answer_type, text, expected):
    request = by_type(cot_requests(), answer_type)
    parsed = named_parsers.reader(blackswan.BENCHMARK.slug, named_parsers.DEFAULT)(request, text)
    assert reasoning.has_reasoning(text, request, parsed) is expected


def test_cot_runs_report_the_share_of_responses_with_reasoning():
    requests = cot_requests()
    assert all(reasoning.is_cot(request) for request in requests)
    letter, yes = by_type(requests, "letter"), by_type(requests, "yes_no")
    reasoned = f"He runs onto the ice and his feet slide away under him. So {letter.gold}."
    predictions = [{"request_id": letter.request_id, "response": reasoned, "sample": 0},
                   {"request_id": letter.request_id, "response": letter.gold, "sample": 1},
                   {"request_id": yes.request_id, "response": "no", "sample": 0}]
    metrics = scoring.score_predictions(blackswan.BENCHMARK, requests, predictions, clip=None, judge=None)
    found = metrics["predictions"]["cot_reasoning"]
    assert (found["responses"], found["with_reasoning"], found["rate"]) == (3, 1, pytest.approx(1 / 3))
    assert found["by_variant"][letter.variant] == {"responses": 2, "with_reasoning": 1, "rate": 0.5}
    assert found["by_variant"][yes.variant]["with_reasoning"] == 0


def test_standard_runs_report_no_reasoning_rate():
    requests = cot_requests("standard")
    predictions = [{"request_id": request.request_id, "response": "A long answer with many words in it then A."}
                   for request in requests]
    metrics = scoring.score_predictions(blackswan.BENCHMARK, requests, predictions, clip=None, judge=None)
    assert "cot_reasoning" not in metrics["predictions"]


def test_the_results_page_of_a_cot_run_shows_its_reasoning_rate(researcher_client, db):
    version = frozen_version("cvqa", "cot-1", [("q1", cvqa_payload("2"), {})])
    run = EvaluationRun.objects.create(version=version, model_id="org/vlm", backend="openai", prompting="cot",
                                       status=EvaluationRun.Status.SUCCEEDED)
    item = version.items.get()
    answers = {"q1:original": "I count the cups on the table one by one from left to right: 2",
               "q1:counterfactual": "1"}
    for request_id, text in answers.items():
        Prediction.objects.create(run=run, request_id=request_id, item=item, variant=request_id.split(":")[1],
                                  prompt=[], raw_output=text)
    page = researcher_client.get(reverse("results-run", args=[run.pk])).content.decode()
    assert "Chain of thought" in page and "1 of 2 responses give any reasoning before the answer (50.0%)" in page
    # the run's own page says it too
    detail = researcher_client.get(reverse("run-detail", args=[run.pk])).content.decode()
    shown = detail.split('<dd id="run-cot-reasoning">')[1].split("</dd>")[0]
    assert shown == "1 of 2 responses give any reasoning before the answer (50.0%)"


def test_the_run_page_of_a_standard_or_unfinished_run_shows_no_reasoning_rate(researcher_client, db):
    version = frozen_version("cvqa", "cot-2", [("q1", cvqa_payload("2"), {})])
    standard = EvaluationRun.objects.create(version=version, model_id="org/vlm", backend="openai",
                                            prompting="standard", status=EvaluationRun.Status.SUCCEEDED)
    running = EvaluationRun.objects.create(version=version, model_id="org/vlm", backend="openai", prompting="cot",
                                           status=EvaluationRun.Status.RUNNING)
    for run in (standard, running):
        assert results.cot_reasoning(run) is None
        page = researcher_client.get(reverse("run-detail", args=[run.pk]))
        assert page.status_code == 200 and 'id="run-cot-reasoning"' not in page.content.decode()
