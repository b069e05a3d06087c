"""NL-EYE scoring: consistency accuracy over both hypothesis orders, order-faithful pairs accuracy with
ties and rank statistics, judged explanations, and the breakdowns by category and time direction."""

import pytest

from annotation.models import BenchmarkItem
from evaluation import scoring
from evaluation.benchmarks.base import RequestOptions
from evaluation.benchmarks.nleye import benchmark as nleye


def triplet(external_id: str, label: int = 1, category: str = "Physical", direction: str = "forward"):
    return BenchmarkItem(external_id=external_id, payload={
        "kind": "triplet", "premise": "A boy holds a bat.", "hypothesis1": "He hits a ball.",
        "hypothesis2": "He reads a book.", "label": label, "reasoning_category": category,
        "time_direction": direction, "time_duration": "short"})


def requests_of(*items) -> dict:
    return {r.request_id: r for i in items for r in nleye.BENCHMARK.requests(i, RequestOptions())}


def score(requests: dict, answers: dict, judge=None) -> dict:
    predictions = [{"request_id": rid, **(value if isinstance(value, dict) else {"response": value})}
                   for rid, value in answers.items()]
    collected = scoring.collect(list(requests.values()), predictions)
    return nleye.BENCHMARK.score(list(requests.values()), collected.responses, judge=judge)


def test_consistency_needs_the_gold_hypothesis_in_both_orders():
    # order1 shows the gold hypothesis first (answer 1 is right), order2 second (answer 2 is right)
    requests = requests_of(triplet("t1"), triplet("t2", label=2), triplet("t3"), triplet("t4"))
    triplets = score(requests, {
        "t1:triplet:order1": "Hypothesis 1 is more plausible.", "t1:triplet:order2": "2",  # consistent
        "t2:triplet:order1": "1", "t2:triplet:order2": "1",  # always the first: right only in order1
        "t3:triplet:order1": "1 or 2", "t3:triplet:order2": "2",  # unparsed order1
        "t4:triplet:order1": "1",  # order2 missing
    })["triplet"]

    assert triplets["consistency_accuracy"] == 1 / 4 and triplets["n"] == 4
    assert triplets["order1_accuracy"] == 3 / 4  # t1, t2, t4
    assert triplets["order2_accuracy"] == 2 / 4  # t1, t3
    assert triplets["order1"]["unparsed"] == 1 and triplets["order2"]["missing"] == 1
    assert triplets["unparsed_rate"] == 1 / 7


def test_order_faithful_accuracy_counts_ties_as_wrong_and_reports_rank_statistics():
    requests = requests_of(triplet("t1"), triplet("t2", label=2), triplet("t3"), triplet("t4"), triplet("t5"))
    pairs = score(requests, {
        "t1:pairs:h1": "Score: 8", "t1:pairs:h2": "3",  # gold 8 > 3: right, diff 5
        "t2:pairs:h1": "6", "t2:pairs:h2": "7/10",  # gold is h2: 7 > 6: right, diff 1
        "t3:pairs:h1": "5", "t3:pairs:h2": "5",  # tie: wrong, diff 0
        "t4:pairs:h1": "2", "t4:pairs:h2": "9",  # gold 2 < 9: wrong, diff 7
        "t5:pairs:h1": "very plausible", "t5:pairs:h2": "4",  # unparsed: wrong, not ranked
    })["pairs"]

    assert pairs["order_faithful_accuracy"] == 2 / 5 and pairs["n"] == 5
    assert pairs["ranked"] == 4 and pairs["unparsed"] == 1
    assert pairs["equal_rank_rate"] == 1 / 4
    assert pairs["mean_rank_diff"] == (5 + 1 + 0 + 7) / 4
    assert pairs["correct_rank_diff"] == (5 + 1) / 2
    assert pairs["incorrect_rank_diff"] == (0 + 7) / 2
    assert pairs["correct_hypothesis_mean_score"] == (8 + 7 + 5 + 2) / 4
    assert pairs["incorrect_hypothesis_mean_score"] == (3 + 6 + 5 + 9) / 4


def test_explanations_of_correct_predictions_are_valid_when_judged_2():
    requests = requests_of(triplet("t1"), triplet("t2"), triplet("t3"))
    triplets = score(requests, {
        "t1:triplet:order1": {"response": "1. The bat hit the ball.", "judgment": {"label": 2}},
        "t1:triplet:order2": {"response": "2. He swung.", "judgment": {"label": 1}},
        "t2:triplet:order1": {"response": "1. Bats hit balls.", "judgment": {"label": 0}},
        "t2:triplet:order2": {"response": "1. Wrong, so never judged."},  # wrong: its explanation is not asked
        "t3:triplet:order1": {"response": "Hypothesis 1 is more plausible.", "judgment": {"label": 2}},
    })["triplet"]

    explanations = triplets["explanations"]
    assert explanations["labels"] == {"0": 1, "1": 1, "2": 2}
    assert explanations["valid_rate"] == 2 / 4 and explanations["n"] == 4


def test_explanations_without_judgments_are_not_computed_and_a_judge_can_supply_them():
    requests = requests_of(triplet("t1"))
    answers = {"t1:triplet:order1": "1. Because of the bat.", "t1:triplet:order2": "2. Because of the bat."}
    assert score(requests, answers)["triplet"]["explanations"]["computed"] is False

    seen = []

    def judge(request, response):
        seen.append(request.request_id)
        return {"label": 2 if request.extra["order"] == 1 else 1}

    explanations = score(requests, answers, judge=judge)["triplet"]["explanations"]
    assert sorted(seen) == ["t1:triplet:order1", "t1:triplet:order2"]
    assert explanations["valid_rate"] == 0.5


def test_breakdowns_by_reasoning_category_and_time_direction_use_lower_case_keys():
    requests = requests_of(triplet("t1", category="Physical", direction="forward"),
                           triplet("t2", category="Social", direction="Backward"),
                           triplet("t3", category="physical", direction="forward"))
    metrics = score(requests, {
        "t1:triplet:order1": "1", "t1:triplet:order2": "2",
        "t2:triplet:order1": "1", "t2:triplet:order2": "2",
        "t3:triplet:order1": "2", "t3:triplet:order2": "2",
        "t1:pairs:h1": "9", "t1:pairs:h2": "2",
    })

    assert set(metrics["by_category"]) == {"physical", "social"}
    physical = metrics["by_category"]["physical"]
    assert physical["triplet"]["consistency_accuracy"] == 1 / 2 and physical["n"] == 2
    assert physical["pairs"]["order_faithful_accuracy"] == 1 / 2
    assert metrics["by_category"]["social"]["triplet"]["consistency_accuracy"] == 1.0
    assert metrics["by_time_direction"]["backward"]["triplet"]["consistency_accuracy"] == 1.0
    assert metrics["by_time_direction"]["forward"]["triplet"]["consistency_accuracy"] == 1 / 2
    assert set(metrics["by_time_duration"]) == {"short"}
    assert "explanations" not in physical["triplet"]
    assert metrics["triplet"]["consistency_accuracy"] == pytest.approx(2 / 3)


def test_explanations_with_no_valid_judgment_are_not_computed_with_the_invalid_count():
    requests = requests_of(triplet("t1"))
    triplets = score(requests, {"t1:triplet:order1": {"response": "1. Bat.", "judgment": {"label": "great"}},
                                "t1:triplet:order2": {"response": "2. Bat.", "judgment": {"label": 7}}})["triplet"]
    explanations = triplets["explanations"]
    assert explanations["valid_rate"] == {"computed": False, "reason": "no valid judgment (2 invalid)"}
    assert explanations["invalid_judgments"] == 2 and explanations["n"] == 0
