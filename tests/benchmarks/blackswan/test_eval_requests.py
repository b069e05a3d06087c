"""BlackSwanSuite evaluation requests: staged parts of one real video, references, seeded MCQ options."""

from collections import Counter

import pytest

from annotation import versions
from annotation.models import Benchmark, BenchmarkItem, BenchmarkVersion
from evaluation import benchmarks, prompting
from evaluation.benchmarks.base import RequestOptions, derived_seed
from evaluation.benchmarks.blackswan import benchmark as blackswan

pytestmark = pytest.mark.django_db

FIRSTS = ["He catches the ball.", "He drops the ball.", "The dog takes the ball."]
NEWS = ["", "He slips on the ice and falls.", "A gust of wind blows the ball away."]
CAPTION = "A man slips on ice while throwing a ball and lands on his back."
OPTIONS = ["He slips on the ice and falls.", "He catches the ball.", "The dog takes the ball."]


def video_payload(**overrides) -> dict:
    payload = {"kind": "video", "id": "v1", "preevent": 0.5, "event": 3.0, "postevent": 6.5,
               "task1_gt": list(FIRSTS), "task2_gt": list(NEWS), "task2_checkboxes": ["yes", "no", "no"],
               "task3_gt": CAPTION, "task3_checkboxes": ["no", "yes", "no"], "preevent_caption": "A man on ice."}
    payload.update(overrides)
    return payload


@pytest.fixture
def version(curator):
    return BenchmarkVersion.objects.create(benchmark=Benchmark.objects.get(slug="blackswan"), label="bs-1",
                                           created_by=curator)


@pytest.fixture
def video_item(version, video):
    return versions.add_item(version, "v1", video_payload(), media={"video": video})


@pytest.fixture
def mcq_item(version, video, video_item):
    payload = {"kind": "mcq", "id": "v1", "mcq_task": 1, "mcq_options": list(OPTIONS), "mcq_label": 0}
    return versions.add_item(version, "v1-mcq-0", payload, media={"video": video})


@pytest.fixture
def yn_item(version, video, video_item):
    payload = {"kind": "yn", "id": "v1", "def_task": 2, "exp": NEWS[1], "def_label": "yes"}
    return versions.add_item(version, "v1-yn-4", payload, media={"video": video})


def build(item, **options):
    return blackswan.BENCHMARK.requests(item, RequestOptions(**options))


def by_variant(requests) -> dict:
    return {r.variant: r for r in requests}


def test_registry_returns_the_blackswan_benchmark():
    assert benchmarks.get("blackswan") is blackswan.BENCHMARK
    assert set(blackswan.BENCHMARK.variants) == {"forecaster_gen", "detective_gen", "reporter_gen", "detective_mcq",
                                                  "reporter_mcq", "detective_yn", "reporter_yn"}


def test_a_video_item_gives_the_three_generative_tasks(video_item, video):
    requests = build(video_item)

    assert [r.request_id for r in requests] == ["v1:forecaster_gen", "v1:detective_gen", "v1:reporter_gen"]
    gen = by_variant(requests)
    assert [gen[v].n_samples for v in ("forecaster_gen", "detective_gen", "reporter_gen")] == [3, 3, 1]
    assert {r.answer_type for r in requests} == {"free"}
    assert {r.item_id for r in requests} == {"v1"}
    assert all(r.extra["video_id"] == "v1" for r in requests)


def test_parts_are_segments_of_the_whole_video_and_v_main_is_hidden_from_the_detective(video_item, video):
    gen = by_variant(build(video_item))
    end = video.duration
    assert end and end > 6.5

    forecaster, detective, reporter = gen["forecaster_gen"], gen["detective_gen"], gen["reporter_gen"]
    assert [(m.role, m.segment, m.hidden) for m in forecaster.media] == [("pre", (0.5, 3.0), False)]
    assert [(m.role, m.segment, m.hidden) for m in detective.media] == [
        ("pre", (0.5, 3.0), False), ("main", (3.0, 6.5), True), ("post", (6.5, end), False)]
    assert [(m.role, m.hidden) for m in reporter.media] == [("pre", False), ("main", False), ("post", False)]
    assert {m.asset_id for r in gen.values() for m in r.media} == {video.pk}
    assert {m.kind for r in gen.values() for m in r.media} == {"video"}
    assert detective.extra["hidden_parts"] == ["main"] and forecaster.extra["parts"] == ["pre"]


def test_an_end_field_overrides_the_probed_duration(version, video):
    item = versions.add_item(version, "v2", video_payload(id="v2", end=8.0), media={"video": video})
    detective = by_variant(build(item))["detective_gen"]
    assert detective.media[-1].segment == (6.5, 8.0)


def test_references_follow_the_three_annotation_steps(video_item):
    gen = by_variant(build(video_item))

    assert gen["forecaster_gen"].gold == FIRSTS
    # hypothesis 1 was validated in step 2 and stays; 2 and 3 were replaced by the step-2 ones
    assert gen["detective_gen"].gold == [FIRSTS[0], NEWS[1], NEWS[2]]
    assert gen["reporter_gen"].gold == [CAPTION]


def test_detective_references_without_checkboxes_fall_back_to_the_step_1_hypothesis():
    record = {"task1_gt": FIRSTS, "task2_gt": ["", "New two.", ""]}
    assert blackswan.detective_references(record) == [FIRSTS[0], "New two.", FIRSTS[2]]


def test_a_video_without_references_is_refused(version, video):
    item = versions.add_item(version, "v3", video_payload(id="v3", task3_gt=""), media={"video": video})
    with pytest.raises(ValueError, match="reporter references"):
        build(item)


@pytest.mark.parametrize("strategy", ["frames", "video"])
def test_both_input_strategies_use_the_same_parts_and_their_own_wording(video_item, strategy):
    gen = by_variant(build(video_item, input_strategy=strategy))

    assert gen["detective_gen"].prompt == blackswan.PROMPTS[strategy][("detective", "gen")]
    assert [m.role for m in gen["detective_gen"].media] == ["pre", "main", "post"]
    assert {r.extra["input_strategy"] for r in gen.values()} == {strategy}
    assert gen["detective_gen"].text == "What happened in the middle?"


def test_the_default_input_strategy_is_frames(video_item):
    assert build(video_item)[0].extra["input_strategy"] == "frames"
    assert "black" in by_variant(build(video_item, input_strategy="video"))["detective_gen"].prompt


def test_split_comes_from_the_video_item_for_mcq_rows(mcq_item, video):
    (request,) = build(mcq_item)

    assert request.request_id == "v1-mcq-0:detective_mcq"
    assert request.variant == "detective_mcq"
    assert [(m.role, m.segment, m.hidden) for m in request.media] == [
        ("pre", (0.5, 3.0), False), ("main", (3.0, 6.5), True), ("post", (6.5, video.duration), False)]
    assert request.extra["hard"] is False  # one Detective hypothesis was validated in step 3


def test_mcq_options_are_shown_in_the_release_order_by_default(version, video, video_item):
    payload = {"kind": "mcq", "id": "v1", "mcq_task": 1, "mcq_options": list(OPTIONS), "mcq_label": 2}
    item = versions.add_item(version, "v1-mcq-3", payload, media={"video": video})
    for seed in range(5):  # the run seed does not move the options
        (request,) = build(item, seed=seed)
        assert request.options == {"A": OPTIONS[0], "B": OPTIONS[1], "C": OPTIONS[2]}
        assert request.gold == "C"  # the letter of mcq_label
        assert request.extra["option_strategy"] == "release"
        assert request.extra["option_order"] == [0, 1, 2] and request.extra["option_seed"] is None
        assert f"A. {OPTIONS[0]}\nB. {OPTIONS[1]}\nC. {OPTIONS[2]}" in request.prompt


def test_mcq_options_are_shuffled_reproducibly_under_a_shuffled_order(mcq_item):
    first, again = build(mcq_item, option_order="shuffled:7")[0], build(mcq_item, option_order="shuffled:7")[0]

    assert first.answer_type == "letter"
    assert list(first.options) == ["A", "B", "C"]
    assert sorted(first.options.values()) == sorted(OPTIONS)
    assert first.options == again.options and first.gold == again.gold
    assert first.options[first.gold] == OPTIONS[0]
    assert [OPTIONS[i] for i in first.extra["option_order"]] == list(first.options.values())
    assert first.extra["source_label"] == 0 and first.extra["option_strategy"] == "shuffled:7"
    assert first.extra["option_seed"] == derived_seed(7, first.request_id)
    for letter, text in first.options.items():
        assert f"{letter}. {text}" in first.prompt

    orders = {tuple(build(mcq_item, option_order=f"shuffled:{seed}")[0].extra["option_order"]) for seed in range(20)}
    assert len(orders) > 1
    for seed in range(20):
        request = build(mcq_item, option_order=f"shuffled:{seed}")[0]
        assert request.options[request.gold] == OPTIONS[0]


def test_reporter_mcq_from_mcq_task_2(version, video, video_item):
    payload = {"kind": "mcq", "id": "v1", "mcq_task": 2, "mcq_options": [CAPTION, FIRSTS[1], "A man on ice."],
               "mcq_label": 0}
    item = versions.add_item(version, "v1-mcq-9", payload, media={"video": video})
    (request,) = build(item)
    assert request.request_id == "v1-mcq-9:reporter_mcq"
    assert [m.hidden for m in request.media] == [False, False, False]
    assert request.options[request.gold] == CAPTION


def test_yes_no_rows_validate_one_hypothesis(yn_item):
    (request,) = build(yn_item)

    assert request.request_id == "v1-yn-4:reporter_yn"
    assert request.answer_type == "yes_no"
    assert request.gold == "yes"
    assert request.text == NEWS[1]
    assert NEWS[1] in request.prompt and "yes or no" in request.prompt
    assert request.options is None


def test_detective_yes_no_hides_the_main_part(version, video, video_item):
    payload = {"kind": "yn", "id": "v1", "def_task": 1, "exp": FIRSTS[2], "def_label": "no"}
    (request,) = build(versions.add_item(version, "v1-yn-2", payload, media={"video": video}))
    assert request.variant == "detective_yn" and request.gold == "no"
    assert [m.role for m in request.media if m.hidden] == ["main"]


def test_chain_of_thought_and_dscp_go_through_the_shared_prompting(mcq_item):
    standard = build(mcq_item)[0]
    cot = build(mcq_item, prompting="cot")[0]
    dscp = build(mcq_item, prompting="dscp")[0]

    assert cot.prompt == f"{standard.prompt}\n{prompting.COT_SUFFIX}"
    assert dscp.context_prompt == prompting.DSCP_STEP1
    assert dscp.prompt_with_context("A man throws a ball.").endswith(standard.prompt)
    assert "A man throws a ball." in dscp.prompt_with_context("A man throws a ball.")


def test_plus_p_and_plus_pc_add_the_human_captions(version, video):
    captions = {"pc_preevent": "a man winding up to throw a ball on a frozen pond",
                "pc_postevent": "the man lying on the ice.", "pc_comp": "the man is now on the ground"}
    item = versions.add_item(version, "v4", video_payload(id="v4", **captions), media={"video": video})
    standard = by_variant(build(item))["detective_gen"]
    plus_p = build(item, prompting="plus_p")
    plus_pc = by_variant(build(item, prompting="plus_pc"))["detective_gen"]

    assert [r.variant for r in plus_p] == ["detective_gen", "reporter_gen"]  # no V_post caption for Forecaster
    detective = by_variant(plus_p)["detective_gen"]
    assert detective.prompt == (f"The beginning of the video shows {captions['pc_preevent']}. The end of the video "
                                f"shows the man lying on the ice.\n{standard.prompt}")
    assert "differ" not in detective.prompt
    assert "The two parts differ in the following way: the man is now on the ground." in plus_pc.prompt
    assert plus_pc.prompt.endswith(standard.prompt)


def test_plus_p_reads_captions_from_the_video_item_for_mcq_rows(version, video):
    captions = {"pc_preevent": "a boy on a skateboard", "pc_postevent": "the boy sitting on the curb"}
    versions.add_item(version, "v5", video_payload(id="v5", **captions), media={"video": video})
    payload = {"kind": "mcq", "id": "v5", "mcq_task": 1, "mcq_options": list(OPTIONS), "mcq_label": 2}
    item = versions.add_item(version, "v5-mcq", payload, media={"video": video})

    (request,) = build(item, prompting="plus_p")
    assert request.prompt.startswith("The beginning of the video shows a boy on a skateboard.")


def test_plus_p_is_refused_without_captions(video_item, mcq_item):
    with pytest.raises(ValueError, match="pc_preevent, pc_postevent"):
        build(video_item, prompting="plus_p")
    with pytest.raises(ValueError, match="plus_pc"):
        build(mcq_item, prompting="plus_pc")


def test_hard_subset_when_every_detective_hypothesis_fell_in_step_3(version, video):
    item = versions.add_item(version, "v6", video_payload(id="v6", task3_checkboxes=["no", "no", "no"]),
                             media={"video": video})
    assert {r.extra["hard"] for r in build(item)} == {True}


@pytest.mark.parametrize("options, message", [
    ({"input_strategy": "separate"}, "no input strategy 'separate'"),
    ({"prompting": "socratic"}, "does not use prompting 'socratic'"),
])
def test_unknown_strategies_are_refused(video_item, options, message):
    with pytest.raises(ValueError, match=message):
        build(video_item, **options)


def test_split_times_must_increase(version, video):
    item = versions.add_item(version, "v7", video_payload(id="v7", event=7.0), media={"video": video})
    with pytest.raises(ValueError, match="must increase"):
        build(item)


def test_a_row_without_split_or_video_item_is_refused():
    item = BenchmarkItem(external_id="lone", payload={"kind": "yn", "id": "lone", "def_task": 1, "exp": "x",
                                                      "def_label": "no"})
    with pytest.raises(ValueError, match="no split"):
        build(item)


def test_request_counts_per_variant_over_a_version(video_item, mcq_item, yn_item):
    requests = [r for item in (video_item, mcq_item, yn_item) for r in build(item)]
    assert Counter(r.variant for r in requests) == {"forecaster_gen": 1, "detective_gen": 1, "reporter_gen": 1,
                                                    "detective_mcq": 1, "reporter_yn": 1}
    assert len({r.request_id for r in requests}) == len(requests)
