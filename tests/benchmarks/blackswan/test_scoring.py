"""BlackSwanSuite scoring: MCQ and Y/N accuracy with unparsed and missing answers, the hard and easy
subsets, CLIP score with a real (tiny) CLIP model, LLM-Match from judgments, and what is not computed."""

import numpy as np
import pytest

from annotation.models import BenchmarkItem
from evaluation import scoring
from evaluation.benchmarks.base import RequestOptions
from evaluation.benchmarks.blackswan import benchmark as blackswan
from generation.backends import registry

SPLIT = {"preevent": 0.5, "event": 3.0, "postevent": 6.5, "end": 9.0}
FIRSTS = ["He catches the ball.", "He drops the ball.", "The dog takes the ball."]
NEWS = ["", "He slips on the ice and falls.", "A gust of wind blows the ball away."]
OPTIONS = ["He slips on the ice and falls.", "He catches the ball.", "The dog takes the ball."]
HARD_MARKS = ["no", "no", "no"]  # every Detective hypothesis invalidated in step 3 (§7.3)
EASY_MARKS = ["no", "yes", "no"]


def item(external_id: str, **payload) -> BenchmarkItem:
    return BenchmarkItem(external_id=external_id, payload={**SPLIT, **payload})


def video(video_id: str, marks) -> BenchmarkItem:
    return item(video_id, kind="video", id=video_id, task1_gt=list(FIRSTS), task2_gt=list(NEWS),
                task2_checkboxes=["yes", "no", "no"], task3_gt=f"A man slips on ice ({video_id}).",
                task3_checkboxes=list(marks))


def mcq(external_id: str, marks, task: int = 1) -> BenchmarkItem:
    return item(external_id, kind="mcq", id=external_id, mcq_task=task, mcq_options=list(OPTIONS), mcq_label=0,
                task3_checkboxes=list(marks))


def yes_no(external_id: str, label: str, task: int = 1) -> BenchmarkItem:
    return item(external_id, kind="yn", id=external_id, def_task=task, exp="He slips.", def_label=label)


def requests_of(*items) -> dict:
    return {r.request_id: r for i in items for r in blackswan.BENCHMARK.requests(i, RequestOptions(seed=3))}


def wrong_letter(request) -> str:
    return next(letter for letter in request.options if letter != request.gold)


def score(requests: dict, predictions: list[dict], **models) -> dict:
    collected = scoring.collect(list(requests.values()), predictions)
    return blackswan.BENCHMARK.score(list(requests.values()), collected.responses,
                                     **{"clip": None, "judge": None, **models})


def test_mcq_accuracy_counts_unparsed_and_missing_answers_as_wrong_and_splits_hard_from_easy():
    requests = requests_of(mcq("m1", HARD_MARKS), mcq("m2", EASY_MARKS), mcq("m3", EASY_MARKS), mcq("m4", EASY_MARKS),
                           mcq("r1", EASY_MARKS, task=2))
    m1, m2 = requests["m1:detective_mcq"], requests["m2:detective_mcq"]
    predictions = [
        {"request_id": "m1:detective_mcq", "response": f"Answer: {m1.gold}"},  # right (hard)
        {"request_id": "m2:detective_mcq", "response": f"({wrong_letter(m2)})"},  # wrong (easy)
        {"request_id": "m3:detective_mcq", "response": "A or B"},  # unparsed (easy); m4 is missing (easy)
        {"request_id": "r1:reporter_mcq", "response": requests["r1:reporter_mcq"].gold},
    ]
    metrics = score(requests, predictions)
    detective = metrics["detective_mcq"]

    assert detective["accuracy"] == 1 / 4 and detective["n"] == 4
    assert (detective["missing"], detective["unparsed"]) == (1, 1)
    assert detective["unparsed_rate"] == 1 / 3  # of the three answers given
    assert (detective["hard"]["accuracy"], detective["hard"]["n"]) == (1.0, 1)
    assert (detective["easy"]["accuracy"], detective["easy"]["n"]) == (0.0, 3)
    assert detective["hard_minus_easy"] == 1.0 - 0.0
    assert metrics["reporter_mcq"]["accuracy"] == 1.0 and metrics["reporter_mcq"]["n"] == 1


def test_the_gold_letter_follows_the_seeded_option_order():
    requests = requests_of(mcq("m1", HARD_MARKS))
    request = requests["m1:detective_mcq"]
    # the correct option (index 0 in the release) is shown under request.gold; naming its text works too
    assert request.options[request.gold] == OPTIONS[0]
    metrics = score(requests, [{"request_id": "m1:detective_mcq", "response": OPTIONS[0]}])
    assert metrics["detective_mcq"]["accuracy"] == 1.0


def test_yes_no_accuracy_reads_true_false_and_counts_unparsed():
    requests = requests_of(yes_no("y1", "yes"), yes_no("y2", "no"), yes_no("y3", "no"), yes_no("y4", "yes", task=2))
    metrics = score(requests, [
        {"request_id": "y1:detective_yn", "response": "Yes."},
        {"request_id": "y2:detective_yn", "response": "True"},  # says yes, gold no
        {"request_id": "y3:detective_yn", "response": "It might."},
        {"request_id": "y4:reporter_yn", "response": "no"},
    ])
    assert metrics["detective_yn"]["accuracy"] == 1 / 3
    assert metrics["detective_yn"]["unparsed_rate"] == 1 / 3
    assert metrics["reporter_yn"]["accuracy"] == 0.0
    assert "hard" not in metrics["detective_yn"]


def test_llm_match_averages_every_pair_per_question_then_over_questions():
    requests = requests_of(video("v1", HARD_MARKS), video("v2", EASY_MARKS), video("v3", EASY_MARKS))
    predictions = [
        {"request_id": "v1:detective_gen", "sample": 0, "response": "He falls.", "judgment": {"score": 5}},
        {"request_id": "v1:detective_gen", "sample": 1, "response": "He slips.", "judgment": {"scores": [1, 2, 3]}},
        {"request_id": "v1:detective_gen", "sample": 2, "response": "He trips.", "judgment": {"score": "Score: 4"}},
        {"request_id": "v2:detective_gen", "sample": 0, "response": "A dog runs.", "judgment": {"score": 2}},
        {"request_id": "v2:detective_gen", "sample": 1, "response": "   "},  # empty: no pair to judge
    ]  # v3 is missing
    detective = score(requests, predictions)["detective_gen"]

    v1 = (5 + 1 + 2 + 3 + 4) / 5
    v2 = 2
    assert detective["llm_match"] == pytest.approx((v1 + v2) / 2)
    assert (detective["n"], detective["scored"], detective["missing"]) == (3, 2, 1)
    assert detective["llm_match_questions"] == 2
    assert detective["clip_score"] == {"computed": False, "reason": "no CLIP model was given (--clip-model)"}


def test_llm_match_is_not_computed_when_a_response_has_no_judgment_and_no_judge_is_given():
    requests = requests_of(video("v1", HARD_MARKS))
    predictions = [{"request_id": "v1:reporter_gen", "response": "He falls.", "judgment": {"score": 3}},
                   {"request_id": "v1:forecaster_gen", "response": "He catches it."}]
    metrics = score(requests, predictions)

    assert metrics["reporter_gen"]["llm_match"] == 3.0
    assert metrics["forecaster_gen"]["llm_match"]["computed"] is False
    assert "1 of 1 answered responses" in metrics["forecaster_gen"]["llm_match"]["reason"]
    assert metrics["detective_gen"]["llm_match"] is None  # nothing answered: no score, not a zero
    assert metrics["detective_gen"]["missing"] == 1


def test_a_judge_callable_fills_in_missing_judgments():
    requests = requests_of(video("v1", HARD_MARKS))
    asked = []

    def judge(request, response):
        asked.append((request.request_id, response))
        return {"scores": [len(request.gold)] * len(request.gold)}

    predictions = [{"request_id": "v1:forecaster_gen", "sample": 0, "response": "He catches it."},
                   {"request_id": "v1:forecaster_gen", "sample": 1, "response": "He drops it.",
                    "judgment": {"score": 1}}]
    forecaster = score(requests, predictions, judge=judge)["forecaster_gen"]

    assert asked == [("v1:forecaster_gen", "He catches it.")]  # only the one without a judgment
    assert forecaster["llm_match"] == (3 + 3 + 3 + 1) / 4


@pytest.fixture(scope="module")
def clip(tiny_models_dir):
    return registry.load_backend("clip", str(tiny_models_dir / "clip"), device="cpu")


def test_clip_score_takes_the_best_pair_per_question_and_the_mean_over_questions(clip):
    requests = requests_of(video("v1", HARD_MARKS), video("v2", EASY_MARKS))
    said = {"v1": ["He falls on the ice.", "The dog runs away."], "v2": ["A man slips."]}
    predictions = [{"request_id": f"{vid}:detective_gen", "sample": k, "response": text}
                   for vid, texts in said.items() for k, text in enumerate(texts)]
    detective = score(requests, predictions, clip=clip)["detective_gen"]

    best, average = [], []
    for vid, texts in said.items():
        references = requests[f"{vid}:detective_gen"].gold
        responses, refs = clip.encode_text(texts), clip.encode_text(references)
        sims = np.array([[float(np.dot(r, g) / (np.linalg.norm(r) * np.linalg.norm(g))) for g in refs]
                         for r in responses])
        assert sims.shape == (len(texts), 3)
        best.append(sims.max())
        average.append(sims.mean())
    assert detective["clip_score"] == pytest.approx(sum(best) / 2, abs=1e-5)
    assert detective["clip_score_all_pairs"] == pytest.approx(sum(average) / 2, abs=1e-5)
    assert detective["clip_score"] > detective["clip_score_all_pairs"]  # max ≥ mean, strictly here


def test_clip_score_of_a_response_equal_to_a_reference_is_one(clip):
    requests = requests_of(video("v1", HARD_MARKS))
    reporter = requests["v1:reporter_gen"]
    metrics = score(requests, [{"request_id": "v1:reporter_gen", "response": reporter.gold[0]}], clip=clip)
    assert metrics["reporter_gen"]["clip_score"] == pytest.approx(1.0, abs=1e-5)


def test_llm_match_with_no_valid_judgment_is_not_computed_with_the_invalid_count():
    requests = requests_of(video("v1", HARD_MARKS))
    predictions = [{"request_id": "v1:reporter_gen", "response": "He falls.", "judgment": {"score": "great"}}]
    reporter = score(requests, predictions)["reporter_gen"]
    assert reporter["llm_match"] == {"computed": False, "reason": "no valid judgment (1 invalid)"}
    assert reporter["llm_match_invalid_judgments"] == 1
