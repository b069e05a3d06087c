"""C-VQA evaluation requests: original and counterfactual question per image, typed gold answers."""

import pytest

from annotation import versions
from evaluation import benchmarks, prompting
from evaluation.benchmarks.base import RequestOptions
from evaluation.benchmarks.cvqa import benchmark as cvqa
from tests.conftest import cvqa_payload

SYNTHETIC = {
    "kind": "synthetic", "type": "abs_counting_4",
    "query": "How many dots are there in all the circles together? Select the correct answer:A:16  B:17  C:12  D:13",
    "answer": "C",
    "new_query": "How many dots would there be in all the circles together if 5 dots were removed from the circles? "
                 "Select the correct answer:A:7  B:11  C:3  D:9",
    "new_answer": "A",
}


def item(payload, external_id="q-1"):
    from annotation.models import BenchmarkItem

    return BenchmarkItem(external_id=external_id, payload=payload)


def build(benchmark_item, **options):
    return cvqa.BENCHMARK.requests(benchmark_item, RequestOptions(**options))


def test_registry_returns_the_cvqa_benchmark():
    assert benchmarks.get("cvqa") is cvqa.BENCHMARK
    assert cvqa.BENCHMARK.variants == ("original", "counterfactual")


@pytest.mark.django_db
def test_each_item_asks_both_questions_about_its_image(draft_version, image):
    saved = versions.add_item(draft_version, "q-001", cvqa_payload(), media={"image": image})
    original, counterfactual = build(saved)

    assert [original.request_id, counterfactual.request_id] == ["q-001:original", "q-001:counterfactual"]
    assert [original.variant, counterfactual.variant] == ["original", "counterfactual"]
    for request in (original, counterfactual):
        assert [(m.role, m.kind, m.asset_id) for m in request.media] == [("image", "image", image.pk)]
    assert original.extra["pair"] == "q-001:counterfactual" and counterfactual.extra["pair"] == "q-001:original"


def test_numerical_questions_have_integer_gold_and_the_authors_answer_instruction():
    original, counterfactual = build(item(cvqa_payload(answer="2", new_answer="one")))

    assert original.text == "How many cups are on the table?"
    assert original.prompt == "How many cups are on the table? Answer the question using a single word or phrase."
    assert (original.gold, counterfactual.gold) == (2, 1)
    assert {original.answer_type, counterfactual.answer_type} == {"number"}
    assert counterfactual.text == "How many cups are there if one is removed?"
    assert (original.extra["subset"], original.extra["type"], original.extra["group"]) == ("real", "direct", "direct")
    assert counterfactual.extra["source_answer"] == "one"


def test_boolean_questions_have_yes_no_gold():
    payload = cvqa_payload(answer="Yes", type="boolean", query="Is the cat asleep?",
                           new_query="Would the cat be asleep if it was woken up?", new_answer="false")
    original, counterfactual = build(item(payload))
    assert (original.gold, counterfactual.gold) == ("yes", "no")
    assert {original.answer_type, counterfactual.answer_type} == {"yes_no"}
    assert original.extra["group"] == "boolean"


@pytest.mark.parametrize("answer", ["many", "2.5", ""])
def test_a_numerical_answer_that_is_not_a_count_is_refused(answer):
    with pytest.raises(ValueError, match="not a number"):
        build(item(cvqa_payload(answer=answer)))


def test_synthetic_queries_are_asked_as_released_by_default():
    for seed in range(3):  # the run seed does not move the options
        original, counterfactual = build(item(SYNTHETIC), seed=seed)
        assert original.text == SYNTHETIC["query"] and counterfactual.text == SYNTHETIC["new_query"]
        assert original.prompt == SYNTHETIC["query"] + cvqa.ANSWER_INSTRUCTION
        assert original.options == {"A": "16", "B": "17", "C": "12", "D": "13"}  # for the answer parser
        assert (original.gold, counterfactual.gold) == ("C", "A")  # the released letters
        assert original.extra["option_strategy"] == "release" and original.extra["option_order"] == [0, 1, 2, 3]
        assert original.extra["option_seed"] is None


def test_synthetic_options_are_parsed_from_the_query_and_the_gold_letter_follows_its_option():
    original, counterfactual = build(item(SYNTHETIC), option_order="shuffled:3")

    assert original.answer_type == counterfactual.answer_type == "letter"
    assert original.extra["source_options"] == {"A": "16", "B": "17", "C": "12", "D": "13"}
    assert sorted(original.options.values(), key=int) == ["12", "13", "16", "17"]
    assert original.options[original.gold] == "12"
    assert counterfactual.options[counterfactual.gold] == "7"
    assert original.text.startswith("How many dots are there in all the circles together? Select the correct answer:")
    assert original.text.endswith("  ".join(f"{k}:{v}" for k, v in original.options.items()))
    assert original.extra["group"] == "dot_counting" and original.extra["template"] == 4
    assert original.extra["subset"] == "synthetic" and original.extra["option_strategy"] == "shuffled:3"


def test_synthetic_shuffle_is_reproducible_per_seed_and_request():
    first = build(item(SYNTHETIC), option_order="shuffled:11")
    again = build(item(SYNTHETIC), option_order="shuffled:11")
    assert [r.options for r in first] == [r.options for r in again]
    assert [r.gold for r in first] == [r.gold for r in again]

    orders = {tuple(build(item(SYNTHETIC), option_order=f"shuffled:{seed}")[0].extra["option_order"])
              for seed in range(20)}
    assert len(orders) > 1
    for seed in range(20):
        original = build(item(SYNTHETIC), option_order=f"shuffled:{seed}")[0]
        assert original.options[original.gold] == "12"
        assert [original.extra["source_options"]["ABCD"[i]] for i in original.extra["option_order"]] == \
            list(original.options.values())


def test_a_synthetic_query_without_four_options_is_refused():
    payload = dict(SYNTHETIC, query="How many dots are there? Select the correct answer:A:1  B:2")
    with pytest.raises(ValueError, match="Select the correct answer"):
        build(item(payload))


def test_chain_of_thought_appends_the_papers_cue():
    standard, _ = build(item(cvqa_payload()))
    cot, _ = build(item(cvqa_payload()), prompting="cot")
    assert cot.prompt == f"{standard.prompt}\n{prompting.COT_SUFFIX}"
    assert cot.prompt.endswith("Let's think step by step:")


def test_dscp_asks_for_context_first():
    original, _ = build(item(cvqa_payload()), prompting="dscp")
    assert original.context_prompt == prompting.DSCP_STEP1
    assert "two cups in a kitchen" in original.prompt_with_context("two cups in a kitchen")


@pytest.mark.parametrize("options, message", [
    ({"input_strategy": "combined"}, "no input strategy 'combined'"),
    ({"prompting": "plus_p"}, "does not use prompting 'plus_p'"),
])
def test_unknown_strategies_are_refused(options, message):
    with pytest.raises(ValueError, match=message):
        build(item(cvqa_payload()), **options)


def test_subgroup_is_passed_on_for_the_bias_analysis():
    original, counterfactual = build(item(cvqa_payload(subgroup="female")))
    assert original.extra["subgroup"] == counterfactual.extra["subgroup"] == "female"
