"""A generated C-VQA-Synthetic set imported as a release, answered by the tiny VLM and scored: accuracy per
template (original, counterfactual, drop) and the distribution of the chosen options, checked against the
stored predictions; then answers written to order, scored through `export_requests` and `score`."""

import json
from collections import Counter

import pytest
from django.core.management import call_command

from evaluation import demo, runner, runs
from evaluation.models import EvaluationRun, Prediction
from tests.release_fixtures import run_import

pytestmark = pytest.mark.django_db

TEMPLATES = [f"abs_counting_{n}" for n in range(1, 7)]
FORMS = ("original", "counterfactual")


def share(letters: list[str], letter: str):
    return letters.count(letter) / len(letters) if letters else None


def expected_templates(requests: dict, right: dict) -> dict:
    """{template: {form: accuracy}} from which request was answered right."""
    found: dict = {}
    for request_id, request in requests.items():
        found.setdefault(request.extra["type"], {}).setdefault(request.extra["form"], []).append(right[request_id])
    return {kind: {form: sum(marks) / len(marks) for form, marks in forms.items()} for kind, forms in found.items()}


def check_synthetic(synthetic: dict, requests: dict, right: dict, chosen: list[str]) -> None:
    assert sorted(synthetic["templates"]) == TEMPLATES
    for kind, accuracy in expected_templates(requests, right).items():
        block = synthetic["templates"][kind]
        assert block["n"] == 2
        assert (block["original_accuracy"], block["counterfactual_accuracy"]) == (
            accuracy["original"], accuracy["counterfactual"])
        assert block["drop"] == pytest.approx(accuracy["original"] - accuracy["counterfactual"])
    distribution = synthetic["option_distribution"]
    assert distribution == {**{letter: share(chosen, letter) for letter in "ABCD"}, "n": len(chosen)}
    golds = [request.gold for request in requests.values()]
    assert synthetic["gold_distribution"] == {**{letter: share(golds, letter) for letter in "ABCD"}, "n": 24}


def test_a_generated_set_is_imported_answered_and_scored_per_template(tmp_path, tiny_models_dir):
    call_command("cvqa_make_synthetic", "--per-template", "2", "--seed", "3", "--out", str(tmp_path / "set"))
    version = run_import("cvqa", tmp_path / "set", "synthetic-e2e")
    assert version.item_count == 12

    # the tiny VLM answers both questions of every item
    run = runs.create_run(version, model_id=str(tiny_models_dir / "qwen2-vl"), **demo.RUN_OPTIONS)
    run = runs.start_run(run, workers="local")
    assert run.status == EvaluationRun.Status.SUCCEEDED, run.message
    stored = {p.request_id: p for p in Prediction.objects.filter(run=run, sample_index=0)}
    requests = {p.request.request_id: p.request for p in runner.plan(run)}
    assert len(stored) == len(requests) == 24 and not any(p.error for p in stored.values())
    assert {r.extra["form"] for r in requests.values()} == set(FORMS)

    out = tmp_path / "metrics.json"
    call_command("score", "--run", str(run.pk), "--out", str(out))
    synthetic = json.loads(out.read_text())["synthetic"]
    right = {rid: p.parse_status == "ok" and p.parsed_answer == requests[rid].gold for rid, p in stored.items()}
    chosen = [p.parsed_answer for p in stored.values() if p.parse_status == "ok"]
    check_synthetic(synthetic, requests, right, chosen)

    # answers written to order: "B" to every original question, the right letter to every counterfactual
    exported = tmp_path / "requests.jsonl"
    call_command("export_requests", "--benchmark", "cvqa", "--version", version.label, "--out", str(exported))
    lines = [json.loads(line) for line in exported.read_text().splitlines()]
    assert sorted(line["request_id"] for line in lines) == sorted(requests)
    answers = {line["request_id"]: "B" if line["request_id"].endswith(":original") else line["gold"] for line in lines}
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text("".join(json.dumps({"request_id": rid, "response": text}) + "\n"
                                   for rid, text in answers.items()))
    call_command("score", "--benchmark", "cvqa", "--version", version.label, "--predictions", str(predictions),
                 "--out", str(out))
    synthetic = json.loads(out.read_text())["synthetic"]
    right = {rid: answers[rid] == request.gold for rid, request in requests.items()}
    check_synthetic(synthetic, requests, right, list(answers.values()))
    assert all(synthetic["templates"][kind]["counterfactual_accuracy"] == 1.0 for kind in TEMPLATES)
    originals_b = Counter(r.gold for r in requests.values() if r.extra["form"] == "original")["B"]
    assert synthetic["original_accuracy"] == originals_b / 12
    assert synthetic["option_distribution"]["B"] == (12 + sum(
        r.gold == "B" for r in requests.values() if r.extra["form"] == "counterfactual")) / 24


def test_a_generated_set_exports_as_it_was_written_and_imports_again(tmp_path):
    call_command("cvqa_make_synthetic", "--per-template", "2", "--seed", "5", "--out", str(tmp_path / "set"))
    written = tmp_path / "set" / "C-VQA-Synthetic"
    version = run_import("cvqa", tmp_path / "set", "synthetic-roundtrip")
    out = tmp_path / "export"
    call_command("export_benchmark", "cvqa", "--version", version.label, str(out))
    tables = list(out.rglob("C-VQA-Synthetic_questions.csv"))
    assert len(tables) == 1
    assert tables[0].read_bytes() == (written / "C-VQA-Synthetic_questions.csv").read_bytes()
    for picture in written.glob("*.png"):
        assert (tables[0].parent / picture.name).read_bytes() == picture.read_bytes()
    again = run_import("cvqa", out, "synthetic-reimported")
    assert again.checksum == version.checksum
