"""MAIA scoring: independent and pool accuracy of the statement pairs (a pool with 7 of 8 right fails),
judged open answers, aggregate accuracy, per release category; and the similarity of open answers to
the eight references (ROUGE, BLEU, METEOR, CIDEr, BERTScore)."""

import math
import os
import shutil

import pytest

from annotation.models import BenchmarkItem
from evaluation import scoring, similarity
from evaluation.benchmarks.base import RequestOptions
from evaluation.benchmarks.maia import benchmark as maia

ANSWERS = [f"Una pizza margherita numero {i}" for i in range(8)]


def question(external_id: str, category: str) -> BenchmarkItem:
    return BenchmarkItem(external_id=external_id, payload={
        "kind": "question", "video": "video1", "category": category, "question": "Che cosa cuoce nel forno?",
        "answers": list(ANSWERS), "true_statements": [f"Nel forno cuoce una pizza {i}." for i in range(8)],
        "false_statements": [f"Nel forno cuoce una torta {i}." for i in range(8)]})


def requests_of(*items) -> list:
    return [r for i in items for r in maia.BENCHMARK.requests(i, RequestOptions(seed=11))]


def vsv_answers(requests, pool: str, wrong: int = 0) -> list[dict]:
    """Right letters for the pool's pairs, except the first `wrong` ones."""
    pairs = [r for r in requests if r.variant == "vsv" and r.extra["pool"] == pool]
    return [{"request_id": r.request_id, "response": ("B" if r.gold == "A" else "A") if k < wrong else r.gold}
            for k, r in enumerate(pairs)]


def score(requests, predictions, **models) -> dict:
    collected = scoring.collect(requests, predictions)
    return maia.BENCHMARK.score(requests, collected.responses, **{"judge": None, "bertscore": None, **models})


def test_pools_judged_answers_and_aggregate_accuracy_overall_and_per_category():
    requests = requests_of(question("q1", "SpazialeParziale_A"), question("q2", "SpazialeParziale_B"),
                           question("q3", "Sentiment_A"))
    predictions = [
        *vsv_answers(requests, "q1"), *vsv_answers(requests, "q2", wrong=1), *vsv_answers(requests, "q3"),
        {"request_id": "q1:oevqa", "response": "Una pizza.", "judgment": {"correct": True}},
        {"request_id": "q2:oevqa", "response": "Una pizza margherita.", "judgment": {"correct": True}},
    ]  # q3's open answer is missing
    metrics = score(requests, predictions)

    assert metrics["vsv"]["independent_accuracy"] == (8 + 7 + 8) / 24
    assert metrics["vsv"]["pool_accuracy"] == 2 / 3  # q2 has 7 of 8 pairs right
    assert metrics["vsv"]["n"] == 3 and metrics["vsv"]["pairs"]["n"] == 24
    assert metrics["oevqa"]["judge_accuracy"] == 2 / 3 and metrics["oevqa"]["missing"] == 1
    assert metrics["aggregate_accuracy"] == 1 / 3  # only q1: pool right and judged correct
    assert metrics["n"] == 3

    spatial = metrics["categories"]["SpazialeParziale"]
    assert spatial["vsv"]["pool_accuracy"] == 1 / 2 and spatial["oevqa"]["judge_accuracy"] == 1.0
    assert spatial["aggregate_accuracy"] == 1 / 2 and spatial["n"] == 2
    sentiment = metrics["categories"]["Sentiment"]
    assert (sentiment["vsv"]["pool_accuracy"], sentiment["oevqa"]["judge_accuracy"]) == (1.0, 0.0)
    assert sentiment["aggregate_accuracy"] == 0.0
    assert set(metrics["categories"]) == {"SpazialeParziale", "Sentiment"}
    assert set(metrics["macro_categories"]) == {"spatial", "sentiment"}


def test_unparsed_and_missing_statement_answers_break_the_pool():
    requests = requests_of(question("q1", "Incertezza_A"))
    predictions = vsv_answers(requests, "q1")
    predictions[0]["response"] = "A o B"  # ambiguous
    del predictions[1]  # missing
    vsv = score(requests, predictions)["vsv"]
    assert vsv["independent_accuracy"] == 6 / 8 and vsv["pool_accuracy"] == 0.0
    assert (vsv["pairs"]["unparsed"], vsv["pairs"]["missing"]) == (1, 1)


def test_judge_metrics_are_not_computed_without_verdicts_and_a_judge_fills_them():
    requests = requests_of(question("q1", "Pianificazione_A"))
    predictions = [*vsv_answers(requests, "q1"), {"request_id": "q1:oevqa", "response": "Una pizza."}]
    metrics = score(requests, predictions)
    assert metrics["oevqa"]["judge_accuracy"]["computed"] is False
    assert metrics["aggregate_accuracy"]["computed"] is False
    assert metrics["categories"]["Pianificazione"]["aggregate_accuracy"]["computed"] is False
    assert metrics["vsv"]["pool_accuracy"] == 1.0  # what needs no judge is still there

    judged = score(requests, predictions, judge=lambda request, response: {"correct": "pizza" in response})
    assert judged["oevqa"]["judge_accuracy"] == 1.0 and judged["aggregate_accuracy"] == 1.0


NEEDS_JAVA = pytest.mark.skipif(shutil.which("java") is None and os.environ.get("CI", "").lower() != "true",
                                reason="METEOR runs on Java (install default-jre-headless); CI installs it")


@NEEDS_JAVA
def test_open_answers_are_compared_with_all_eight_references():
    requests = requests_of(question("q1", "Controfattuale_A"), question("q2", "Controfattuale_B"))
    predictions = [{"request_id": "q1:oevqa", "response": ANSWERS[5], "judgment": {"correct": True}},
                   {"request_id": "q2:oevqa", "response": "Nessuno lo sa", "judgment": {"correct": False}}]
    found = score(requests, predictions)["oevqa"]["similarity"]

    # q1 repeats reference 5 word for word, q2 shares no word with any reference
    assert found["n"] == 2
    assert found["rouge1"] == found["rougeL"] == (1.0 + 0.0) / 2
    assert found["meteor"] == pytest.approx((similarity.meteor([ANSWERS[5]], [[ANSWERS[5]]], language="it")[0]) / 2)
    assert found["bertscore"] == {"computed": False, "reason": "no BERTScore model was given (--bertscore-model)"}


def test_rouge_keeps_accented_italian_words_and_takes_the_best_reference():
    hypothesis = "La pizza è nel forno"
    references = ["Una pizza margherita", "la pizza è nel forno caldo"]
    found = similarity.rouge([hypothesis], [references], language="it")
    # best reference: 5 of 5 answer words in its 6, P = 1, R = 5/6, F1 = 10/11 (with "è" as a word)
    assert found["rouge1"] == [pytest.approx(10 / 11)]
    assert found["rouge2"] == [pytest.approx(2 * 1 * (4 / 5) / (1 + 4 / 5))]  # 4 of 4 bigrams in its 5


def test_bleu_is_corpus_level_over_every_reference_with_the_brevity_penalty():
    hypotheses = ["il gatto dorme sul divano", ""]
    references = [["un cane", "il gatto dorme sul divano"], ["x y z"]]
    # every n-gram of the corpus matches; hypothesis length 5, closest reference lengths 5 + 3 = 8
    assert similarity.bleu(hypotheses, references) == pytest.approx(math.exp(1 - 8 / 5))
    assert similarity.bleu(hypotheses[:1], references[:1]) == pytest.approx(1.0)


@NEEDS_JAVA
def test_meteor_against_several_references_keeps_the_best_and_an_empty_answer_scores_zero():
    hypothesis = "il gatto dormiva sul letto"
    one, other = "il gatto dorme sul letto", "un cane abbaia"
    alone = [similarity.meteor([hypothesis], [[reference]], language="it")[0] for reference in (one, other)]
    assert similarity.meteor([hypothesis, ""], [[one, other], [one]], language="it") == \
        [pytest.approx(max(alone)), 0.0]
    assert alone[0] > alone[1] >= 0.0


def test_cider_rewards_copying_a_reference_over_sharing_nothing():
    references = [["una pizza margherita calda", "una pizza"], ["un cane nero", "un cane"]]
    copied = similarity.cider(["una pizza margherita calda", "un cane nero"], references)
    unrelated = similarity.cider(["il treno parte", "la neve cade"], references)
    assert unrelated == 0.0 and copied > 1.0


def test_bertscore_with_a_given_model_takes_the_best_reference(tiny_models_dir):
    scorer = similarity.BertScore(str(tiny_models_dir / "nli"), device="cpu")
    assert scorer.num_layers == 2  # the tiny BERT's last layer
    hypothesis, first, second = "una pizza nel forno", "una torta sul tavolo", "una pizza nel forno"
    alone = [scorer.f1([hypothesis], [[reference]])[0] for reference in (first, second)]
    assert scorer.f1([hypothesis, ""], [[first, second], [first]]) == [pytest.approx(max(alone)), 0.0]
    assert alone[1] == pytest.approx(1.0)

    requests = requests_of(question("q1", "Sentiment_A"))
    found = score(requests, [{"request_id": "q1:oevqa", "response": ANSWERS[2], "judgment": {"correct": True}}],
                  bertscore=scorer)["oevqa"]["similarity"]
    assert found["bertscore"] == pytest.approx(1.0)


def test_judge_accuracy_with_no_valid_verdict_is_not_computed_with_the_invalid_count():
    requests = requests_of(question("q1", "Pianificazione_A"))
    predictions = [*vsv_answers(requests, "q1"),
                   {"request_id": "q1:oevqa", "response": "Una pizza.", "judgment": {"correct": "maybe"}}]
    metrics = score(requests, predictions)
    assert metrics["oevqa"]["judge_accuracy"] == {"computed": False,
                                                  "reason": "no valid judgment (1 invalid, 0 missing answers)"}
    assert metrics["aggregate_accuracy"]["computed"] is False  # never 0.0
    assert metrics["oevqa"]["invalid_judgments"] == 1
