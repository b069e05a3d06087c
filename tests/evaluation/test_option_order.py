"""Release order is the benchmark: options are shown as released unless a run asks for `shuffled:<seed>`,
which is checked, recorded on the run and on each request, shown with the results, and must match
between export, evaluation and scoring."""

import io
import json

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse
from django.utils.html import escape

from evaluation import runner, runs
from evaluation.benchmarks.base import RELEASE_ORDER, ordered_options, parse_option_order
from evaluation.models import EvaluationRun, Prediction
from evaluation.results import run_label
from tests.conftest import cvqa_payload
from tests.evaluation.test_score_command import export, score, write_predictions
from tests.request_files import SYNTHETIC, frozen

pytestmark = pytest.mark.django_db


@pytest.fixture
def cvqa_version(image, register_model):
    register_model("org/chat-model", backend="openai")  # what the form and the command pick
    return frozen("cvqa", "c1", [("q1", cvqa_payload("two"), {"image": image}), ("s1", SYNTHETIC, {})])


def api_run(version, **options) -> EvaluationRun:
    return runs.create_run(version, model_id="org/chat-model", backend="openai", workers="celery", **options)


@pytest.mark.parametrize(("given", "stored"), [
    ("release", "release"), ("", "release"), (None, "release"), ("shuffled:7", "shuffled:7"),
    (" shuffled:007 ", "shuffled:7"), ("shuffled:-2", "shuffled:-2")])
def test_option_orders_are_read_and_normalised(given, stored):
    assert parse_option_order(given) == stored


@pytest.mark.parametrize("bad", ["shuffled:x", "shuffled:", "foo", "shuffled", "random:3", "Release"])
def test_a_malformed_option_order_is_refused_with_the_accepted_forms(bad):
    with pytest.raises(ValueError, match="use 'release' .* or 'shuffled:<seed>'"):
        parse_option_order(bad)


def test_the_release_order_keeps_letters_and_gold_of_the_release():
    shown = ordered_options(["x", "y", "z"], 1, RELEASE_ORDER, "r1")
    assert shown.options == {"A": "x", "B": "y", "C": "z"} and shown.gold == "B" and shown.seed is None
    drawn = {tuple(ordered_options(["x", "y", "z"], 1, f"shuffled:{s}", "r1").order) for s in range(10)}
    assert len(drawn) > 1


# --- export_requests and score ---------------------------------------------------------------------------

def test_export_shows_the_release_by_default_and_a_shuffled_order_when_asked(tmp_path, cvqa_version):
    by_id = {line["request_id"]: line for line in export(tmp_path, "cvqa", "c1", "--seed", "9")}
    released = by_id["s1:original"]
    assert released["text"] == SYNTHETIC["query"]  # the question text as released
    assert released["prompt"].startswith(SYNTHETIC["query"])
    assert released["options"] == {"A": "16", "B": "17", "C": "12", "D": "13"} and released["gold"] == "B"
    assert {line["option_order"] for line in by_id.values()} == {"release"}

    shuffled = {line["request_id"]: line for line in export(tmp_path, "cvqa", "c1", "--option-order", "shuffled:5")}
    line = shuffled["s1:original"]
    assert line["option_order"] == "shuffled:5"
    assert line["options"][line["gold"]] == "17"
    assert line["text"].endswith("  ".join(f"{k}:{v}" for k, v in line["options"].items()))


@pytest.mark.parametrize("bad", ["shuffled:x", "foo"])
def test_export_and_score_refuse_a_malformed_option_order(tmp_path, cvqa_version, bad):
    with pytest.raises(CommandError, match=f"Unknown option order '{bad}'"):
        export(tmp_path, "cvqa", "c1", "--option-order", bad)
    predictions = write_predictions(tmp_path, [{"request_id": "s1:original", "response": "B"}])
    with pytest.raises(CommandError, match=f"Unknown option order '{bad}'"):
        score(tmp_path, "cvqa", "c1", predictions, "--option-order", bad)


def test_a_shuffled_order_applies_only_where_options_are_released(tmp_path):
    payload = {"kind": "question", "video": "video1", "category": "Sentiment_A", "question": "Chi ride?",
               "answers": [f"Un bambino {i}" for i in range(8)]}
    frozen("maia", "m1", [("q1", payload, {})])
    with pytest.raises(CommandError, match="maia shows no release options to reorder"):
        export(tmp_path, "maia", "m1", "--option-order", "shuffled:1")


def _shuffled_seed_moving_both_golds() -> int:
    """A seed under which both synthetic golds land on another letter than the release's."""
    for seed in range(100):
        golds = [ordered_options(list("abcd"), 1, f"shuffled:{seed}", f"s1:{form}").gold
                 for form in ("original", "counterfactual")]
        if "B" not in golds:
            return seed
    raise AssertionError("no such seed")


def test_score_uses_the_order_the_predictions_were_made_with(tmp_path, cvqa_version):
    seed = _shuffled_seed_moving_both_golds()
    order = f"shuffled:{seed}"
    lines = {line["request_id"]: line for line in export(tmp_path, "cvqa", "c1", "--option-order", order)}
    predictions = write_predictions(tmp_path, [{"request_id": rid, "response": lines[rid]["gold"]}
                                               for rid in ("s1:original", "s1:counterfactual")])

    metrics, _, _ = score(tmp_path, "cvqa", "c1", predictions, "--option-order", order)
    assert metrics["synthetic"]["original_accuracy"] == metrics["synthetic"]["counterfactual_accuracy"] == 1.0
    assert metrics["meta"]["option_order"] == order

    as_release, _, _ = score(tmp_path, "cvqa", "c1", predictions)  # the same letters read as the release's
    assert as_release["synthetic"]["original_accuracy"] == as_release["synthetic"]["counterfactual_accuracy"] == 0.0
    assert as_release["meta"]["option_order"] == "release"

    released = write_predictions(tmp_path, [{"request_id": "s1:original", "response": "B"},
                                            {"request_id": "s1:counterfactual", "response": "Answer: B"}])
    metrics, _, _ = score(tmp_path, "cvqa", "c1", released)  # a file made on the release scores by default
    assert metrics["synthetic"]["original_accuracy"] == metrics["synthetic"]["counterfactual_accuracy"] == 1.0


def test_score_of_a_stored_run_uses_its_order_and_refuses_another(tmp_path, cvqa_version):
    run = api_run(cvqa_version, option_order="shuffled:3")
    planned = {p.request.request_id: p for p in runner.plan(run)}
    gold = planned["s1:original"].request.gold
    Prediction.objects.create(run=run, request_id="s1:original", item_id=planned["s1:original"].item_pk,
                              variant="original", prompt=[], raw_output=gold)
    out_path = tmp_path / "m.json"
    call_command("score", "--run", str(run.pk), "--out", str(out_path), stdout=io.StringIO())
    metrics = json.loads(out_path.read_text())
    assert metrics["synthetic"]["original"]["accuracy"] == 1.0 and metrics["meta"]["option_order"] == "shuffled:3"
    call_command("score", "--run", str(run.pk), "--option-order", "shuffled:3", "--out", str(out_path),
                 stdout=io.StringIO())
    with pytest.raises(CommandError, match="made with option order 'shuffled:3', not --option-order release"):
        call_command("score", "--run", str(run.pk), "--option-order", "release", "--out", str(out_path))
    with pytest.raises(CommandError, match="Unknown option order 'shuffled:x'"):
        call_command("score", "--run", str(run.pk), "--option-order", "shuffled:x", "--out", str(out_path))


# --- runs --------------------------------------------------------------------------------------------------

def test_a_run_records_its_option_order_and_its_requests_follow_it(cvqa_version):
    default = api_run(cvqa_version)
    assert default.option_order == "release"
    request = {p.request.request_id: p.request for p in runner.plan(default)}["s1:original"]
    assert request.text == SYNTHETIC["query"] and request.extra["option_strategy"] == "release"

    shuffled = api_run(cvqa_version, option_order=" shuffled:04")
    shuffled.refresh_from_db()
    assert shuffled.option_order == "shuffled:4"
    request = {p.request.request_id: p.request for p in runner.plan(shuffled)}["s1:original"]
    assert request.extra["option_strategy"] == "shuffled:4"
    assert request.extra["option_order"] == ordered_options(list("abcd"), 1, "shuffled:4", "s1:original").order


@pytest.mark.parametrize(("order", "message"), [
    ("shuffled:x", "Unknown option order 'shuffled:x'"), ("foo", "Unknown option order 'foo'")])
def test_create_run_refuses_a_malformed_option_order(cvqa_version, order, message):
    with pytest.raises(runs.RunConfigError, match=message):
        api_run(cvqa_version, option_order=order)
    assert not EvaluationRun.objects.exists()


def test_evaluate_refuses_a_malformed_option_order_before_the_run_exists(cvqa_version):
    with pytest.raises(CommandError, match="Unknown option order 'shuffled:x'"):
        call_command("evaluate", "--benchmark", "cvqa", "--version", "c1", "--model", "org/chat-model",
                     "--backend", "openai", "--option-order", "shuffled:x", stdout=io.StringIO(),
                     stderr=io.StringIO())
    assert not EvaluationRun.objects.exists()


def run_form(version, **overrides) -> dict:
    data = {"version": version.pk, "model_id": "org/chat-model", "backend": "openai", "prompting": "standard",
            "batch_size": 1, "chunk_size": 64, "seed": 0, "describer_backend": "transformers"}
    return {**data, **overrides}


def test_the_run_form_takes_an_option_order_and_refuses_a_malformed_one(cvqa_version, researcher_client):
    response = researcher_client.post(reverse("runs"), run_form(cvqa_version, option_order="shuffled:x"))
    assert response.status_code == 400
    assert "Unknown option order" in " ".join(response.context["form"].errors["option_order"])
    assert not EvaluationRun.objects.exists()

    response = researcher_client.post(reverse("runs"), run_form(cvqa_version, option_order="shuffled:2"))
    assert response.status_code == 302
    run = EvaluationRun.objects.get()
    assert run.option_order == "shuffled:2"
    researcher_client.post(reverse("runs"), run_form(cvqa_version))  # left out: the release order
    assert EvaluationRun.objects.order_by("-pk").first().option_order == "release"


def test_run_and_result_pages_show_the_option_order(cvqa_version, researcher, researcher_client):
    run = api_run(cvqa_version, option_order="shuffled:6", user=researcher)
    assert '<dd id="run-option-order">shuffled:6</dd>' in researcher_client.get(f"/runs/{run.pk}/").content.decode()
    EvaluationRun.objects.filter(pk=run.pk).update(status=EvaluationRun.Status.SUCCEEDED)
    page = researcher_client.get(reverse("results-run", args=[run.pk])).content.decode()
    assert '<dd id="result-option-order">shuffled:6</dd>' in page
    meta = researcher_client.get(reverse("results-run-json", args=[run.pk])).json()["meta"]
    assert meta["option_order"] == "shuffled:6"
    board = researcher_client.get(reverse("results-version", args=[cvqa_version.pk])).content.decode()
    assert escape("standard · shuffled:6") in board
    assert run_label(run) == f"#{run.pk} chat-model (shuffled:6)"
