"""CVRR-ES scoring: judge verdicts per dimension, verdicts other than correct/incorrect left out of the
denominator, the mean over dimensions, missing answers, and judges that are not there."""

import pytest

from annotation.models import BenchmarkItem
from evaluation import scoring
from evaluation.benchmarks.base import RequestOptions
from evaluation.benchmarks.cvrr import benchmark as cvrr


def qa(external_id: str, dimension: str, **extra) -> BenchmarkItem:
    return BenchmarkItem(external_id=external_id, payload={
        "kind": "qa", "dimension": dimension, "video_id": external_id, "question": "Does the man open the door?",
        "answer": "No, he never touches it.", **extra})


def requests_of(*items) -> list:
    return [r for i in items for r in cvrr.BENCHMARK.requests(i, RequestOptions())]


def score(requests: list, predictions: list[dict], judge=None) -> dict:
    collected = scoring.collect(requests, predictions)
    return cvrr.BENCHMARK.score(requests, collected.responses, judge=judge)


def answer(external_id: str, pred, score_value=None) -> dict:
    judgment = {"pred": pred} if score_value is None else {"pred": pred, "score": score_value}
    return {"request_id": f"{external_id}:qa", "response": "He does not.", "judgment": judgment}


def test_accuracy_per_dimension_leaves_other_verdicts_out_of_the_denominator():
    requests = requests_of(qa("p1", "partial_actions"), qa("p2", "Partial actions"), qa("p3", "partial_actions"),
                           qa("p4", "partial_actions"), qa("t1", "time_order_understanding"),
                           qa("t2", "time_order_understanding"))
    metrics = score(requests, [
        answer("p1", "correct", 5), answer("p2", "Incorrect", 1), answer("p3", "partially correct", 3),
        answer("p4", " CORRECT ", "4"),
        answer("t1", "incorrect", 0),  # t2 is missing: unjudged, counted, never averaged in
    ])
    partial = metrics["dimensions"]["partial_actions"]
    assert partial["accuracy"] == 2 / 3  # p1, p4 of p1, p2, p4; p3 is left out
    assert (partial["judged"], partial["other_verdicts"], partial["n"]) == (3, 1, 4)
    assert partial["mean_score"] == (5 + 1 + 3 + 4) / 4
    time_order = metrics["dimensions"]["time_order_understanding"]
    assert time_order["accuracy"] == 0.0 and time_order["missing"] == 1 and time_order["judged"] == 1
    assert time_order["unjudged"] == 1 and time_order["scored"] == 1
    assert time_order["mean_score"] == 0.0  # t1's own score of 0; t2 is not averaged in

    assert metrics["accuracy"] == pytest.approx((2 / 3 + 0.0) / 2)  # mean of the dimension accuracies
    assert metrics["mean_score"] == pytest.approx((13 / 4 + 0.0) / 2)
    assert metrics["pooled_accuracy"] == 2 / 4 and metrics["other_verdicts"] == 1
    assert set(metrics["dimensions"]) == {"partial_actions", "time_order_understanding"}  # release folder names


def test_a_verdict_without_a_valid_score_keeps_its_verdict_and_is_counted():
    requests = requests_of(qa("p1", "partial_actions"), qa("p2", "partial_actions"))
    metrics = score(requests, [answer("p1", "correct"), answer("p2", "incorrect", 9)])
    partial = metrics["dimensions"]["partial_actions"]
    assert partial["accuracy"] == 0.5 and partial["invalid_scores"] == 2 and partial["scored"] == 0
    assert partial["mean_score"]["computed"] is False  # no valid score: not computed, never 0
    assert "2 verdicts without one" in partial["mean_score"]["reason"]
    assert metrics["mean_score"]["computed"] is False


def test_without_judgments_or_a_judge_accuracy_is_not_computed():
    requests = requests_of(qa("p1", "partial_actions"), qa("p2", "partial_actions"))
    metrics = score(requests, [{"request_id": "p1:qa", "response": "He does not."}])
    assert metrics["accuracy"]["computed"] is False
    assert metrics["mean_score"]["computed"] is False
    assert metrics["dimensions"]["partial_actions"]["missing"] == 1
    assert "1 of 1 answered responses" in metrics["accuracy"]["reason"]


def test_a_judge_callable_is_asked_for_each_answer_without_a_verdict():
    requests = requests_of(qa("p1", "partial_actions"), qa("p2", "partial_actions"))

    def judge(request, response):
        return {"pred": "correct" if "not" in response else "incorrect", "score": 4}

    metrics = score(requests, [{"request_id": "p1:qa", "response": "He does not."},
                               {"request_id": "p2:qa", "response": "He opens it."}], judge=judge)
    assert metrics["dimensions"]["partial_actions"]["accuracy"] == 0.5
    assert metrics["mean_score"] == 4.0


def test_question_kinds_are_broken_down_when_items_record_them():
    requests = requests_of(qa("p1", "partial_actions", question_kind="robustness"),
                           qa("p2", "partial_actions", question_kind="reasoning"))
    metrics = score(requests, [answer("p1", "correct", 5), answer("p2", "incorrect", 2)])
    assert metrics["by_question_kind"]["robustness"]["accuracy"] == 1.0
    assert metrics["by_question_kind"]["reasoning"]["accuracy"] == 0.0


def test_missing_answers_are_counted_not_averaged_in_as_zero():
    requests = requests_of(qa("p1", "partial_actions"), qa("p2", "partial_actions"),
                           qa("t1", "time_order_understanding"))
    metrics = score(requests, [answer("p1", "correct", 4)])  # p2 and t1 are missing
    partial = metrics["dimensions"]["partial_actions"]
    assert partial["accuracy"] == 1.0 and partial["mean_score"] == 4.0  # not (4 + 0) / 2
    assert (partial["missing"], partial["unjudged"], partial["judged"]) == (1, 1, 1)
    time_order = metrics["dimensions"]["time_order_understanding"]
    assert time_order["accuracy"]["computed"] is False and time_order["mean_score"]["computed"] is False
    assert "1 missing answers" in time_order["accuracy"]["reason"]
    assert metrics["accuracy"] == 1.0 and metrics["mean_score"] == 4.0  # over the dimensions computed


def test_only_other_verdicts_leave_accuracy_not_computed_with_their_count():
    requests = requests_of(qa("p1", "partial_actions"), qa("p2", "partial_actions"))
    metrics = score(requests, [answer("p1", "partially correct", 2), answer("p2", "unsure")])
    partial = metrics["dimensions"]["partial_actions"]
    assert partial["accuracy"] == {"computed": False,
                                   "reason": "no valid verdict (2 other verdicts, 0 missing answers)"}
    assert partial["mean_score"] == 2.0 and partial["other_verdicts"] == 2
    assert metrics["accuracy"]["computed"] is False and metrics["pooled_accuracy"]["computed"] is False
