"""Predictions in and out of the evaluation kits (evaluation/kits/): a version's requests exported in
lmms-eval's per-sample JSON Lines and VLMEvalKit's TSV, filled as each kit fills them and scored with
`manage.py score --predictions-format` to the same metrics as the same answers in the platform's own
format; a stored run's predictions exported in both layouts with gold and correct columns that match the
run's readings; malformed kit files refused with the line or row named; the results pages' export form."""

import csv
import hashlib
import importlib.util
import json
import shutil

import pytest
from django.core.management import CommandError
from django.urls import reverse

from evaluation import kits, results, runner
from evaluation.kits import tables
from evaluation.models import EvaluationRun, Prediction
from generation.models import Job
from tests.request_files import (
    EXPECTED_CORRECT,
    answers_for,
    export,
    fill_vlmevalkit,
    frozen,
    kit_version,
    platform_lines,
    platform_metrics,
    read_tsv,
    run_command,
    score,
    stored_run,
    without_meta,
    write_lmms_eval,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def version(image):
    return kit_version(image)


# --- lmms-eval ---------------------------------------------------------------------------------------

def test_requests_in_lmms_eval_samples_carry_the_request_its_gold_and_prompt(tmp_path, version, image):
    lines = platform_lines(tmp_path)
    samples = [json.loads(line) for line in export(tmp_path, "lmms-eval", "samples.jsonl").splitlines()]

    assert [s["doc_id"] for s in samples] == list(range(len(lines))) == list(range(8))
    for sample, line in zip(samples, lines, strict=True):
        assert sample["request_id"] == sample["doc"]["request_id"] == line["request_id"]
        assert sample["target"] == line["gold"] and sample["arguments"] == [line["prompt"]]
        assert (sample["resps"], sample["filtered_resps"]) == ([], [])
        assert sample["doc"] == {key: value for key, value in line.items() if key not in ("gold", "prompt")}
        assert sample["prompt_hash"] == hashlib.sha256(line["prompt"].encode()).hexdigest()
        assert sample["target_hash"] == hashlib.sha256(str(line["gold"]).encode()).hexdigest()
        assert sample["doc_hash"] == hashlib.sha256(
            json.dumps(sample["doc"], indent=2, ensure_ascii=False).encode()).hexdigest()
    by_id = {s["request_id"]: s for s in samples}
    assert by_id["q1:original"]["doc"]["media"][0]["file"] == image.file.name
    assert by_id["s1:original"]["doc"]["options"] == {"A": "16", "B": "17", "C": "12", "D": "13"}


def test_lmms_eval_round_trip_scores_like_the_platform_format(tmp_path, version):
    answers = answers_for(platform_lines(tmp_path))
    path = write_lmms_eval(tmp_path, answers)

    metrics = score(tmp_path, path, "--predictions-format", "lmms-eval")
    expected = platform_metrics(tmp_path, answers)

    assert without_meta(metrics) == without_meta(expected)
    assert metrics["predictions"]["missing"] == 1 and metrics["predictions"]["unknown_request_ids"] == ["doc_id 99"]
    assert metrics["real"]["numerical_direct"]["original_accuracy"] == 0.5  # q1 right, q2 unparsed
    assert metrics["meta"]["predictions_format"] == "lmms-eval"
    assert metrics["meta"]["kit"] == {"format": "lmms-eval", "rows": 8,
                                      "joined_by": {"request_id": 3, "doc_id": 5},
                                      "responses_from": {"filtered_resps": 7, "resps": 1}}
    assert score(tmp_path, path)["meta"]["predictions_format"] == "lmms-eval"  # told from the content


def test_further_lmms_eval_samples_are_read_after_the_filtered_one(tmp_path, version):
    kit = kits.get("lmms-eval")
    row = kit.row("x line 1", {"doc_id": 3, "resps": [["raw 0", "raw 1", "raw 2"]], "filtered_resps": ["B"]})
    assert (row.request_id, row.position, row.responses, row.response_from) == (None, 3, ("B", "raw 1", "raw 2"),
                                                                                 "filtered_resps")
    empty = kit.row("x line 2", {"doc_id": 4, "request_id": "q1:original", "resps": [], "filtered_resps": []})
    assert (empty.request_id, empty.position, empty.responses) == ("q1:original", None, ())


# --- VLMEvalKit ------------------------------------------------------------------------------------

def test_requests_in_vlmevalkit_tsv_map_options_answers_and_images(tmp_path, version, image):
    rows = read_tsv(export(tmp_path, "vlmevalkit", "cvqa_k1.tsv"))
    lines = platform_lines(tmp_path)

    assert list(rows[0]) == ["index", "request_id", "item_id", "split", "question", "A", "B", "C", "D", "answer",
                             "answer_type", "category", "image_path", "video_path", "prompt"]
    assert [int(row["index"]) for row in rows] == list(range(8))
    by_id = {row["request_id"]: row for row in rows}
    gold = {line["request_id"]: line for line in lines}
    synthetic = by_id["s1:original"]
    assert [synthetic[letter] for letter in "ABCD"] == ["16", "17", "12", "13"]
    assert synthetic["answer"] == gold["s1:original"]["gold"] and synthetic["answer_type"] == "letter"
    assert synthetic["question"] == gold["s1:original"]["text"] and synthetic["prompt"] == gold["s1:original"]["prompt"]
    assert (by_id["b1:original"]["answer"], by_id["b1:counterfactual"]["answer"]) == ("Yes", "No")
    number = by_id["q1:original"]
    assert (number["answer"], number["A"], number["D"], number["split"]) == ("2", "", "", "original")
    assert number["image_path"] == image.file.name and by_id["q2:original"]["image_path"] == ""
    assert number["category"] == "numerical_direct" and by_id["b1:original"]["category"] == "boolean"


def test_vlmevalkit_round_trip_scores_like_the_platform_format(tmp_path, version):
    lines = platform_lines(tmp_path)
    answers = answers_for(lines)
    expected = without_meta(platform_metrics(tmp_path, answers))
    header, filled = fill_vlmevalkit(export(tmp_path, "vlmevalkit", "cvqa_k1.tsv"), answers, keep_request_id=False)

    tsv = tmp_path / "model_cvqa_k1.tsv"
    tsv.write_text("".join(tables.tsv_chunks(header, filled)), encoding="utf-8")
    metrics = score(tmp_path, tsv, "--predictions-format", "vlmevalkit")
    assert without_meta(metrics) == expected
    assert metrics["meta"]["kit"] == {"format": "vlmevalkit", "rows": 7, "joined_by": {"request_id": 0, "index": 7},
                                      "responses_from": {"prediction": 7}}

    comma = tmp_path / "model_cvqa_k1.csv"
    with open(comma, "w", encoding="utf-8", newline="") as handle:
        csv.writer(handle).writerows([header, *filled])
    told = score(tmp_path, comma)  # told from the extension
    assert without_meta(told) == expected and told["meta"]["predictions_format"] == "vlmevalkit"

    header, filled = fill_vlmevalkit(export(tmp_path, "vlmevalkit", "cvqa_k1.tsv"), answers, keep_request_id=True)
    openpyxl = pytest.importorskip("openpyxl")
    book = openpyxl.Workbook()
    book.active.append(header)
    for row in filled:
        book.active.append([int(cell) if name == "index" else cell for name, cell in zip(header, row, strict=True)])
    workbook = tmp_path / "model_cvqa_k1.xlsx"
    book.save(workbook)
    from_excel = score(tmp_path, workbook, "--predictions-format", "vlmevalkit")
    assert without_meta(from_excel) == expected
    assert from_excel["meta"]["kit"]["joined_by"] == {"request_id": 7, "index": 0}


def test_the_join_by_position_follows_the_export_options(tmp_path, version):
    """Positions count the requests of the variants asked for: the same --variants on both sides."""
    text = export(tmp_path, "vlmevalkit", "originals.tsv", "--variants", "original")
    rows = read_tsv(text)
    assert [row["request_id"] for row in rows] == ["b1:original", "q1:original", "q2:original", "s1:original"]
    header = ["index", "prediction"]
    path = tmp_path / "originals-preds.tsv"
    path.write_text("".join(tables.tsv_chunks(header, [[1, "two"], [2, "3"]])), encoding="utf-8")
    metrics = score(tmp_path, path, "--variants", "original")
    assert metrics["real"]["numerical_direct"]["original_accuracy"] == 1.0
    assert metrics["predictions"]["answered"] == 2


# --- A stored run's predictions ----------------------------------------------------------------------

@pytest.fixture
def run(version):
    return stored_run(version)


def export_run(tmp_path, run, fmt: str, name: str) -> str:
    path = tmp_path / name
    run_command("export_results", "--what", "predictions", "--format", fmt, "--run", str(run.pk), "--out", str(path))
    return path.read_text(encoding="utf-8")


def test_a_runs_predictions_in_lmms_eval_carry_gold_and_correctness(tmp_path, run):
    samples = [json.loads(line) for line in export_run(tmp_path, run, "lmms-eval", "run.jsonl").splitlines()]
    stored = {p.request_id: p for p in run.predictions.all()}
    outcomes = results.run_results(run).outcomes
    plan = [planned.request for planned in runner.plan(run)]

    assert {s["request_id"]: s["correct"] for s in samples} == EXPECTED_CORRECT  # the failed one has no row
    for sample in samples:
        rid = sample["request_id"]
        request = plan[sample["doc_id"]]
        assert request.request_id == rid and sample["target"] == request.gold
        assert sample["resps"] == [[stored[rid].raw_output]] and sample["filtered_resps"] == [stored[rid].raw_output]
        assert sample["parsed"] == stored[rid].parses["authors"]["value"] == outcomes[rid].value
        assert sample["outcome"] == outcomes[rid].status
    assert {s["request_id"]: s["outcome"] for s in samples}["q2:counterfactual"] == "empty"

    run_metrics = tmp_path / "run-metrics.json"
    run_command("score", "--run", str(run.pk), "--out", str(run_metrics))
    again = score(tmp_path, tmp_path / "run.jsonl")  # the export scores back to the run's own metrics
    assert without_meta(again) == without_meta(json.loads(run_metrics.read_text()))


def test_a_runs_predictions_in_vlmevalkit_carry_gold_and_correctness(tmp_path, run):
    rows = read_tsv(export_run(tmp_path, run, "vlmevalkit", "run.tsv"))
    stored = {p.request_id: p for p in run.predictions.all()}

    assert list(rows[0])[-3:] == ["prediction", "parsed", "correct"]
    assert {row["request_id"]: row["correct"] for row in rows} == {
        rid: "1" if right else "0" for rid, right in EXPECTED_CORRECT.items()}
    by_id = {row["request_id"]: row for row in rows}
    assert by_id["b1:original"]["answer"] == "Yes" and by_id["b1:original"]["parsed"] == "no"
    assert by_id["q1:original"]["parsed"] == "2" and by_id["q2:original"]["parsed"] == ""
    assert all(row["prediction"] == stored[row["request_id"]].raw_output for row in rows)
    plan = {planned.request.request_id: planned.request for planned in runner.plan(run)}
    assert by_id["s1:counterfactual"]["answer"] == plan["s1:counterfactual"].gold
    assert by_id["s1:counterfactual"]["prediction"] == "E" and by_id["s1:counterfactual"]["parsed"] == ""

    run_metrics = tmp_path / "run-metrics.json"
    run_command("score", "--run", str(run.pk), "--out", str(run_metrics))
    assert without_meta(score(tmp_path, tmp_path / "run.tsv")) == without_meta(json.loads(run_metrics.read_text()))


def test_correct_is_null_where_the_metric_is_not_right_or_wrong(tmp_path):
    payload = {"kind": "triplet", "premise": "A wet floor.", "hypothesis1": "A man slips.",
               "hypothesis2": "A man dances.", "label": 1, "reasoning_category": "Physical"}
    version = frozen("nleye", "n1", [("t1", payload, {})])
    run = EvaluationRun.objects.create(version=version, model_id="org/vlm", input_strategy="separate")
    item = version.items.get()
    for rid, variant, text in (("t1:triplet:order1", "triplet", "1. It is wet."), ("t1:pairs:h1", "pairs", "8")):
        Prediction.objects.create(run=run, request_id=rid, item=item, variant=variant, prompt=[], raw_output=text)
    samples = {s["request_id"]: s for s in map(json.loads, export_run(tmp_path, run, "lmms-eval", "n.jsonl")
                                                           .splitlines())}
    assert samples["t1:triplet:order1"]["correct"] is True
    assert (samples["t1:pairs:h1"]["correct"], samples["t1:pairs:h1"]["parsed"]) == (None, 8)
    rows = {row["request_id"]: row for row in read_tsv(export_run(tmp_path, run, "vlmevalkit", "n.tsv"))}
    assert (rows["t1:pairs:h1"]["correct"], rows["t1:triplet:order1"]["answer"]) == ("", "1")
    assert rows["t1:triplet:order1"]["category"] == "Physical"


def test_kit_exports_of_results_refuse_what_they_cannot_hold(tmp_path, run):
    out = str(tmp_path / "x.jsonl")
    with pytest.raises(CommandError, match="hold predictions, not runs"):
        run_command("export_results", "--what", "runs", "--format", "lmms-eval", "--run", str(run.pk), "--out", out)
    with pytest.raises(CommandError, match="holds the predictions of one run: select exactly one run"):
        run_command("export_results", "--what", "predictions", "--format", "vlmevalkit", "--out", out)
    with pytest.raises(CommandError, match="No evaluation run with id 999"):
        run_command("export_results", "--what", "predictions", "--format", "lmms-eval", "--run", "999", "--out", out)
    assert not (tmp_path / "x.jsonl").exists()


# --- Malformed kit files ---------------------------------------------------------------------------------

def refused(tmp_path, name: str, text: str | bytes, match: str, *args):
    path = tmp_path / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    with pytest.raises(CommandError, match=match):
        score(tmp_path, path, *args)
    assert not (tmp_path / "metrics.json").exists()


def test_malformed_lmms_eval_files_are_refused_naming_the_line(tmp_path, version):
    good = json.dumps({"doc_id": 0, "resps": [["2"]], "filtered_resps": ["2"]})
    flag = ("--predictions-format", "lmms-eval")
    refused(tmp_path, "a.jsonl", good + "\n{not json\n", r"a.jsonl line 2: not JSON", *flag)
    refused(tmp_path, "b.jsonl", good + "\n" + json.dumps({"doc_id": "3", "resps": [["1"]]}) + "\n",
            r"b.jsonl line 2: `doc_id` must be an integer \(got '3'\)", *flag)
    refused(tmp_path, "c.jsonl", json.dumps({"doc_id": 1.5, "resps": [["1"]]}) + "\n", "line 1: `doc_id` must be an "
            "integer", *flag)
    refused(tmp_path, "d.jsonl", json.dumps({"doc": {}, "resps": [["1"]]}) + "\n",
            "d.jsonl line 1: no `request_id` and no `doc_id`", *flag)
    refused(tmp_path, "e.jsonl", json.dumps({"doc_id": 0, "target": "2"}) + "\n",
            "e.jsonl line 1: no `filtered_resps` and no `resps`", *flag)
    refused(tmp_path, "f.jsonl", json.dumps({"doc_id": 0, "resps": [[2]]}) + "\n",
            "f.jsonl line 1: `resps` must hold the responses as strings", *flag)
    refused(tmp_path, "g.jsonl", good + "\n" + json.dumps({"doc_id": 0, "resps": [["3"]]}) + "\n",
            r"g.jsonl line 2: a second row for request 'b1:original' \(the first is g.jsonl line 1\)", *flag)
    refused(tmp_path, "h.jsonl", "[1, 2]\n", "h.jsonl line 1: a sample must be a JSON object", *flag)


def test_malformed_vlmevalkit_tables_are_refused_naming_the_row(tmp_path, version, monkeypatch):
    flag = ("--predictions-format", "vlmevalkit")
    refused(tmp_path, "a.tsv", "index\tanswer\n0\t2\n", r"a.tsv has no `prediction` column \(its columns: index, "
            "answer\\)", *flag)
    refused(tmp_path, "b.tsv", "question\tprediction\nHow many?\t2\n", "b.tsv has no `index` \\(or `request_id`\\) "
            "column", *flag)
    refused(tmp_path, "c.tsv", "index\tprediction\n0\t2\nfirst\t3\n", r"c.tsv row 3: `index` must be an integer "
            r"\(got 'first'\)", *flag)
    refused(tmp_path, "d.tsv", "index\tprediction\n0\t2\n1\t3\textra\n", "d.tsv row 3: 3 cells where the header has 2",
            *flag)
    refused(tmp_path, "e.csv", "index,prediction\n0,2\n1,\"never closed\n", r"e.csv row 3 \(line 3\): not a valid CSV "
            "row", *flag)
    refused(tmp_path, "f.tsv", "", "f.tsv is empty: it has no header row", *flag)
    refused(tmp_path, "g.tsv", "index\tprediction\n0\t2\n0\t3\n", "g.tsv row 3: a second row for request "
            "'b1:original'", *flag)
    refused(tmp_path, "h.tsv", b"index\tprediction\n0\t\xff\xfe\n", "h.tsv: not UTF-8 text", *flag)
    refused(tmp_path, "i.xlsx", b"not a workbook", r"i.xlsx: not an .xlsx workbook" if _has_openpyxl()
            else "needs openpyxl", *flag)

    def no_openpyxl(name):
        raise ImportError(name)

    monkeypatch.setattr(tables.importlib, "import_module", no_openpyxl)
    refused(tmp_path, "j.xlsx", b"PK", r"j.xlsx: reading .xlsx files needs openpyxl \(pip install openpyxl\), or give "
            "the table as .tsv or .csv", *flag)


def _has_openpyxl() -> bool:
    return importlib.util.find_spec("openpyxl") is not None


def test_an_unreadable_file_and_an_explicit_flag(tmp_path, version):
    with pytest.raises(CommandError, match="Cannot read .*missing.tsv"):
        score(tmp_path, tmp_path / "missing.tsv", "--predictions-format", "vlmevalkit")
    platform = tmp_path / "platform.jsonl"
    platform.write_text(json.dumps({"request_id": "q1:original", "response": "2"}) + "\n", encoding="utf-8")
    assert score(tmp_path, platform)["meta"]["predictions_format"] == "jsonl"  # not a kit's: the platform's
    with pytest.raises(CommandError, match="platform.jsonl line 1: no `filtered_resps` and no `resps`"):
        score(tmp_path, platform, "--predictions-format", "lmms-eval")  # the flag wins over the content
    copy = tmp_path / "platform.tsv"
    shutil.copy(platform, copy)
    with pytest.raises(CommandError, match=r"platform.tsv has no `prediction` and no `index` \(or `request_id`\) col"):
        score(tmp_path, copy)  # told from the extension: a table


# --- The results pages ------------------------------------------------------------------------------------

def test_the_results_pages_export_a_runs_predictions_in_the_kits_layouts(researcher_client, researcher, run,
                                                                          media_root,
                                                                          django_capture_on_commit_callbacks):
    page = researcher_client.get(reverse("results-run", kwargs={"pk": run.pk})).content.decode()
    assert '<option value="lmms-eval">lmms-eval samples (JSON Lines)</option>' in page
    assert '<option value="vlmevalkit">VLMEvalKit (TSV)</option>' in page
    assert "Predictions carry the request's gold answer, the outcome the results give each one" in page
    url = reverse("results-version-export", kwargs={"pk": run.version.pk})
    EvaluationRun.objects.create(version=run.version, model_id="org/other")
    refused = researcher_client.post(url, {"what": "predictions", "fmt": "vlmevalkit", "scope": "all"})
    assert refused.status_code == 400 and "holds one run&#x27;s predictions: choose one run" in refused.content.decode()
    refused = researcher_client.post(url, {"what": "metrics", "fmt": "lmms-eval", "scope": str(run.pk)})
    assert refused.status_code == 400 and "hold predictions, not metrics" in refused.content.decode()
    exports_made = Job.objects.filter(kind="export_results")
    assert not exports_made.exists()

    with django_capture_on_commit_callbacks(execute=True):
        response = researcher_client.post(url, {"what": "predictions", "fmt": "vlmevalkit", "scope": str(run.pk)})
    assert response["Location"] == reverse("results-run", kwargs={"pk": run.pk})
    job = exports_made.get()
    assert job.status == Job.Status.SUCCEEDED, job.message
    assert (job.result["file_name"], job.result["rows"]) == ("predictions.vlmevalkit.tsv", 7)
    download = researcher_client.get(job.result["download_url"])
    rows = read_tsv(b"".join(download.streaming_content).decode("utf-8"))
    assert {row["request_id"]: row["correct"] for row in rows} == {
        rid: "1" if right else "0" for rid, right in EXPECTED_CORRECT.items()}
