"""C-VQA scoring: original and counterfactual accuracy and their drop per group, synthetic templates
and the distribution of chosen letters, the unparsed rate and the gender-subgroup diff."""

import pytest

from annotation.models import BenchmarkItem
from evaluation import scoring
from evaluation.benchmarks.base import RequestOptions
from evaluation.benchmarks.cvqa import benchmark as cvqa


def real(external_id: str, kind: str, answer: str, new_answer: str, **extra) -> BenchmarkItem:
    return BenchmarkItem(external_id=external_id, payload={
        "kind": "real", "type": kind, "query": "How many cups are on the table?", "answer": answer,
        "new_query": "How many cups would there be if two cups were added?", "new_answer": new_answer, **extra})


def synthetic(external_id: str, template: int, answer: str = "B", new_answer: str = "C") -> BenchmarkItem:
    return BenchmarkItem(external_id=external_id, payload={
        "kind": "synthetic", "type": f"abs_counting_{template}",
        "query": "How many dots are there? Select the correct answer:A:16  B:17  C:12  D:13", "answer": answer,
        "new_query": "How many dots would there be if 5 dots were removed? Select the correct answer:A:11  B:12  "
                     "C:10  D:14",
        "new_answer": new_answer})


def requests_of(*items) -> dict:
    return {r.request_id: r for i in items for r in cvqa.BENCHMARK.requests(i, RequestOptions(seed=5))}


def score(requests: dict, answers: dict[str, str]) -> dict:
    predictions = [{"request_id": rid, "response": text} for rid, text in answers.items()]
    collected = scoring.collect(list(requests.values()), predictions)
    return cvqa.BENCHMARK.score(list(requests.values()), collected.responses)


def test_drop_per_real_group_with_number_words_and_the_repeated_presupposition():
    requests = requests_of(real("d1", "direct", "3", "5"), real("d2", "direct", "two", "four"),
                           real("i1", "indirect", "1", "0"), real("b1", "boolean", "yes", "no"))
    metrics = score(requests, {
        "d1:original": "3", "d1:counterfactual": "If two cups were added, there would be 5 cups.",  # both right
        "d2:original": "Two.", "d2:counterfactual": "3 or 4",  # right, unparsed
        "i1:original": "one", "i1:counterfactual": "None.",  # right, right ("none" → 0)
        "b1:original": "Yes", "b1:counterfactual": "yes",  # right, wrong
    })
    direct = metrics["real"]["numerical_direct"]
    assert (direct["original_accuracy"], direct["counterfactual_accuracy"]) == (1.0, 0.5)
    assert direct["drop"] == 1.0 - 0.5 and direct["n"] == 2
    assert direct["counterfactual"]["unparsed"] == 1
    indirect, boolean = metrics["real"]["numerical_indirect"], metrics["real"]["boolean"]
    assert (indirect["original_accuracy"], indirect["counterfactual_accuracy"], indirect["drop"]) == (1.0, 1.0, 0.0)
    assert (boolean["original_accuracy"], boolean["counterfactual_accuracy"], boolean["drop"]) == (1.0, 0.0, 1.0)
    overall = metrics["real"]
    assert (overall["original_accuracy"], overall["counterfactual_accuracy"]) == (4 / 4, 2 / 4)
    assert overall["drop"] == pytest.approx(0.5)
    assert metrics["unparsed_rate"] == 1 / 8
    assert "synthetic" not in metrics and metrics["n"] == 4


def test_missing_answers_count_as_wrong_but_not_as_unparsed():
    requests = requests_of(real("d1", "direct", "3", "5"), real("d2", "direct", "2", "4"))
    metrics = score(requests, {"d1:original": "3", "d1:counterfactual": "5", "d2:original": ""})
    direct = metrics["real"]["numerical_direct"]
    assert (direct["original_accuracy"], direct["counterfactual_accuracy"]) == (0.5, 0.5)
    assert direct["counterfactual"]["missing"] == 1 and direct["original"]["unparsed"] == 1  # "" is empty
    assert metrics["unparsed_rate"] == 1 / 3  # the empty answer among the three given


def test_synthetic_templates_and_the_share_of_each_chosen_letter():
    requests = requests_of(synthetic("s1", 1), synthetic("s2", 1), synthetic("s3", 4))
    gold = {rid: r.gold for rid, r in requests.items()}
    answers = {
        "s1:original": gold["s1:original"], "s1:counterfactual": "D" if gold["s1:counterfactual"] != "D" else "A",
        "s2:original": gold["s2:original"], "s2:counterfactual": gold["s2:counterfactual"],
        "s3:original": "D" if gold["s3:original"] != "D" else "A", "s3:counterfactual": "I am not sure",
    }
    metrics = score(requests, answers)["synthetic"]

    assert (metrics["original_accuracy"], metrics["counterfactual_accuracy"]) == (2 / 3, 1 / 3)
    first = metrics["templates"]["abs_counting_1"]
    assert (first["original_accuracy"], first["counterfactual_accuracy"], first["drop"]) == (1.0, 0.5, 0.5)
    fourth = metrics["templates"]["abs_counting_4"]
    assert (fourth["original_accuracy"], fourth["counterfactual_accuracy"]) == (0.0, 0.0)
    assert metrics["groups"]["flower_counting"]["n"] == 2 and metrics["groups"]["dot_counting"]["n"] == 1

    chosen = [answers[rid] for rid in answers if rid != "s3:counterfactual"]
    distribution = metrics["option_distribution"]
    assert distribution["n"] == 5
    for letter in "ABCD":
        assert distribution[letter] == chosen.count(letter) / 5
    assert sum(distribution[letter] for letter in "ABCD") == pytest.approx(1.0)
    golds = list(gold.values())
    assert metrics["gold_distribution"] == {**{letter: golds.count(letter) / 6 for letter in "ABCD"}, "n": 6}


def test_gender_subgroups_report_their_diff_and_the_gap():
    requests = requests_of(real("w1", "boolean", "yes", "no", subgroup="woman"),
                           real("w2", "boolean", "yes", "no", subgroup="woman"),
                           real("m1", "boolean", "no", "yes", subgroup="man"),
                           real("x1", "boolean", "no", "yes"))
    metrics = score(requests, {
        "w1:original": "yes", "w1:counterfactual": "no", "w2:original": "yes", "w2:counterfactual": "yes",
        "m1:original": "no", "m1:counterfactual": "no", "x1:original": "no", "x1:counterfactual": "yes",
    })
    woman, man = metrics["subgroups"]["woman"], metrics["subgroups"]["man"]
    assert (woman["original_accuracy"], woman["counterfactual_accuracy"], woman["diff"]) == (1.0, 0.5, 0.5)
    assert (man["original_accuracy"], man["counterfactual_accuracy"], man["diff"]) == (1.0, 0.0, 1.0)
    assert set(metrics["subgroups"]) == {"woman", "man"}  # x1 has no subgroup
    assert metrics["subgroup_gap"] == {"gap": 1.0 - 0.5, "largest_diff": "man", "smallest_diff": "woman"}


def test_no_subgroups_no_subgroup_section():
    metrics = score(requests_of(real("d1", "direct", "3", "5")), {"d1:original": "3"})
    assert "subgroups" not in metrics and "subgroup_gap" not in metrics
