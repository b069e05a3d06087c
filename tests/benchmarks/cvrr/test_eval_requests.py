"""CVRR-ES evaluation requests: one open-ended `qa` request per QA pair, dimension slugs, prompting."""

import pytest

from annotation import versions
from annotation.models import Benchmark, BenchmarkItem, BenchmarkVersion
from evaluation import benchmarks, prompting
from evaluation.benchmarks.base import RequestOptions
from evaluation.benchmarks.cvrr import benchmark as cvrr
from tests.conftest import ingest_path

QUESTION = "Is the person in the video opening the fridge before sitting down?"
ANSWER = "No, the person sits down first and never opens the fridge."


def cvrr_item(external_id="partial_actions-121-3", **overrides) -> BenchmarkItem:
    payload = {"kind": "qa", "dimension": "partial_actions", "video_id": "121", "question": QUESTION,
               "answer": ANSWER}
    payload.update(overrides)
    return BenchmarkItem(external_id=external_id, payload=payload)


def only_request(item, prompting_strategy="standard"):
    requests = cvrr.BENCHMARK.requests(item, RequestOptions(prompting=prompting_strategy))
    assert len(requests) == 1
    return requests[0]


def test_registry_returns_the_cvrr_benchmark():
    assert benchmarks.get("cvrr") is cvrr.BENCHMARK
    assert cvrr.BENCHMARK.variants == ("qa",)


def test_one_open_ended_request_per_qa_pair():
    request = only_request(cvrr_item())

    assert request.request_id == "partial_actions-121-3:qa"
    assert request.item_id == "partial_actions-121-3"
    assert request.variant == "qa"
    assert request.text == QUESTION
    assert request.gold == ANSWER
    assert request.answer_type == "free"
    assert request.options is None
    assert request.source["video_id"] == "121"
    assert [(m.role, m.kind, m.asset_id) for m in request.media] == [("video", "video", None)]


def test_standard_prompt_is_the_question_itself():
    request = only_request(cvrr_item())
    assert request.prompt == QUESTION
    assert request.context_prompt == ""
    assert request.prompt_with_context("ignored") == QUESTION


def test_chain_of_thought_appends_the_cue():
    request = only_request(cvrr_item(), "cot")
    assert request.prompt == f"{QUESTION}\n{prompting.COT_SUFFIX}"
    assert request.context_prompt == ""


def test_dscp_asks_for_context_first_then_the_question_with_it():
    request = only_request(cvrr_item(), "dscp")

    assert request.context_prompt.startswith("As an intelligent video comprehension model")
    assert request.context_prompt.endswith("Question: What is happening in the video?")
    assert QUESTION not in request.context_prompt
    final = request.prompt_with_context("  A man walks into a kitchen and sits on a chair.\n")
    assert final.startswith("Context for the given video is: A man walks into a kitchen and sits on a chair.")
    assert final.endswith(f"Question: {QUESTION}")
    assert prompting.CONTEXT_SLOT not in final


def test_dscp_stage_one_prefixes_the_guidelines_in_one_call():
    request = only_request(cvrr_item(), "dscp_stage1")

    assert request.context_prompt == ""
    assert request.prompt.startswith("As an intelligent video comprehension model")
    assert "8. Disagree with incorrect information given in question." in request.prompt
    assert request.prompt.endswith(f"Question: {QUESTION}")


@pytest.mark.parametrize("strategy", ["plus_p", "self_consistency"])
def test_prompting_strategies_the_paper_did_not_use_are_refused(strategy):
    with pytest.raises(ValueError, match=strategy):
        cvrr.BENCHMARK.requests(cvrr_item(), RequestOptions(prompting=strategy))


@pytest.mark.parametrize(("name", "slug"), [
    ("understanding_emotional_context", "understanding_emotional_context"),
    ("Understanding of emotional context", "understanding_emotional_context"),
    ("Multiple actions in a single video", "multiple_actions_in_a_single_video"),
    ("multiple_actions_in_a_single_video", "multiple_actions_in_a_single_video"),
    ("Fine-grained action understanding", "fine_grained_action_understanding"),
    ("Non-existent actions with existent scene depictions", "non_existent_actions_with_existent_scene_depictions"),
    ("Non-existent actions with existent scene.", "non_existent_actions_with_existent_scene_depictions"),
    ("Non-existent actions with non-existent scene depictions",
     "non_existent_actions_with_non_existent_scene_depictions"),
    ("Continuity and Object Instance Count", "continuity_and_object_instance_count"),
    ("Unusual and Physically Anomalous activities", "unusual_and_physically_anomalous_activities"),
    ("  Interpretation of social context ", "interpretation_of_social_context"),
    ("interpretation_of_visual_context", "interpretation_of_visual_context"),
    ("Time order understanding", "time_order_understanding"),
    ("Partial actions", "partial_actions"),
])
def test_dimension_spellings_map_to_one_slug(name, slug):
    request = only_request(cvrr_item(dimension=name))
    assert request.extra["dimension"] == slug
    assert request.extra["dimension_release"] == name
    assert request.extra["dimension_name"] == cvrr.DIMENSIONS[slug]


def test_the_eleven_dimensions_stay_distinct():
    slugs = {cvrr.dimension_slug(name) for name in cvrr.DIMENSIONS.values()}
    assert slugs == set(cvrr.DIMENSIONS)
    assert len(slugs) == 11


def test_unknown_dimension_is_refused_by_name():
    with pytest.raises(ValueError, match="Existent actions with imaginary scenes"):
        only_request(cvrr_item(dimension="Existent actions with imaginary scenes"))


def test_question_kind_is_kept_when_the_item_records_it():
    assert only_request(cvrr_item(question_kind="Robustness")).extra["question_kind"] == "robustness"
    assert "question_kind" not in only_request(cvrr_item()).extra
    with pytest.raises(ValueError, match="trick"):
        only_request(cvrr_item(question_kind="trick"))


@pytest.mark.django_db
def test_request_points_at_the_items_video(bikes, curator):
    video = ingest_path(bikes, user=curator, probe=False)
    version = BenchmarkVersion.objects.create(benchmark=Benchmark.objects.get(slug="cvrr"), label="v1")
    payload = cvrr_item().payload
    versions.add_item(version, "with-video", payload, media={"video": video})
    versions.add_item(version, "without-video", payload)

    by_id = {item.external_id: only_request(item) for item in version.items.prefetch_related("media")}

    assert [(m.role, m.kind, m.asset_id) for m in by_id["with-video"].media] == [("video", "video", video.pk)]
    assert by_id["without-video"].media[0].asset_id is None
