"""Baselines stored as evaluation runs: seeded random, NL-EYE's dumb pixel on images with known corner
pixels, NLI entailment with the tiny NLI model, MAIA's unimodal baseline with the tiny causal LM."""

import math
import random
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from PIL import Image

from evaluation import baseline_runs, runner, scoring
from evaluation.benchmarks.base import derived_seed
from evaluation.benchmarks.nleye import benchmark as nleye
from evaluation.models import EvaluationRun, Prediction
from generation.backends import registry
from tests.conftest import ingest_path
from tests.eval_support import frozen_version

PLAUSIBLE, IMPLAUSIBLE = "A boy swings a bat at a ball.", "A boy reads a book in bed."


def triplet_payload(label: int, premise: str = "A window is broken.") -> dict:
    hypotheses = (PLAUSIBLE, IMPLAUSIBLE) if label == 1 else (IMPLAUSIBLE, PLAUSIBLE)
    return {"kind": "triplet", "premise": premise, "hypothesis1": hypotheses[0], "hypothesis2": hypotheses[1],
            "label": label, "explanation": "The ball broke the window.", "reasoning_category": "physical"}


def outputs(run) -> dict[str, str]:
    return dict(Prediction.objects.filter(run=run, sample_index=0).values_list("request_id", "raw_output"))


def luma(rgb) -> int:
    """PIL's own RGB → L conversion of one pixel (the rule the baseline documents)."""
    return Image.new("RGB", (1, 1), rgb).convert("L").getpixel((0, 0))


def half_up(value: float) -> int:
    return math.floor(value + 0.5)


# --- Random --------------------------------------------------------------------------------------

@pytest.mark.django_db
def test_random_baseline_is_seeded_per_request_and_reproducible():
    version = frozen_version("nleye", "rnd-1", [(f"n{i}", triplet_payload(1 + i % 2), {}) for i in range(3)])
    run = baseline_runs.run_baseline(version, "random", seed=3)
    assert (run.backend, run.model_id, run.status) == ("baseline", "random:seed=3", "succeeded")
    got = outputs(run)
    requests = {p.request.request_id: p.request for p in runner.plan(run)}
    assert set(got) == set(requests) and len(got) == 12
    for request_id, request in requests.items():
        choices = ["1", "2"] if request.variant == "triplet" else [str(s) for s in range(1, 11)]
        assert got[request_id] == random.Random(derived_seed(3, request_id)).choice(choices)
    assert set(Prediction.objects.filter(run=run).values_list("parse_status", flat=True)) == {"ok"}

    assert outputs(baseline_runs.run_baseline(version, "random", seed=3)) == got  # same seed, same answers
    other = outputs(baseline_runs.run_baseline(version, "random", seed=4))
    assert other == {rid: random.Random(derived_seed(4, rid)).choice(
        ["1", "2"] if requests[rid].variant == "triplet" else [str(s) for s in range(1, 11)]) for rid in requests}
    assert other != got


@pytest.mark.django_db
def test_random_letters_come_from_the_shown_options_and_open_requests_get_none():
    statements = {"true_statements": [f"Il cuoco taglia {n} pomodori." for n in range(8)],
                  "false_statements": [f"Il cuoco lava {n} piatti." for n in range(8)]}
    payload = {"kind": "question", "video": "video1", "category": "Sentiment_A", "question": "Che cosa fa il cuoco?",
               "answers": [f"Taglia pomodori {n}." for n in range(8)], **statements}
    version = frozen_version("maia", "rnd-maia", [("q1", payload, {})])
    run = baseline_runs.run_baseline(version, "random", seed=0)
    got = outputs(run)
    assert sorted(got) == [f"q1:vsv:{n}" for n in range(8)]  # the open question has no random answer
    assert set(got.values()) <= {"A", "B"}
    assert (run.status, run.total_predictions) == ("succeeded", 8)
    assert "1 requests of other answer types have no random answer" in run.message

    cvrr_version = frozen_version("cvrr", "rnd-cvrr", [("c1", {"kind": "qa", "dimension": "partial_actions",
                                                               "video_id": "v", "question": "Q?", "answer": "A"}, {})])
    before = EvaluationRun.objects.count()
    with pytest.raises(baseline_runs.BaselineError, match="no answer for any request"):
        baseline_runs.run_baseline(cvrr_version, "random")
    assert EvaluationRun.objects.count() == before  # nothing stored


# --- Dumb pixel ----------------------------------------------------------------------------------

def corner_image(path, corner, marker) -> object:
    """A 16x16 image whose upper-left pixel is `corner`; `marker` at (8, 8) keeps every file distinct."""
    image = Image.new("RGB", (16, 16), (90, 90, 90))
    image.putpixel((0, 0), corner)
    image.putpixel((8, 8), marker)
    image.save(path)
    return path


@pytest.mark.django_db
def test_dumb_pixel_picks_the_brighter_corner_in_both_orders(tmp_path, curator):
    blue = (0, 0, 255)
    corners = {  # item → (label, hypothesis1 corner, hypothesis2 corner)
        "a": (1, (200, 200, 200), (10, 10, 10)),  # gold brighter: right in both orders
        "b": (2, (50, 50, 50), blue),  # gold (blue, darker luma) loses: wrong in both orders
        "c": (1, (120, 120, 120), (120, 120, 120)),  # equal: hypothesis 1, which is the gold here
    }
    items = []
    for n, (external_id, (label, first, second)) in enumerate(corners.items()):
        media = {role: ingest_path(corner_image(tmp_path / f"{external_id}-{role}.png", corner, (n, k, 7)),
                                   user=curator, probe=False)
                 for k, (role, corner) in enumerate((("premise", (255, 255, 255)), ("hypothesis1", first),
                                                     ("hypothesis2", second)))}
        items.append((external_id, triplet_payload(label), media))
    version = frozen_version("nleye", "px-1", items)
    run = baseline_runs.run_baseline(version, "dumb_pixel")
    assert (run.model_id, run.input_strategy, run.status) == ("dumb_pixel", "separate", "succeeded")

    got = outputs(run)
    assert luma(blue) < 50
    assert [got[f"{i}:triplet:order1"] for i in "abc"] == ["1", "2", "1"]
    assert [got[f"{i}:triplet:order2"] for i in "abc"] == ["2", "1", "2"]  # the same hypothesis both times
    scores = {"a": (200, 10), "b": (50, luma(blue)), "c": (120, 120)}
    for external_id, (first, second) in scores.items():
        assert got[f"{external_id}:pairs:h1"] == str(1 + half_up(9 * first / 255))
        assert got[f"{external_id}:pairs:h2"] == str(1 + half_up(9 * second / 255))
    assert got["a:pairs:h1"] == "8" and got["a:pairs:h2"] == "1"
    record = Prediction.objects.get(run=run, request_id="b:triplet:order1").inputs
    assert record["upper_left_luma"] == {"hypothesis1": 50, "hypothesis2": luma(blue)}

    requests = [p.request for p in runner.plan(run)]
    metrics = scoring.score_predictions(nleye.BENCHMARK, requests, scoring.run_predictions(run))
    assert metrics["triplet"]["consistency_accuracy"] == 2 / 3  # a and c
    assert metrics["pairs"]["order_faithful_accuracy"] == 1 / 3  # only a: b's gold scores lower, c ties


@pytest.mark.django_db
def test_dumb_pixel_is_only_for_nleye():
    version = frozen_version("cvrr", "px-cvrr", [("c1", {"kind": "qa", "dimension": "partial_actions",
                                                         "video_id": "v", "question": "Q?", "answer": "A"}, {})])
    with pytest.raises(baseline_runs.BaselineError, match="defined for nleye"):
        baseline_runs.run_baseline(version, "dumb_pixel")


# --- NLI -----------------------------------------------------------------------------------------

@pytest.mark.django_db
def test_nli_baseline_picks_the_higher_entailment_and_scales_it(tiny_models_dir):
    model = str(tiny_models_dir / "nli")
    payloads = {"n1": triplet_payload(1), "n2": triplet_payload(2, premise="The floor is wet and a sign warns."),
                "n3": triplet_payload(1, premise="Glass lies on the grass.")}
    version = frozen_version("nleye", "nli-1", [(k, v, {}) for k, v in payloads.items()])
    run = baseline_runs.run_baseline(version, "nli", models=[model])
    assert (run.model_id, run.input_strategy, run.status) == (f"nli:{model}", "text_only", "succeeded")
    assert run.resolved_revision == registry.resolve_revision("nli", model)
    got = outputs(run)

    backend = registry.load_backend("nli", model)
    for external_id, payload in payloads.items():
        p1, p2 = backend.entailment([payload["premise"]] * 2, [payload["hypothesis1"], payload["hypothesis2"]])
        record = Prediction.objects.get(run=run, request_id=f"{external_id}:pairs:h1").inputs
        assert record["entailment"]["hypothesis1"] == pytest.approx(p1, abs=1e-6)
        assert record["entailment"]["hypothesis2"] == pytest.approx(p2, abs=1e-6)
        chosen = "hypothesis2" if p2 > p1 else "hypothesis1"
        for order in (1, 2):
            request = next(p.request for p in runner.plan(run) if p.request.request_id ==
                           f"{external_id}:triplet:order{order}")
            assert got[request.request_id] == str(request.extra["shown"].index(chosen))
            # order-consistent: both orders name the same source hypothesis
            assert request.extra["shown"][int(got[request.request_id])] == chosen
        assert got[f"{external_id}:pairs:h1"] == str(1 + half_up(9 * p1))
        assert got[f"{external_id}:pairs:h2"] == str(1 + half_up(9 * p2))

    with pytest.raises(baseline_runs.BaselineError, match="one NLI model"):
        baseline_runs.run_baseline(version, "nli")


# --- MAIA unimodal -------------------------------------------------------------------------------

def test_unimodal_choice_takes_the_best_statement_under_any_model():
    scores = {"m1": {"A": -2.0, "B": -1.5}, "m2": {"A": -1.0, "B": -3.0}}
    assert baseline_runs.unimodal_choice(scores, ["A", "B"]) == ("A", "m2", False)  # −1.0 is the highest
    assert baseline_runs.unimodal_choice({"m1": {"A": -4.0, "B": -0.5}}, ["A", "B"]) == ("B", "m1", False)
    assert baseline_runs.unimodal_choice({"m1": {"A": -1.0, "B": -1.0}}, ["A", "B"]) == ("A", "m1", True)
    assert baseline_runs.unimodal_choice({"m1": {"A": math.nan, "B": -9.0}}, ["A", "B"]) == ("B", "m1", False)
    with pytest.raises(ValueError):
        baseline_runs.unimodal_choice({"m1": {"A": math.nan, "B": math.nan}}, ["A", "B"])


@pytest.mark.django_db
def test_unimodal_baseline_answers_the_more_probable_statement(tiny_models_dir):
    model = str(tiny_models_dir / "causal-lm")
    trues = ["Il cuoco taglia i pomodori in cucina.", "La donna sorride al bambino.", "Il cane corre nel parco.",
             "Piove sulla città.", "Il ragazzo legge un libro.", "La squadra vince la partita.",
             "Il treno arriva in stazione.", "La nonna prepara la pasta."]
    falses = ["Il cuoco lava i pomodori in cucina.", "La donna piange al bambino.", "Il gatto corre nel parco.",
              "Nevica sulla città.", "Il ragazzo scrive un libro.", "La squadra perde la partita.",
              "Il treno parte dalla stazione.", "La nonna mangia la pasta."]
    payload = {"kind": "question", "video": "video1", "category": "SpazialeParziale_A", "question": "Che succede?",
               "answers": [f"Risposta {n}." for n in range(8)], "true_statements": trues, "false_statements": falses}
    version = frozen_version("maia", "uni-1", [("q1", payload, {})])
    run = baseline_runs.run_baseline(version, "unimodal", models=[model], seed=5)
    assert (run.model_id, run.variants, run.status) == (f"unimodal:{model}", ["vsv"], "succeeded")
    got = outputs(run)
    requests = [p.request for p in runner.plan(run)]
    assert sorted(got) == sorted(r.request_id for r in requests) and len(requests) == 8

    backend = registry.load_backend("causal_lm", model)
    right = 0
    for request in requests:
        letters = list(request.options)
        a, b = backend.score_logprob([request.options[letter] for letter in letters])
        expected = letters[1] if b > a else letters[0]
        assert got[request.request_id] == expected
        prediction = Prediction.objects.get(run=run, request_id=request.request_id)
        assert (prediction.parse_status, prediction.parsed_answer) == ("ok", expected)
        assert prediction.inputs["chosen"] == {"letter": expected, "model": model, "tie": a == b}
        right += expected == request.gold
    # the letter of the true statement varies with the seed: the baseline reads statements, not positions
    assert {r.extra["order"][0] for r in requests} == {"true", "false"}
    chose_true = sum(r.extra["order"][letter_index(got[r.request_id])] == "true" for r in requests)
    assert chose_true == right

    with pytest.raises(baseline_runs.BaselineError, match="answers variants vsv"):
        baseline_runs.run_baseline(version, "unimodal", models=[model], variants=["oevqa"])


def letter_index(letter: str) -> int:
    return "AB".index(letter)


# --- The command ---------------------------------------------------------------------------------

@pytest.mark.django_db
def test_run_baseline_command(register_model):
    frozen_version("nleye", "cmd-1", [("n1", triplet_payload(1), {})])
    out = StringIO()
    call_command("run_baseline", "--benchmark", "nleye", "--version", "cmd-1", "--baseline", "random", "--seed", "7",
                 "--variants", "triplet", stdout=out)
    run = EvaluationRun.objects.get(model_id="random:seed=7")
    assert f"Run {run.pk}: random:seed=7" in out.getvalue() and "succeeded" in out.getvalue()
    assert sorted(outputs(run)) == ["n1:triplet:order1", "n1:triplet:order2"]
    with pytest.raises(CommandError, match="Unknown model 'x': it is not in the model registry"):
        call_command("run_baseline", "--benchmark", "nleye", "--version", "cmd-1", "--baseline", "unimodal",
                     "--model", "x")
    register_model("x", backend="causal_lm", uses=["baseline"])
    with pytest.raises(CommandError, match="defined for maia"):
        call_command("run_baseline", "--benchmark", "nleye", "--version", "cmd-1", "--baseline", "unimodal",
                     "--model", "x")
