"""NL-EYE evaluation requests: triplets in both hypothesis orders, pairs, and the four input strategies."""

from collections import Counter

import pytest

from annotation import versions
from annotation.models import Benchmark, BenchmarkItem, BenchmarkVersion
from evaluation import benchmarks, prompting
from evaluation.benchmarks.base import RequestOptions
from evaluation.benchmarks.nleye import benchmark as nleye
from tests.conftest import ingest_path

PREMISE = "A boy stands next to a broken window holding a baseball bat."
PLAUSIBLE = "A boy swings a bat at a ball in the yard."
IMPLAUSIBLE = "A boy reads a book quietly in his room."


def triplet(label=2, external_id="nl-7", **overrides) -> BenchmarkItem:
    """The plausible scene under `hypothesis<label>`."""
    hypotheses = (PLAUSIBLE, IMPLAUSIBLE) if label == 1 else (IMPLAUSIBLE, PLAUSIBLE)
    payload = {"kind": "triplet", "premise": PREMISE, "hypothesis1": hypotheses[0], "hypothesis2": hypotheses[1],
               "label": label, "explanation": "Swinging the bat broke the window.",
               "reasoning_category": "physical", "domain": "daily life & hospitality",
               "time_direction": "backward", "time_duration": "short"}
    payload.update(overrides)
    return BenchmarkItem(external_id=external_id, payload=payload)


def build(item, **options) -> dict:
    return {r.request_id.split(":", 1)[1]: r for r in nleye.BENCHMARK.requests(item, RequestOptions(**options))}


@pytest.fixture
def saved_triplet(db, curator, astronaut, coffee, skimage_data):
    version = BenchmarkVersion.objects.create(benchmark=Benchmark.objects.get(slug="nleye"), label="nl-1",
                                              created_by=curator)
    images = {role: ingest_path(path, user=curator, probe=False)
              for role, path in zip(nleye.ROLES, (astronaut, coffee, skimage_data / "chelsea.png"), strict=True)}
    item = versions.add_item(version, "nl-7", triplet().payload, media=images)
    return item, {role: image.pk for role, image in images.items()}


def test_registry_returns_the_nleye_benchmark():
    assert benchmarks.get("nleye") is nleye.BENCHMARK
    assert nleye.BENCHMARK.variants == ("triplet", "pairs")


def test_two_triplet_orders_and_two_pairs_per_item():
    requests = nleye.BENCHMARK.requests(triplet(), RequestOptions())
    assert [r.request_id for r in requests] == ["nl-7:triplet:order1", "nl-7:triplet:order2", "nl-7:pairs:h1",
                                                "nl-7:pairs:h2"]
    assert Counter(r.variant for r in requests) == {"triplet": 2, "pairs": 2}
    assert {r.item_id for r in requests} == {"nl-7"}


@pytest.mark.parametrize("label", [1, 2])
def test_order1_shows_the_gold_hypothesis_first_and_order2_second(label):
    requests = build(triplet(label))
    gold_role, other_role = f"hypothesis{label}", f"hypothesis{3 - label}"
    order1, order2 = requests["triplet:order1"], requests["triplet:order2"]

    assert (order1.gold, order2.gold) == (1, 2)
    assert order1.extra["shown"] == ["premise", gold_role, other_role]
    assert order2.extra["shown"] == ["premise", other_role, gold_role]
    assert [m.role for m in order1.media] == order1.extra["shown"]
    assert [m.role for m in order2.media] == order2.extra["shown"]
    assert {order1.extra["gold_source"], order2.extra["gold_source"]} == {gold_role}
    assert (order1.extra["order"], order2.extra["order"]) == (1, 2)
    assert {order1.answer_type, order2.answer_type} == {"choice_12"}
    assert order1.text.splitlines()[1] == f"Hypothesis 1: {PLAUSIBLE}"
    assert order2.text.splitlines()[1] == f"Hypothesis 1: {IMPLAUSIBLE}"


def test_pairs_score_each_hypothesis_against_the_premise():
    requests = build(triplet(label=2))
    h1, h2 = requests["pairs:h1"], requests["pairs:h2"]

    assert {h1.answer_type, h2.answer_type} == {"score_1_10"}
    assert h1.gold == h2.gold == 2
    assert (h1.extra["hypothesis"], h1.extra["is_gold"], h2.extra["is_gold"]) == (1, False, True)
    assert (h1.extra["pair"], h2.extra["pair"]) == ("nl-7:pairs:h2", "nl-7:pairs:h1")
    assert [m.role for m in h2.media] == ["premise", "hypothesis2"]
    assert "score between 1 and 10" in h1.prompt


def test_separate_images_use_the_items_images_premise_first(saved_triplet):
    item, asset_ids = saved_triplet
    requests = build(item, input_strategy="separate")
    order2 = requests["triplet:order2"]  # the gold hypothesis2 shown second

    assert [(m.role, m.kind, m.asset_id) for m in order2.media] == [
        ("premise", "image", asset_ids["premise"]), ("hypothesis1", "image", asset_ids["hypothesis1"]),
        ("hypothesis2", "image", asset_ids["hypothesis2"])]
    assert order2.prompt == nleye.SEPARATE_TRIPLET
    assert requests["pairs:h1"].prompt == nleye.SEPARATE_PAIRS
    assert not any(r.extra["canvas"] for r in requests.values())


def test_the_default_input_strategy_is_separate_images():
    assert build(triplet())["triplet:order1"].extra["input_strategy"] == "separate"


def test_combined_image_labels_the_inputs_and_asks_for_a_canvas(saved_triplet):
    item, asset_ids = saved_triplet
    requests = build(item, input_strategy="combined")
    order1, pair = requests["triplet:order1"], requests["pairs:h1"]

    assert [(m.role, m.label, m.asset_id) for m in order1.media] == [
        ("premise", "Premise", asset_ids["premise"]), ("hypothesis2", "Hypothesis 1", asset_ids["hypothesis2"]),
        ("hypothesis1", "Hypothesis 2", asset_ids["hypothesis1"])]
    assert all(r.extra["canvas"] for r in requests.values())
    assert "left image" in order1.prompt
    assert pair.prompt.startswith("The first (left) image is the context image.")
    assert [m.label for m in pair.media] == ["Premise", "Hypothesis"]


def test_text_only_puts_the_scene_descriptions_in_the_prompt_and_sends_no_media():
    requests = build(triplet(label=1), input_strategy="text_only")
    order2, pair = requests["triplet:order2"], requests["pairs:h2"]

    assert all(r.media == [] for r in requests.values())
    assert f"Context: {PREMISE}\nHypothesis 1: {IMPLAUSIBLE}\nHypothesis 2: {PLAUSIBLE}" in order2.prompt
    assert order2.prompt.startswith("Given a context, hypothesis1, and hypothesis2")
    assert f"Context: {PREMISE}\nHypothesis: {IMPLAUSIBLE}" in pair.prompt
    assert order2.describe_prompt == ""


def test_image_to_text_captions_each_image_and_fills_slots_in_the_shown_order(saved_triplet):
    item, asset_ids = saved_triplet
    requests = build(item, input_strategy="image_to_text")
    order1 = requests["triplet:order1"]

    assert order1.describe_prompt == "Describe the content of the image in detail."
    assert [(m.role, m.asset_id) for m in order1.media] == [
        ("premise", asset_ids["premise"]), ("hypothesis2", asset_ids["hypothesis2"]),
        ("hypothesis1", asset_ids["hypothesis1"])]
    assert ("Context: {caption:premise}\nHypothesis 1: {caption:hypothesis2}\n"
            "Hypothesis 2: {caption:hypothesis1}") in order1.prompt
    assert "Hypothesis: {caption:hypothesis1}" in requests["pairs:h1"].prompt
    assert PLAUSIBLE not in order1.prompt


def test_category_fields_and_explanation_go_to_the_scorers():
    order1 = build(triplet())["triplet:order1"]
    assert order1.extra["reasoning_category"] == "physical"
    assert (order1.extra["time_direction"], order1.extra["time_duration"]) == ("backward", "short")
    assert order1.extra["explanation"] == "Swinging the bat broke the window."
    assert order1.source["premise"] == PREMISE


def test_chain_of_thought_and_dscp_go_through_the_shared_prompting():
    standard = build(triplet())["triplet:order1"]
    cot = build(triplet(), prompting="cot")["triplet:order1"]
    dscp = build(triplet(), prompting="dscp")["triplet:order1"]

    assert cot.prompt == f"{standard.prompt}\n{prompting.COT_SUFFIX}"
    assert dscp.context_prompt == prompting.DSCP_STEP1
    assert dscp.prompt_with_context("a broken window").endswith(standard.prompt)


@pytest.mark.parametrize("strategy", ["text_only", "image_to_text"])
def test_dscp_is_refused_when_the_final_call_has_no_images(strategy):
    with pytest.raises(ValueError, match="sends none"):
        build(triplet(), input_strategy=strategy, prompting="dscp")
    assert build(triplet(), input_strategy=strategy, prompting="cot")["triplet:order1"].prompt.endswith(
        prompting.COT_SUFFIX)


@pytest.mark.parametrize("options, message", [
    ({"input_strategy": "frames"}, "no input strategy 'frames'"),
    ({"prompting": "plus_pc"}, "does not use prompting 'plus_pc'"),
])
def test_unknown_strategies_are_refused(options, message):
    with pytest.raises(ValueError, match=message):
        build(triplet(), **options)
