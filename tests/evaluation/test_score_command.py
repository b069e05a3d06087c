"""`manage.py export_requests` and `manage.py score` end to end on small frozen versions: the exported
lines, scoring a predictions file and a stored run, model flags, and clear errors."""

import json

import pytest
from django.core.management import CommandError

from evaluation.management.commands.score import Command as ScoreCommand
from evaluation.models import EvaluationRun, Prediction
from tests.conftest import cvqa_payload
from tests.request_files import SYNTHETIC, frozen, run_command

pytestmark = pytest.mark.django_db


@pytest.fixture
def cvqa_version(image):
    return frozen("cvqa", "c1", [("q1", cvqa_payload("two"), {"image": image}), ("q2", cvqa_payload("3"), {}),
                                 ("s1", SYNTHETIC, {})])


@pytest.fixture
def nleye_version():
    payload = {"kind": "triplet", "premise": "A wet floor.", "hypothesis1": "A man slips.",
               "hypothesis2": "A man dances.", "label": 1, "reasoning_category": "Physical",
               "time_direction": "forward"}
    return frozen("nleye", "n1", [("t1", payload, {}), ("t2", {**payload, "label": 2}, {})])


def export(tmp_path, slug: str, label: str, *args) -> list[dict]:
    path = tmp_path / f"{slug}-requests.jsonl"
    run_command("export_requests", "--benchmark", slug, "--version", label, "--out", str(path), *args)
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def write_predictions(tmp_path, rows: list[dict]):
    path = tmp_path / "preds.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def score(tmp_path, slug: str, label: str, predictions, *args) -> tuple[dict, str, str]:
    out_path = tmp_path / "metrics.json"
    out, err = run_command("score", "--benchmark", slug, "--version", label, "--predictions", str(predictions),
                           "--out", str(out_path), *args)
    return json.loads(out_path.read_text(encoding="utf-8")), out, err


def test_export_writes_one_line_per_request_with_the_contract_fields(tmp_path, cvqa_version, image):
    lines = export(tmp_path, "cvqa", "c1", "--seed", "4")
    by_id = {line["request_id"]: line for line in lines}

    assert list(by_id) == ["q1:original", "q1:counterfactual", "q2:original", "q2:counterfactual",
                           "s1:original", "s1:counterfactual"]
    first = by_id["q1:original"]
    assert (first["item_id"], first["variant"], first["gold"]) == ("q1", "original", 2)
    assert first["text"] == "How many cups are on the table?"
    assert first["source"] == cvqa_payload("two")
    assert "options" not in first and first["answer_type"] == "number"
    assert first["prompt"].endswith("Answer the question using a single word or phrase.")
    assert [(m["role"], m["kind"], m["file"], m["checksum"]) for m in first["media"]] == [
        ("image", "image", image.file.name, image.checksum)]
    setting = (first["input"], first["prompting"], first["frames"], first["seed"])
    assert setting == ("default", "standard", "uniform:8", 4)
    synthetic = by_id["s1:original"]
    assert sorted(synthetic["options"].values()) == ["12", "13", "16", "17"]
    assert synthetic["options"][synthetic["gold"]] == "17"  # the released answer B, wherever it is shown
    assert synthetic["text"].startswith("How many dots are there? Select the correct answer:")


def test_export_of_nleye_names_the_order_of_each_triplet_and_the_hypothesis_of_each_pair(tmp_path, nleye_version):
    by_id = {line["request_id"]: line for line in export(tmp_path, "nleye", "n1", "--variants", "triplet,pairs")}

    # t1: gold hypothesis1; order1 shows the gold first
    assert (by_id["t1:triplet:order1"]["order"], by_id["t1:triplet:order2"]["order"]) == ("12", "21")
    assert (by_id["t2:triplet:order1"]["order"], by_id["t2:triplet:order2"]["order"]) == ("21", "12")
    assert (by_id["t2:triplet:order1"]["gold"], by_id["t2:triplet:order2"]["gold"]) == (1, 2)
    assert (by_id["t1:pairs:h1"]["hypothesis"], by_id["t1:pairs:h2"]["hypothesis"]) == (1, 2)
    assert "order" not in by_id["t1:pairs:h1"] and "hypothesis" not in by_id["t1:triplet:order1"]
    assert by_id["t1:triplet:order1"]["input"] == "separate"
    assert len(export(tmp_path, "nleye", "n1", "--variants", "pairs")) == 4


def test_export_takes_the_strategies_and_frames_and_defaults_to_the_papers(tmp_path):
    payload = {"kind": "question", "video": "video1", "category": "Sentiment_A", "question": "Chi ride?",
               "answers": [f"Un bambino {i}" for i in range(8)]}
    frozen("maia", "m1", [("q1", payload, {})])
    (line,) = export(tmp_path, "maia", "m1")
    assert line["frames"] == "uniform:32"  # MAIA's main setting (§4)
    assert export(tmp_path, "maia", "m1", "--frames", "first")[0]["frames"] == "first"
    with pytest.raises(CommandError, match="does not use prompting 'cot'"):
        export(tmp_path, "maia", "m1", "--prompting", "cot")
    with pytest.raises(CommandError, match="Unknown frame policy"):
        export(tmp_path, "maia", "m1", "--frames", "every-other")


def test_score_a_predictions_file_end_to_end(tmp_path, cvqa_version):
    lines = {line["request_id"]: line for line in export(tmp_path, "cvqa", "c1", "--seed", "4")}
    synthetic_wrong = next(letter for letter in "ABCD" if letter != lines["s1:original"]["gold"])
    predictions = write_predictions(tmp_path, [
        {"request_id": "q1:original", "response": "Two."},  # right
        {"request_id": "q1:counterfactual", "response": "If one is removed, there would be 1 cup."},  # right
        {"request_id": "q2:original", "response": "I can't tell"},  # unparsed; q2:counterfactual missing
        {"request_id": "s1:original", "response": synthetic_wrong},
        {"request_id": "s1:counterfactual", "response": f"Answer: {lines['s1:counterfactual']['gold']}"},
        {"request_id": "zz:original", "response": "3"},  # names no request
    ])
    metrics, out, err = score(tmp_path, "cvqa", "c1", predictions, "--seed", "4")

    direct = metrics["real"]["numerical_direct"]
    assert (direct["original_accuracy"], direct["counterfactual_accuracy"], direct["drop"]) == (0.5, 0.5, 0.0)
    synthetic = metrics["synthetic"]
    assert (synthetic["original_accuracy"], synthetic["counterfactual_accuracy"], synthetic["drop"]) == (0.0, 1.0, -1.0)
    assert synthetic["option_distribution"][synthetic_wrong] == 0.5
    assert metrics["unparsed_rate"] == 1 / 5
    assert metrics["predictions"] == {"requests": 6, "answered": 5, "missing": 1, "unknown_requests": 1,
                                      "unknown_request_ids": ["zz:original"], "parser": "authors",
                                      "parser_disagreements": 0}
    assert metrics["meta"]["benchmark"] == "cvqa" and metrics["meta"]["version"] == "c1"
    assert metrics["meta"]["seed"] == 4 and metrics["meta"]["checksum"] == cvqa_version.checksum
    assert out.startswith("Scored 6 requests of cvqa:c1 (5 answered, 1 missing)")
    assert "1 predictions name no request" in err


def test_score_reports_model_based_metrics_as_not_computed_without_their_model(tmp_path, nleye_version):
    predictions = write_predictions(tmp_path, [{"request_id": "t1:triplet:order1", "response": "1. It is wet."},
                                               {"request_id": "t1:triplet:order2", "response": "2. It is wet."}])
    metrics, _, err = score(tmp_path, "nleye", "n1", predictions, "--clip-model", "/nowhere/clip")

    assert metrics["triplet"]["consistency_accuracy"] == 1 / 2
    assert metrics["triplet"]["explanations"]["computed"] is False
    assert metrics["meta"]["models"] == {"judge": None}
    assert "--clip-model is not used by nleye; ignored." in err
    with pytest.raises(CommandError, match="Unknown model 'some/llm': it is not in the model registry"):
        score(tmp_path, "nleye", "n1", predictions, "--judge-model", "some/llm")


def test_a_judge_model_judges_the_answers_that_have_no_precomputed_verdict(tmp_path, tiny_models_dir, tiny_registry):
    payload = {"kind": "qa", "dimension": "partial_actions", "video_id": "1", "question": "Does he open the door?",
               "answer": "No."}
    frozen("cvrr", "r1", [("p1", payload, {}), ("p2", payload, {})])
    predictions = write_predictions(tmp_path, [
        {"request_id": "p1:qa", "response": "He does not.", "judgment": {"pred": "correct", "score": 5}},
        {"request_id": "p2:qa", "response": "He opens it."}])
    judge = str(tiny_models_dir / "causal-lm")
    metrics, _, _ = score(tmp_path, "cvrr", "r1", predictions, "--judge-model", judge)

    # p1 keeps its precomputed verdict; the tiny random judge writes no readable verdict for p2, which
    # is therefore left out of the denominator and counted, not guessed
    partial = metrics["dimensions"]["partial_actions"]
    assert (partial["n"], partial["judged"], partial["correct"], partial["other_verdicts"]) == (2, 1, 1, 1)
    assert metrics["accuracy"] == 1.0 and metrics["mean_score"] == 5.0
    assert metrics["meta"]["models"] == {"judge": judge}
    assert metrics["meta"]["judge"]["model"] == judge and metrics["meta"]["judge"]["params"]["temperature"] == 0.0


def test_score_with_a_bertscore_model(tmp_path, tiny_models_dir, tiny_registry):
    payload = {"kind": "question", "video": "video1", "category": "Sentiment_A", "question": "Chi ride?",
               "answers": [f"Un bambino ride {i}" for i in range(8)]}
    frozen("maia", "m1", [("q1", payload, {})])
    predictions = write_predictions(tmp_path, [{"request_id": "q1:oevqa", "response": "Un bambino ride 3",
                                                "judgment": {"correct": True}}])
    model = str(tiny_models_dir / "nli")
    metrics, _, _ = score(tmp_path, "maia", "m1", predictions, "--bertscore-model", model, "--device", "cpu")

    assert metrics["oevqa"]["judge_accuracy"] == 1.0
    assert metrics["oevqa"]["similarity"]["bertscore"] == pytest.approx(1.0)
    assert metrics["oevqa"]["similarity"]["rouge1"] == 1.0
    assert metrics["meta"]["models"] == {"judge": None, "bertscore": model}
    assert metrics["vsv"]["n"] == 0 and metrics["aggregate_accuracy"] is None  # no statements, no pools


def test_score_a_stored_run(tmp_path, nleye_version):
    run = EvaluationRun.objects.create(version=nleye_version, model_id="some/vlm", input_strategy="separate",
                                       variants=["triplet"])
    items = {item.external_id: item for item in nleye_version.items.all()}
    for request_id, text, error in (("t1:triplet:order1", "1", ""), ("t1:triplet:order2", "2", ""),
                                    ("t2:triplet:order1", "", "CUDA out of memory")):
        Prediction.objects.create(run=run, request_id=request_id, item=items[request_id[:2]], variant="triplet",
                                  prompt=[], raw_output=text, error=error)
    out_path = tmp_path / "run-metrics.json"
    out, _ = run_command("score", "--run", str(run.pk), "--out", str(out_path))
    metrics = json.loads(out_path.read_text())

    assert metrics["triplet"]["consistency_accuracy"] == 1 / 2
    assert metrics["predictions"]["missing"] == 2  # the failed prediction counts as missing
    assert "pairs" not in metrics  # the run asked only for triplets
    assert (metrics["meta"]["run"], metrics["meta"]["model"]) == (run.pk, "some/vlm")
    with pytest.raises(CommandError, match="is on nleye:n1"):
        run_command("score", "--run", str(run.pk), "--version", "other", "--out", str(out_path))


def test_score_errors_say_what_to_fix(tmp_path, nleye_version):
    out_path = str(tmp_path / "m.json")
    with pytest.raises(CommandError, match="either --predictions FILE or --run RUN_ID"):
        run_command("score", "--benchmark", "nleye", "--version", "n1", "--out", out_path)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"request_id": "t1:triplet:order1", "response": "1"}\n{"response": "2"}\n')
    with pytest.raises(CommandError, match="bad.jsonl line 2: `request_id` must be a non-empty string"):
        run_command("score", "--benchmark", "nleye", "--version", "n1", "--predictions", str(bad), "--out", out_path)
    twice = write_predictions(tmp_path, [{"request_id": "t1:pairs:h1", "response": "3"}] * 2)
    with pytest.raises(CommandError, match="Two predictions for request 't1:pairs:h1' sample 0"):
        run_command("score", "--benchmark", "nleye", "--version", "n1", "--predictions", str(twice), "--out", out_path)
    with pytest.raises(CommandError, match="has no version 'n9'"):
        run_command("score", "--benchmark", "nleye", "--version", "n9", "--predictions", str(twice), "--out", out_path)


def test_model_flags_alone_name_the_authors_models(tmp_path, nleye_version):
    parser = ScoreCommand().create_parser("manage.py", "score")
    given = vars(parser.parse_args(["--run", "1", "--out", "m.json", "--clip-model", "--judge-model"]))
    assert given["clip_model"] == "openai/clip-vit-large-patch14"
    assert given["judge_model"] == "default"
    unset = vars(parser.parse_args(["--run", "1", "--out", "m.json"]))
    assert unset["clip_model"] == unset["judge_model"] == ""  # not given: not computed
    assert ScoreCommand._default_judge({"run": None, "benchmark": "blackswan"}) == "meta-llama/Llama-3.1-8B-Instruct"
    predictions = write_predictions(tmp_path, [{"request_id": "t1:triplet:order1", "response": "1. It is wet."}])
    with pytest.raises(CommandError, match="nleye_explanation judge has no default model"):
        score(tmp_path, "nleye", "n1", predictions, "--judge-model")
