"""LLM judges: reading verdicts, their prompts, judging stored runs (tiny causal LM, local
OpenAI-compatible server), the cache, the scorer hook, and agreement with people."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from evaluation import judges, results, runner, scoring
from evaluation.benchmarks.base import EvalRequest
from evaluation.benchmarks.blackswan import benchmark as blackswan
from evaluation.benchmarks.cvrr import benchmark as cvrr
from evaluation.models import EvaluationRun, Judgment, Prediction, ResponseCache
from generation.backends import registry
from tests.eval_support import frozen_version
from tests.openai_test_server import Reply, openai_test_server

FAST = {"backoff_base": 0.001, "backoff_cap": 0.01, "timeout": 5.0, "max_concurrency": 1, "max_retries": 0}
DIMENSION = "partial_actions"


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch):
    """urllib honours proxy variables; the local server must be reached directly."""
    for name in ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def server():
    with openai_test_server() as running:
        yield running


def said(text: str) -> Reply:
    """A chat completion whose only choice says `text`."""
    return Reply(body={"id": "x", "object": "chat.completion", "model": "judge-test",
                       "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                    "finish_reason": "stop"}],
                       "usage": {"prompt_tokens": 11, "completion_tokens": 7}})


def openai_spec(server, model: str = "judge-test"):
    return judges.judge_spec(f"openai:{model}", options={"base_url": server.base_url, **FAST})


def user_text(body: dict) -> str:
    return next(m for m in body["messages"] if m["role"] == "user")["content"][0]["text"]


# --- Stored runs to judge -------------------------------------------------------------------------

def cvrr_run(label: str, answers: dict[str, str], *, failed: tuple = ()) -> EvaluationRun:
    """A CVRR-ES run whose item `qN` asks question N; `answers` maps item id → the model's answer."""
    items = [(qid, {"kind": "qa", "dimension": DIMENSION, "video_id": f"v-{qid}", "question": f"What does {qid} do?",
                    "answer": f"{qid} waves"}, {}) for qid in sorted({*answers, *failed})]
    version = frozen_version("cvrr", label, items)
    run = EvaluationRun.objects.create(version=version, model_id="org/vlm", backend="openai")
    by_id = {item.external_id: item for item in version.items.all()}
    for qid, text in answers.items():
        Prediction.objects.create(run=run, request_id=f"{qid}:qa", item=by_id[qid], variant="qa", prompt=[],
                                  raw_output=text)
    for qid in failed:
        Prediction.objects.create(run=run, request_id=f"{qid}:qa", item=by_id[qid], variant="qa", prompt=[],
                                  error="timeout")
    return run


def nleye_payload(label: int = 1, **extra) -> dict:
    hypotheses = ("A boy swings a bat.", "A boy reads a book.") if label == 1 else \
        ("A boy reads a book.", "A boy swings a bat.")
    return {"kind": "triplet", "premise": "A broken window.", "hypothesis1": hypotheses[0],
            "hypothesis2": hypotheses[1], "label": label, "explanation": "The bat broke the window.", **extra}


# --- Reading verdicts (no model) ------------------------------------------------------------------

# (verdict, authors' reading (the default), strict reading), each as (status, score)
LLM_MATCH_READINGS = [
    ("Reason: Both describe a fall off a bike.\nScore: 4", ("ok", 4), ("ok", 4)),
    ("**Reason:** close.\n**Score:** 5", ("unparsed", None), ("ok", 5)),  # markdown breaks "Score:\s*N"
    ("3", ("unparsed", None), ("ok", 3)),
    ("Score: 4. On reflection, Score: 2", ("ok", 4), ("unparsed", None)),  # the first match vs two scores
    ("score: 4", ("unparsed", None), ("ok", 4)),  # the authors' pattern is case-sensitive
    ("Score: 7", ("unparsed", None), ("unparsed", None)),  # off the 1–5 scale
    ("Score: 3.5", ("ok", 3), ("unparsed", None)),  # the prompt asks for an integer
    ("They are quite similar.", ("unparsed", None), ("unparsed", None)),
]


@pytest.mark.parametrize("text, authors, strict", LLM_MATCH_READINGS)
def test_llm_match_reads_the_first_score_n_by_default_and_strictly_by_name(text, authors, strict):
    reading = judges.KINDS["llm_match"].parse(text)
    assert (reading.status, reading.value["score"]) == authors
    reading = judges.LlmMatch(parser="strict").parse(text)
    assert (reading.status, reading.value["score"]) == strict


def test_llm_match_keeps_the_reason():
    assert judges.KINDS["llm_match"].parse("Reason: same event, other words.\nScore: 4").value["reason"] == \
        "same event, other words."


@pytest.mark.parametrize("text, pred, score", [
    ("{'pred': 'correct', 'score': 4, 'reason': 'It matches.'}", "correct", 4),
    ('```json\n{"pred": "Incorrect", "score": "2", "reason": "No."}\n```', "incorrect", 2),
    # a quote inside the reason breaks the literal; the keys are still read one by one
    ("{'pred': 'incorrect', 'score': 1, 'reason': 'the man's hat is red'}", "incorrect", 1),
    ("Here is my evaluation: {'pred': 'correct', 'score': 5, 'reason': 'same'}", "correct", 5),
    # kept as written: the scorer leaves verdicts other than correct/incorrect out of its denominator
    ("{'pred': 'partially correct', 'score': 3, 'reason': 'half'}", "partially correct", 3),
    ("{'pred': 'correct', 'score': 4.8, 'reason': 'as in the example'}", "correct", 4.8),
    ("{'pred': 'correct', 'score': 9, 'reason': 'off the scale'}", "correct", None),
])
def test_cvrr_reads_the_python_dict(text, pred, score):
    reading = judges.KINDS["cvrr"].parse(text)
    assert reading.status == "ok"
    assert (reading.value["pred"], reading.value["score"]) == (pred, score)


@pytest.mark.parametrize("text", [
    "Correct! The prediction matches.",  # prose: no 'pred' key, no guess from the word
    "{'pred': 'correct', 'score': 5} and also {'pred': 'incorrect', 'score': 0}",  # two different verdicts
    "{'score': 3, 'reason': 'no pred key'}",
    "",
])
def test_cvrr_unreadable_verdicts_are_unparsed(text):
    reading = judges.KINDS["cvrr"].parse(text)
    assert reading.status == "unparsed" and reading.value["pred"] is None


@pytest.mark.parametrize("text, status, correct", [
    ("The answer agrees with reference 3.\nVerdict: correct", "ok", True),
    ("Nessun riferimento concorda.\nVerdict: **incorrect**", "ok", False),
    ("Verdict: correct\nVerdict: incorrect", "unparsed", None),
    ("correct", "unparsed", None),  # not in the asked form
])
def test_maia_reads_the_verdict_line(text, status, correct):
    reading = judges.KINDS["maia"].parse(text)
    assert (reading.status, reading.value["correct"]) == (status, correct)


@pytest.mark.parametrize("text, status, label", [
    ("2", "ok", 2),
    ("0.", "ok", 0),
    ("2 (Logical and same as one of the gold)", "ok", 2),
    ("Answer: 1", "ok", 1),
    ("Logical but different", "ok", 1),
    ("3", "unparsed", None),  # not a label
    ("Score: 2. Label: 1", "unparsed", None),  # two labels
    ("Explanation 1 is the closest one.", "unparsed", None),  # a reference number is not a label
])
def test_nleye_reads_the_label(text, status, label):
    reading = judges.KINDS["nleye_explanation"].parse(text)
    assert (reading.status, reading.value["label"]) == (status, label)


# --- Prompts ----------------------------------------------------------------------------------------

def test_cvrr_prompt_is_the_authors_with_question_answer_and_prediction():
    request = EvalRequest("q1:qa", "q1", "qa", "Why does he stop?", "Why does he stop?", gold="He is tired.")
    (case,) = judges.KINDS["cvrr"].cases(request, "Because he is tired.")
    assert case.system.startswith("You are an intelligent chatbot designed for evaluating the correctness")
    assert "Question: Why does he stop?\nGround truth correct Answer: He is tired.\n" \
           "Predicted Answer: Because he is tired.\n\n" in case.user
    assert case.user.endswith("{'pred': 'correct', 'score': 4.8, 'reason': reason}.")


def test_llm_match_makes_one_call_per_reference():
    references = ["He falls.", "He trips over a rock.", "The bike breaks."]
    request = EvalRequest("v1:detective_gen", "v1", "detective_gen", "What happened?", "…", gold=references)
    cases = judges.KINDS["llm_match"].cases(request, "He fell off.")
    assert [c.reference_key for c in cases] == ["ref:0", "ref:1", "ref:2"]
    for case, reference in zip(cases, references, strict=True):
        assert f"Ground Truth:    \n{reference}\n\nResponse to Score:\nHe fell off.\n" in case.user
        assert "Score: Your score." in case.user


def test_nleye_prompt_lists_gold_then_human_explanations():
    payload = nleye_payload(2, human_explanations=["He played ball near the house.", ""])
    request = EvalRequest("n1:triplet:order1", "n1", "triplet", "", "", gold=1, answer_type="choice_12",
                          source=payload, extra={"explanation": payload["explanation"]})
    (case,) = judges.KINDS["nleye_explanation"].cases(request, "1. The bat hit the window.")
    assert case.user.startswith("Context: A broken window.\n\nPlausible Hypothesis: A boy swings a bat.\n\n"
                                "Less Plausible Hypothesis: A boy reads a book.\n\nReturn 0 (Not logical at all)")
    assert case.user.endswith("Gold explanations:\n\nExplanation 1: The bat broke the window.\n\n"
                              "Explanation 2: He played ball near the house.")
    assert "Candidate explanation: 1. The bat hit the window.\n\n" in case.user


def test_maia_prompt_numbers_the_eight_references():
    answers = [f"risposta {n}" for n in range(1, 9)]
    request = EvalRequest("m1:oevqa", "m1", "oevqa", "Che cosa fa?", "", gold=answers)
    (case,) = judges.KINDS["maia"].cases(request, "Cucina.")
    assert "\n".join(f"{n}. risposta {n}" for n in range(1, 9)) in case.user
    assert "Candidate answer: Cucina." in case.user and case.user.endswith("Verdict: incorrect")


def test_judge_model_names_its_backend():
    assert judges.split_model("openai:gpt-4o") == ("openai", "gpt-4o")
    assert judges.split_model("/models/llama") == ("causal_lm", "/models/llama")
    assert judges.split_model("org/judge", "transformers") == ("transformers", "org/judge")
    with pytest.raises(judges.JudgeError):
        judges.split_model("openai:gpt-4o", "causal_lm")


# --- A real local model: the tiny causal LM ---------------------------------------------------------

@pytest.mark.django_db
def test_tiny_causal_lm_verdicts_are_stored_and_unreadable_ones_counted(tiny_models_dir):
    model = str(tiny_models_dir / "causal-lm")
    run = cvrr_run("tiny-1", {"q1": "He waves.", "q2": "He runs away.", "q3": "Nothing.", "q4": "  "},
                   failed=("q5",))
    spec = judges.judge_spec(model)
    stats = judges.judge_run(run, "cvrr", spec, batch_size=2, params={"max_new_tokens": 12})

    rows = list(Judgment.objects.filter(prediction__run=run).select_related("prediction"))
    assert sorted(r.prediction.request_id for r in rows) == ["q1:qa", "q2:qa", "q3:qa"]  # empty and failed: no call
    assert (stats.responses, stats.empty, stats.calls) == (4, 1, 3)
    for row in rows:
        assert row.judge_backend == "causal_lm" and row.judge_model == model
        assert row.judge_revision == registry.resolve_revision("causal_lm", model) != ""
        assert row.raw_verdict.strip()  # real generated text, stored as is
        assert row.params["temperature"] == 0.0 and row.params["max_new_tokens"] == 12
        assert [m["role"] for m in row.prompt] == ["system", "user"]
        assert row.prediction.raw_output in row.prompt[1]["content"][0]["text"]
        reread = judges.KINDS["cvrr"].parse(row.raw_verdict)
        assert (row.parse_status, row.verdict) == (reread.status, reread.value)
        if row.parse_status == "unparsed":
            assert row.verdict["pred"] is None  # counted, never guessed
    unparsed = sum(r.parse_status == "unparsed" for r in rows)
    assert unparsed >= 1  # random weights do not write a Python dict with a 'pred' key
    assert (stats.ok, stats.unparsed, stats.failed) == (3 - unparsed, unparsed, 0)
    assert judges.judgment_counts(run, "cvrr", model) == {"ok": 3 - unparsed, "unparsed": unparsed, "failed": 0}

    again = judges.judge_run(run, "cvrr", spec, batch_size=2, params={"max_new_tokens": 12})
    assert (again.calls, again.skipped) == (0, 3)  # resumed: everything was judged
    assert Judgment.objects.filter(prediction__run=run).count() == 3

    verdicts = judges.verdicts_for_run(run, "cvrr", model)
    assert set(verdicts) == {("q1:qa", 0), ("q2:qa", 0), ("q3:qa", 0), ("q4:qa", 0)}
    assert verdicts[("q4:qa", 0)]["pred"] == "incorrect"  # an empty answer is wrong, without a call

    raw = {r.prediction_id: r.raw_verdict for r in rows}
    Judgment.objects.filter(prediction__run=run).delete()
    cached = judges.judge_run(run, "cvrr", spec, batch_size=2, params={"max_new_tokens": 12})
    assert (cached.calls, cached.from_cache) == (0, 3)  # the verdicts come back from the response cache
    assert {r.prediction_id: r.raw_verdict for r in Judgment.objects.filter(prediction__run=run)} == raw


@pytest.mark.django_db
def test_choices_decoding_gives_the_tiny_judge_s_most_likely_allowed_answer(tiny_models_dir):
    model = str(tiny_models_dir / "causal-lm")
    run = cvrr_run("tiny-choices", {"q1": "He waves.", "q2": "He runs away.", "q3": "  "})
    spec = judges.judge_spec(model)
    stats = judges.judge_run(run, "cvrr", spec, batch_size=2, decoding=judges.CHOICES)

    rows = list(Judgment.objects.filter(prediction__run=run).select_related("prediction"))
    assert len(rows) == 2 and (stats.calls, stats.empty, stats.ok) == (2, 1, 2)
    backend = registry.load_backend("causal_lm", model, device="cpu")
    allowed = list(judges.KINDS["cvrr"].answer_choices)
    assert len(allowed) == 12  # correct / incorrect × scores 0–5
    for row in rows:
        assert row.raw_verdict in allowed and row.parse_status == "ok"
        assert row.params["decoding"] == "choices"
        # the stored answer is the one the model scores highest after the judge's prompt
        chat = judges.Case("", row.prompt[1]["content"][0]["text"], judges.CVRR_SYSTEM).chat(
            judges.judge_params({}))
        scores = backend.score_logprob(allowed, prefix=backend.chat_prompt(chat))
        assert row.raw_verdict == allowed[max(range(len(allowed)), key=lambda i: (scores[i], -i))]
        assert row.verdict["pred"] in {"correct", "incorrect"} and 0 <= row.verdict["score"] <= 5
    used, verdicts = results.stored_verdicts(run, "cvrr")
    assert used["decoding"] == "choices" and len(verdicts) == 3

    with pytest.raises(judges.JudgeError, match="choices decoding"):  # one judge model judges a run one way
        judges.judge_run(run, "cvrr", spec, decoding=judges.FREE)
    with pytest.raises(judges.JudgeError, match="Unknown judge decoding"):
        judges.Judge("cvrr", spec, decoding="beam")


@pytest.mark.parametrize("kind", ["cvrr", "llm_match", "maia", "nleye_explanation"])
def test_every_allowed_answer_reads_as_a_verdict(kind):
    judge_kind = judges.KINDS[kind]
    assert judge_kind.answer_choices
    for answer in judge_kind.answer_choices:
        reading = judge_kind.parse(answer)
        assert reading.ok and judge_kind.label({**reading.value, "status": reading.status}) is not None


def test_choices_decoding_needs_a_local_text_model(server):
    judge = judges.Judge("maia", openai_spec(server), decoding=judges.CHOICES)
    with pytest.raises(judges.JudgeError, match="local text model"):
        judge.answer([judges.Case("", "Is it right?")])


# --- A judge behind an OpenAI-compatible API ---------------------------------------------------------

@pytest.mark.django_db
def test_cvrr_judge_over_the_api_parses_caches_and_feeds_the_scorer(server):
    run = cvrr_run("api-1", {"q1": "q1 waves", "q2": "q2 sits", "q3": "q3 jumps"})
    server.script(said("{'pred': 'correct', 'score': 5, 'reason': 'Same action.'}"),
                  said("{'pred': 'incorrect', 'score': 1, 'reason': 'the man's hand is still'}"),
                  said("I would say it is mostly right."))
    spec = openai_spec(server)
    stats = judges.judge_run(run, "cvrr", spec, batch_size=8)

    assert server.calls == 3 and (stats.ok, stats.unparsed) == (2, 1)
    first = server.bodies[0]
    assert first["model"] == "judge-test" and first["temperature"] == 0.0
    assert first["messages"][0] == {"role": "system", "content": [{"type": "text", "text": judges.CVRR_SYSTEM}]}
    assert "Predicted Answer: q1 sits" not in user_text(first) and "Predicted Answer: q1 waves" in user_text(first)
    rows = {r.prediction.request_id: r for r in Judgment.objects.filter(prediction__run=run)
            .select_related("prediction")}
    assert rows["q1:qa"].verdict == {"pred": "correct", "score": 5, "reason": "Same action."}
    assert rows["q2:qa"].verdict["pred"] == "incorrect" and rows["q2:qa"].verdict["score"] == 1
    assert rows["q3:qa"].parse_status == "unparsed" and rows["q3:qa"].raw_verdict == "I would say it is mostly right."
    assert rows["q1:qa"].judge_revision == "" and rows["q1:qa"].prompt_tokens == 11

    # the stored verdicts are what the CVRR-ES scorer reads: 1 correct of 2 judged, 1 other verdict
    verdicts = judges.verdicts_for_run(run, "cvrr", "judge-test")
    predictions = [{**p, "judgment": verdicts[(p["request_id"], p["sample"])]} for p in scoring.run_predictions(run)]
    requests = [planned.request for planned in runner.plan(run)]
    metrics = scoring.score_predictions(cvrr.BENCHMARK, requests, predictions, judge=None)
    assert metrics["dimensions"][DIMENSION]["accuracy"] == 1 / 2
    assert metrics["dimensions"][DIMENSION]["other_verdicts"] == 1

    Judgment.objects.filter(prediction__run=run).delete()
    again = judges.judge_run(run, "cvrr", spec, batch_size=8)
    assert server.calls == 3 and (again.calls, again.from_cache) == (0, 3)  # zero calls: all cached
    assert Judgment.objects.get(prediction__request_id="q1:qa", prediction__run=run).verdict["pred"] == "correct"


@pytest.mark.django_db
def test_failed_calls_are_stored_as_failed_and_retried(server):
    run = cvrr_run("api-2", {"q1": "q1 waves"})
    server.script(Reply(status=400))
    spec = openai_spec(server)
    stats = judges.judge_run(run, "cvrr", spec)
    row = Judgment.objects.get(prediction__run=run)
    assert (stats.failed, row.parse_status, row.verdict) == (1, "failed", None) and "400" in row.error
    assert not ResponseCache.objects.exists()  # a failed call is never cached
    assert judges.verdicts_for_run(run, "cvrr", "judge-test") == {}  # no verdict from a failed call

    server.script(said("{'pred': 'correct', 'score': 4, 'reason': 'ok'}"))
    judges.judge_run(run, "cvrr", spec)
    row = Judgment.objects.get(prediction__run=run)
    assert (row.parse_status, row.verdict["pred"], row.error) == ("ok", "correct", "")


@pytest.mark.django_db
def test_llm_match_judge_for_file_scoring_rates_every_reference_and_caches(server):
    judge = judges.for_benchmark("blackswan", "openai:judge-test",
                                 backend_options={"base_url": server.base_url, **FAST},
                                 params={"temperature": 0})  # greedy, so cached (the authors sample at 0.4)
    references = ["He falls.", "He trips over a rock.", "The bike breaks."]
    request = EvalRequest("v1:detective_gen", "v1", "detective_gen", "What happened in the middle?", "…",
                          gold=references, n_samples=3)
    server.script(said("Reason: Same fall, fewer details.\nScore: 4"), said("Score: 2"),
                  said("I cannot rate this pair."))
    verdict = judge(request, "He fell off his bike.")
    assert server.calls == 3
    assert [user_text(body).split("Ground Truth:    \n")[1].split("\n")[0] for body in server.bodies] == references
    assert verdict["scores"] == [4, 2] and verdict["references"] == ["ref:0", "ref:1"]
    assert (verdict["pairs"], verdict["unparsed"], verdict["status"]) == (3, 1, "ok")
    assert blackswan.llm_match_scores(verdict) == [4, 2]  # what BlackSwan's scorer reads

    assert judge(request, "He fell off his bike.") == verdict and server.calls == 3  # cached: no call
    assert judge.stats.from_cache == 3
    with pytest.raises(judges.JudgeError):
        judge(EvalRequest("v1:detective_mcq", "v1", "detective_mcq", "", "", gold="A"), "A")


@pytest.mark.django_db
def test_maia_and_nleye_judges_for_file_scoring(server):
    options = {"backend_options": {"base_url": server.base_url, **FAST}}
    maia_judge = judges.for_benchmark("maia", "openai:judge-test", **options)
    question = EvalRequest("m1:oevqa", "m1", "oevqa", "Che cosa cucina?", "", gold=[f"Pasta {n}" for n in range(8)])
    server.script(said("Consistent with reference 2.\nVerdict: correct"))
    assert maia_judge(question, "Cucina la pasta.") == {"correct": True, "reason": "Consistent with reference 2.",
                                                        "status": "ok"}
    assert maia_judge(question, " ") == {"correct": False, "reason": "empty response", "status": "empty"}
    assert server.calls == 1  # the empty answer needed no call

    nleye_judge = judges.for_benchmark("nleye", "openai:judge-test", **options)
    payload = nleye_payload(1, human_explanations=["Playing ball breaks windows."])
    triplet = EvalRequest("n1:triplet:order1", "n1", "triplet", "", "", gold=1, answer_type="choice_12",
                          source=payload)
    server.script(said("2"))
    assert nleye_judge(triplet, "1, because the bat broke it.") == {"label": 2, "status": "ok"}
    assert "Explanation 2: Playing ball breaks windows." in user_text(server.bodies[-1])

    # the same judges over plain texts
    server.script(said("Verdict: incorrect"), said("{'pred': 'correct', 'score': 5, 'reason': 'same'}"))
    assert judges.judge_texts(maia_judge, "Legge.", [f"Pasta {n}" for n in range(8)], question="Che cosa cucina?") \
        == {"correct": False, "reason": "", "status": "ok"}
    cvrr_judge = judges.for_benchmark("cvrr", "openai:judge-test", **options)
    assert judges.judge_texts(cvrr_judge, "He waves.", "He waves his hand.", question="What does he do?")["pred"] \
        == "correct"
    assert "Question: What does he do?\nGround truth correct Answer: He waves his hand.\n" in \
        user_text(server.bodies[-1])
    with pytest.raises(judges.JudgeError, match="one ground-truth answer"):
        judges.judge_texts(cvrr_judge, "He waves.", ["He waves.", "He waves his hand."], question="What?")
    server.script(said("1 (Logical but different)"))
    assert judges.judge_texts(nleye_judge, "The bat broke it.", ["The bat broke the window."],
                              premise="A broken window", plausible="A boy swings a bat", other="A boy reads") \
        == {"label": 1, "status": "ok"}
    assert user_text(server.bodies[-1]).startswith("Context: A broken window.\n\nPlausible Hypothesis: A boy swings")
    assert user_text(server.bodies[-1]).endswith("Gold explanations:\n\nExplanation 1: The bat broke the window.")


@pytest.mark.django_db
def test_nleye_run_judges_only_explanations_of_correct_predictions(server):
    version = frozen_version("nleye", "ne-j", [("n1", nleye_payload(1), {})])
    run = EvaluationRun.objects.create(version=version, model_id="org/vlm", backend="openai", variants=["triplet"],
                                       input_strategy="text_only")
    item = version.items.get()
    for order, text in ((1, "1. The bat broke the window."), (2, "1. A book cannot break it.")):
        Prediction.objects.create(run=run, request_id=f"n1:triplet:order{order}", item=item, variant="triplet",
                                  prompt=[], raw_output=text)
    server.script(said("2"))
    stats = judges.judge_run(run, "nleye_explanation", openai_spec(server))
    # order 2 shows the gold hypothesis second, so "1" is wrong there and its explanation is not judged
    assert (stats.responses, stats.not_selected, stats.calls, server.calls) == (2, 1, 1, 1)
    assert judges.verdicts_for_run(run, "nleye_explanation", "judge-test") == {
        ("n1:triplet:order1", 0): {"label": 2, "status": "ok"}}


# --- Agreement with people ------------------------------------------------------------------------

@pytest.mark.django_db
def test_agreement_of_stored_verdicts_with_human_verdicts(server):
    run = cvrr_run("agree-1", {f"q{n}": f"answer {n}" for n in range(1, 6)})
    server.script(*(said(f"{{'pred': '{pred}', 'score': 3, 'reason': 'r'}}")
                    for pred in ("correct", "incorrect", "correct", "incorrect")), said("no verdict here"))
    judges.judge_run(run, "cvrr", openai_spec(server))
    human = {"q1:qa": "correct", "q2:qa": "incorrect", "q3:qa": "incorrect", "q4:qa": False, "q5:qa": "correct",
             "q6:qa": "correct"}
    report = judges.run_agreement(run, "cvrr", "judge-test", human)
    # compared: q1–q4; judge c,i,c,i against people c,i,i,i → 3 of 4 agree
    # p_o = 3/4; p_e = P(c)·P(c) + P(i)·P(i) = (2/4)(1/4) + (2/4)(3/4) = 1/2; kappa = (3/4 − 1/2) / (1 − 1/2)
    assert (report.n, report.accuracy) == (4, 3 / 4)
    assert report.cohens_kappa == pytest.approx((3 / 4 - 1 / 2) / (1 - 1 / 2))
    assert (report.judge_unusable, report.not_judged, report.human_items) == (1, 1, 6)  # q5 unparsed, q6 unknown
    assert report.confusion == {"correct|correct": 1, "correct|incorrect": 1, "incorrect|incorrect": 2}
    with pytest.raises(ValueError, match="q1:qa"):
        judges.run_agreement(run, "cvrr", "judge-test", {"q1:qa": "partially"})


def test_nleye_agreement_also_reports_valid_versus_not():
    judged = {("a", 0): {"label": 2}, ("b", 0): {"label": 1}, ("c", 0): {"label": 0}, ("d", 0): {"label": 2}}
    report = judges.agreement_report("nleye_explanation", judged, {"a": 2, "b": 0, "c": 0, "d": "2"})
    assert (report.n, report.accuracy) == (4, 3 / 4)
    # valid (2) or not: judge T,F,F,T vs people T,F,F,T → full agreement
    assert report.binary["accuracy"] == 1.0 and report.binary["cohens_kappa"] == pytest.approx(1.0)


# --- The command ----------------------------------------------------------------------------------

@pytest.mark.django_db
def test_judge_command_stores_verdicts_and_reports_agreement(server, tmp_path, register_model):
    register_model("judge-test", backend="openai", uses=["judge"])  # its endpoint given on the command line
    run = cvrr_run("cmd-1", {"q1": "q1 waves", "q2": "q2 sits"})
    server.script(said("{'pred': 'correct', 'score': 5, 'reason': 'same'}"),
                  said("{'pred': 'incorrect', 'score': 0, 'reason': 'different'}"))
    human = tmp_path / "human.jsonl"
    human.write_text("\n".join(json.dumps(r) for r in ({"request_id": "q1:qa", "label": "correct"},
                                                       {"request_id": "q2:qa", "label": "correct"})))
    out = StringIO()
    call_command("judge", "--run", str(run.pk), "--kind", "cvrr", "--judge-model", "judge-test",
                 "--judge-backend", "openai", "--judge-option", f"base_url={server.base_url}",
                 "--judge-option", "max_concurrency=1", "--human", str(human), stdout=out)
    text = out.getvalue()
    assert "2 judge calls" in text and "Stored: 2 ok, 0 unparsed, 0 failed" in text
    report = json.loads(text.split("Agreement with human verdicts: ", 1)[1])
    assert (report["n"], report["accuracy"]) == (2, 0.5)
    with pytest.raises(Exception, match="judges nleye runs"):
        call_command("judge", "--run", str(run.pk), "--kind", "nleye_explanation", "--judge-model", "x")


def test_llm_match_agreement_is_per_reference():
    judged = {("v1:forecaster_gen", 0, 0): {"score": 4}, ("v1:forecaster_gen", 0, 1): {"score": 2},
              ("v1:forecaster_gen", 1, 0): {"score": None}}
    human = {("v1:forecaster_gen", 0, 0): 4, ("v1:forecaster_gen", 0, 1): "3", ("v1:forecaster_gen", 1, 0): 5}
    report = judges.agreement_report("llm_match", judged, human)
    assert (report.n, report.accuracy, report.judge_unusable) == (2, 1 / 2, 1)
    with pytest.raises(ValueError, match="1–5"):
        judges.agreement_report("llm_match", judged, {("v1:forecaster_gen", 0, 0): 6})


@pytest.mark.django_db
def test_judgments_are_listed_read_only_in_the_admin(client, django_user_model):
    client.force_login(django_user_model.objects.create_superuser("root", "root@example.org", "pw"))
    admin_client = client
    run = cvrr_run("adm-1", {"q1": "q1 waves"})
    row = Judgment.objects.create(prediction=run.predictions.get(), kind="cvrr", judge_model="judge-test",
                                  judge_backend="openai", prompt=[], raw_verdict="{'pred': 'correct'}",
                                  verdict={"pred": "correct"}, parse_status="ok")
    page = admin_client.get("/admin/evaluation/judgment/")
    assert page.status_code == 200 and "judge-test" in page.content.decode()
    assert admin_client.get(f"/admin/evaluation/judgment/{row.pk}/change/").status_code == 200
    assert admin_client.get("/admin/evaluation/judgment/add/").status_code == 403


@pytest.mark.django_db
def test_score_command_judges_through_the_hook(server, tmp_path, monkeypatch, register_model):
    register_model("judge-test", backend="openai", uses=["judge"])  # its endpoint: $OPENAI_BASE_URL
    run = cvrr_run("score-1", {"q1": "q1 waves", "q2": "q2 sits", "q3": ""})
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    server.script(said("{'pred': 'correct', 'score': 5, 'reason': 'same'}"),
                  said("{'pred': 'incorrect', 'score': 0, 'reason': 'different'}"))
    out = tmp_path / "metrics.json"
    call_command("score", "--run", str(run.pk), "--out", str(out), "--judge-model", "openai:judge-test",
                 stdout=StringIO(), stderr=StringIO())
    metrics = json.loads(out.read_text())
    # q1 correct, q2 incorrect, q3 empty: judged incorrect without a call → 1 of 3
    assert server.calls == 2
    assert metrics["dimensions"][DIMENSION]["accuracy"] == pytest.approx(1 / 3)
    assert metrics["meta"]["models"]["judge"] == "judge-test"  # the registered model's id


@pytest.mark.django_db
def test_score_command_reuses_the_verdicts_the_judge_command_stored(server, tmp_path, monkeypatch, register_model):
    register_model("judge-test", backend="openai", uses=["judge"])
    run = cvrr_run("score-2", {"q1": "q1 waves", "q2": "q2 sits"})
    server.script(said("{'pred': 'correct', 'score': 4, 'reason': 'same'}"),
                  said("{'pred': 'incorrect', 'score': 1, 'reason': 'different'}"))
    judges.judge_run(run, "cvrr", openai_spec(server), batch_size=8)
    ResponseCache.objects.all().delete()  # only the stored judgments can answer now
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    out = tmp_path / "metrics.json"
    call_command("score", "--run", str(run.pk), "--out", str(out), "--judge-model", "openai:judge-test",
                 stdout=StringIO(), stderr=StringIO())
    assert server.calls == 2  # both verdicts came from the judge run, none from a new call
    assert json.loads(out.read_text())["dimensions"][DIMENSION]["accuracy"] == pytest.approx(1 / 2)


# --- The authors' LLM-Match settings are the defaults -------------------------------------------------------

def blackswan_gen_run(label: str) -> EvaluationRun:
    payload = {"kind": "video", "id": "v1", "preevent": 0.0, "event": 1.0, "postevent": 2.0, "end": 3.0,
               "task1_gt": ["He falls.", "He trips.", "He jumps."], "task2_gt": ["", "", ""],
               "task2_checkboxes": ["yes", "yes", "yes"], "task3_gt": "He falls off his bike.",
               "task3_checkboxes": ["yes", "no", "no"]}
    version = frozen_version("blackswan", label, [("v1", payload, {})])
    run = EvaluationRun.objects.create(version=version, model_id="org/vlm", backend="openai",
                                       variants=["reporter_gen"])
    Prediction.objects.create(run=run, request_id="v1:reporter_gen", item=version.items.get(), variant="reporter_gen",
                              prompt=[], raw_output="He fell off the bike.")
    return run


def test_llm_match_defaults_to_the_authors_judge_and_sampling():
    assert judges.default_model("llm_match") == "meta-llama/Llama-3.1-8B-Instruct"
    spec = runner.BackendSpec.make("openai", "judge-test", "", "", {})
    params = judges.Judge("llm_match", spec).params
    assert (params.temperature, params.max_new_tokens) == (0.4, 100)
    overridden = judges.Judge("llm_match", spec, params={"temperature": 0.0, "max_new_tokens": None}).params
    assert (overridden.temperature, overridden.max_new_tokens) == (0.0, 100)
    cvrr_params = judges.Judge("cvrr", spec).params  # no default given by its paper: greedy
    assert (cvrr_params.temperature, cvrr_params.max_new_tokens) == (0.0, judges.DEFAULT_MAX_NEW_TOKENS)
    with pytest.raises(judges.JudgeError, match="cvrr judge has no default model"):
        judges.default_model("cvrr")


@pytest.mark.django_db
def test_llm_match_sends_and_records_the_authors_parameters(server):
    run = blackswan_gen_run("lm-defaults")
    server.script(said("Reason: same.\nScore: 5"))
    judges.judge_run(run, "llm_match", openai_spec(server))
    body = server.bodies[0]
    assert (body["temperature"], body["max_tokens"]) == (0.4, 100)
    row = Judgment.objects.get(prediction__run=run)
    assert (row.params["temperature"], row.params["max_new_tokens"]) == (0.4, 100)
    assert not ResponseCache.objects.exists()  # sampled verdicts are not cached; the judgment is stored

    other = blackswan_gen_run("lm-override")
    server.script(said("Score: 4"))
    judges.judge_run(other, "llm_match", openai_spec(server), params={"temperature": 0.2, "max_new_tokens": 50})
    assert (server.bodies[1]["temperature"], server.bodies[1]["max_tokens"]) == (0.2, 50)
    assert Judgment.objects.get(prediction__run=other).params["temperature"] == 0.2


@pytest.mark.django_db
def test_the_judge_command_defaults_to_the_authors_judge(monkeypatch):
    run = blackswan_gen_run("cmd-default")
    asked = []

    def refuse(model, **options):
        asked.append(model)
        raise judges.JudgeError(f"cannot reach {model}")

    monkeypatch.setattr(judges, "registered_spec", refuse)
    with pytest.raises(CommandError, match="cannot reach meta-llama/Llama-3.1-8B-Instruct"):
        call_command("judge", "--run", str(run.pk), "--kind", "llm_match", stdout=StringIO())
    assert asked == ["meta-llama/Llama-3.1-8B-Instruct"]
