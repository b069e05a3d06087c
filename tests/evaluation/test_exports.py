"""Exports of evaluation results (evaluation.exports): every format reads back as the rows it was
given, predictions carry their gold, outcome and correct as the run's results (and the kits' files) give
them, writers pull rows lazily and once, the export job writes a file that only its owner (or an admin)
downloads, the admin actions queue that job, and `manage.py export_results` end to end."""

import csv
import io
import json
import re
import zipfile
from datetime import UTC, datetime
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from django.contrib import admin
from django.contrib.messages.storage.fallback import FallbackStorage
from django.core.management import CommandError, call_command
from django.test import RequestFactory
from django.urls import reverse
from django.utils import timezone

from annotation.models import Benchmark, BenchmarkItem, BenchmarkVersion
from evaluation import admin_export_actions, exports
from evaluation.models import EvaluationRun, Prediction
from generation import job_files, jobs
from generation.models import Job
from tests import hf_support
from tests.conftest import create_study, logged_in_client, make_user
from tests.request_files import EXPECTED_CORRECT, kit_version, platform_lines, stored_run

RESEARCHER = "researcher"
TRICKY_OUTPUT = 'Answer: "B", then a comma, a newline\nand ünïcödé — 你好'


@pytest.fixture
def results(db, curator):
    """A C-VQA version with three items and two runs: five predictions of run A, two of run B."""
    version = BenchmarkVersion.objects.create(benchmark=Benchmark.objects.get(slug="cvqa"), label="v-exports",
                                              created_by=curator)
    items = [BenchmarkItem.objects.create(version=version, external_id=f"q{n}", payload={"n": n}) for n in range(3)]
    run_a = EvaluationRun.objects.create(version=version, model_id="org/vlm-a", model_revision="main",
                                         resolved_revision="abc123", backend="transformers", prompting="cot",
                                         seed=7, generation_params={"max_new_tokens": 16},
                                         status=EvaluationRun.Status.SUCCEEDED)
    run_b = EvaluationRun.objects.create(version=version, model_id="org/vlm-b", backend="openai", variants=["real"])
    rows = []
    for n in range(5):
        rows.append(Prediction(
            run=run_a, request_id=f"q{n % 3}:orig", sample_index=n // 3, item=items[n % 3], variant="orig",
            prompt=[{"role": "user", "content": [{"type": "image", "sha256": f"{n:064x}"},
                                                 {"type": "text", "text": f"How many? #{n}"}]}],
            inputs={"frames": [0, 4, 8][: n + 1], "policy": {"n": 3}}, params={"temperature": 0.0},
            raw_output=TRICKY_OUTPUT if n == 0 else f"{n} cups", parsed_answer=None if n == 1 else {"count": n},
            parse_status="unparsed" if n == 1 else "ok", latency_s=None if n == 2 else 0.25 * n,
            prompt_tokens=None if n == 2 else 100 + n, completion_tokens=3, from_cache=n % 2 == 0,
            error="" if n != 4 else "CUDA out of memory"))
    for n in range(2):
        rows.append(Prediction(run=run_b, request_id=f"q{n}:cf", item=items[n], variant="cf", prompt=[], inputs={},
                               raw_output="two", parsed_answer="two", parse_status="ok", latency_s=1.5))
    Prediction.objects.bulk_create(rows)
    return {"version": version, "items": items, "run_a": run_a, "run_b": run_b}


def expected_predictions(run, scores=None) -> list[dict]:
    """The prediction rows as the export should give them, built from model instances; `scores` maps
    (request id, sample index) to the (gold, outcome, correct) a row should have (null when it does not)."""
    scores = scores or {}
    out = []
    for p in Prediction.objects.filter(run=run).select_related("run__version__benchmark", "item").order_by("pk"):
        r = p.run
        out.append({
            "prediction_id": p.pk, "run_id": r.pk, "benchmark": r.version.benchmark.slug, "version_id": r.version_id,
            "version_label": r.version.label, "version_checksum": r.version.checksum, "model_id": r.model_id,
            "model_revision": r.model_revision, "resolved_revision": r.resolved_revision, "backend": r.backend,
            "input_strategy": r.input_strategy, "prompting": r.prompting, "option_order": r.option_order,
            "seed": r.seed, "request_id": p.request_id, "sample_index": p.sample_index, "item_id": p.item_id,
            "item_external_id": p.item.external_id, "variant": p.variant, "prompt": p.prompt, "inputs": p.inputs,
            "params": p.params, "raw_output": p.raw_output, "parsed_answer": p.parsed_answer,
            "parse_status": p.parse_status, "parses": p.parses,
            **dict(zip(("gold", "outcome", "correct"), scores.get((p.request_id, p.sample_index), (None,) * 3),
                       strict=True)),
            "latency_s": p.latency_s,
            "prompt_tokens": p.prompt_tokens,
            "completion_tokens": p.completion_tokens, "from_cache": p.from_cache, "error": p.error,
            "created_at": p.created_at,
        })
    return out


# --- Reading each format back ------------------------------------------------------------------

def typed(columns, record: dict, json_text=None) -> dict:
    """One record as read back from any format, with values of each column's kind; `json_text` names the JSON
    columns written as text (all of them but in Hugging Face datasets, which type the others)."""
    out = {}
    for column in columns:
        value = record[column.name]
        if value == "" and column.kind != "str":
            value = None  # CSV writes nulls as empty cells
        if value is not None:
            if column.kind == "json" and isinstance(value, str) and (json_text is None or column.name in json_text):
                value = json.loads(value)
            elif column.kind == "datetime" and isinstance(value, str):
                value = datetime.fromisoformat(value)
            elif column.kind == "int":
                value = int(value)
            elif column.kind == "float":
                value = float(value)
            elif column.kind == "bool" and isinstance(value, str):
                value = {"True": True, "False": False}[value]
        if isinstance(value, datetime) and value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        out[column.name] = value
    return out


def read_back(fmt: str, path: Path, columns) -> list[dict]:
    if fmt == "csv":
        with open(path, newline="", encoding="utf-8") as handle:
            reader = csv.DictReader(handle)
            assert reader.fieldnames == [c.name for c in columns]
            records = list(reader)
    elif fmt == "jsonl":
        lines = path.read_text(encoding="utf-8").splitlines()
        records = [json.loads(line) for line in lines]
        for record in records:
            assert list(record) == [c.name for c in columns]
        return [typed(columns, record, json_text=set()) for record in records]  # JSON values, not texts
    elif fmt == "parquet":
        table = pq.read_table(path)
        assert table.column_names == [c.name for c in columns]
        records = table.to_pylist()
    else:
        configs = hf_support.checked_card(path)
        (config,) = configs.values()
        dataset = hf_support.load(path, cache=path.parent / f"{path.name}-cache", split="train")
        assert dataset.column_names == [c.name for c in columns]
        text = hf_support.json_text_columns(config["files"][0])
        return [comparable(fmt, columns, typed(columns, record, text)) for record in dataset]
    return [typed(columns, record) for record in records]


def comparable(fmt: str, columns, record: dict) -> dict:
    """A record as the format can give it back: CSV writes a null text as an empty cell; in Hugging Face
    datasets JSON objects are structs, where a key that a row lacks reads as null, so null keys are dropped
    from both sides."""
    if fmt == "csv":
        return {c.name: "" if c.kind == "str" and record[c.name] is None else record[c.name] for c in columns}
    if fmt != "hf":
        return record
    return {name: hf_support.without_nulls(value) if kind == "json" else value
            for (name, kind), value in zip(((c.name, c.kind) for c in columns), record.values(), strict=True)}


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet", "hf"])
def test_each_format_reads_back_as_the_predictions_with_their_run_columns(results, tmp_path, fmt):
    run = results["run_a"]
    export = exports.select("predictions", runs=[run.pk])
    assert export.total == 5
    out = tmp_path / ("predictions" + exports.FORMATS[fmt])
    written = exports.write(export, fmt, out)
    assert written.rows == 5 and written.bytes > 0
    rows = read_back(fmt, out, export.columns)
    expected = [comparable(fmt, export.columns, row) for row in expected_predictions(run)]
    assert rows == expected
    first = rows[0]
    assert (first["benchmark"], first["version_label"], first["model_id"], first["resolved_revision"]) == (
        "cvqa", "v-exports", "org/vlm-a", "abc123")
    assert first["raw_output"] == TRICKY_OUTPUT
    assert [r["parsed_answer"] for r in rows][:2] == [{"count": 0}, None]
    assert not list(tmp_path.glob(".*partial*")), "the partial file or folder was left behind"


def test_parquet_keeps_types_and_marks_json_columns(results, tmp_path):
    export = exports.select("predictions", runs=[results["run_a"].pk])
    exports.write(export, "parquet", tmp_path / "p.parquet")
    schema = pq.read_schema(tmp_path / "p.parquet")
    assert str(schema.field("latency_s").type) == "double"
    assert str(schema.field("from_cache").type) == "bool"
    assert str(schema.field("created_at").type) == "timestamp[us, tz=UTC]"
    assert schema.field("prompt").metadata == {b"content": b"json"}
    assert schema.field("raw_output").metadata is None


def test_selection_by_runs_ids_and_the_whole_table(results):
    run_a, run_b = results["run_a"], results["run_b"]
    assert exports.select("predictions").total == 7
    both = exports.select("predictions", runs=[run_a.pk, run_b.pk])
    assert [row[1] for row in both.rows] == [run_a.pk] * 5 + [run_b.pk] * 2
    some = list(Prediction.objects.filter(run=run_a).order_by("pk").values_list("pk", flat=True))[1:3]
    picked = exports.select("predictions", ids=reversed(some))
    assert picked.total == 2 and [row[0] for row in picked.rows] == some
    runs = exports.select("runs", runs=[run_b.pk])
    (row,) = list(runs.rows)
    record = dict(zip([c.name for c in runs.columns], row, strict=True))
    assert record["model_id"] == "org/vlm-b" and json.loads(record["variants"]) == ["real"]
    with pytest.raises(exports.ExportError, match="No evaluation run with id 987654"):
        exports.select("predictions", runs=[987654])
    with pytest.raises(exports.ExportError, match="do not belong to crowd studies"):
        exports.select("predictions", studies=["x"])
    with pytest.raises(exports.ExportError, match="Unknown export"):
        exports.select("nothing")


@pytest.mark.parametrize("fmt", ["jsonl", "hf"])
def test_submissions_export_the_reviewed_answer_as_final(db, tmp_path, curator, fmt):
    study = create_study("exp-study", form={"fields": [{"name": "note", "type": "free_text", "label": "Note"}]},
                         items=2)
    other = create_study("other-study", form={"fields": [{"name": "note", "type": "free_text", "label": "Note"}]})
    from annotation.crowd import assignment, submissions

    worker = make_user("worker-1", "annotator")
    made = []
    for target, note in ((study, "first"), (study, "second"), (other, "elsewhere")):
        claim = assignment.claim_next(target, worker)
        made.append(submissions.submit(claim, worker, {"note": note}, active_seconds=3.0)[0])
    made[0].reviewed_data = {"note": "First (fixed)"}
    made[0].save(update_fields=["reviewed_data"])
    export = exports.select("submissions", studies=["exp-study"])
    out = tmp_path / f"s{exports.FORMATS[fmt]}"
    exports.write(export, fmt, out)
    rows = read_back(fmt, out, export.columns)
    assert [(r["study"], r["data"], r["final_data"]) for r in rows] == [
        ("exp-study", {"note": "first"}, {"note": "First (fixed)"}),
        ("exp-study", {"note": "second"}, {"note": "second"})]
    assert rows[0]["worker_id"] == worker.pk and rows[0]["active_seconds"] == 3.0
    assert rows[0]["item_external_id"] == "item-0" and rows[0]["submitted_at"] <= timezone.now()


@pytest.mark.parametrize("fmt", ["parquet", "hf"])
def test_judgments_carry_their_prediction_and_run(results, tmp_path, fmt):
    from evaluation.models import Judgment

    run_a, run_b = results["run_a"], results["run_b"]
    judged = Prediction.objects.filter(run=run_a).order_by("pk").first()
    judgment = Judgment.objects.create(
        prediction=judged, kind="cvrr", judge_model="org/judge", judge_backend="openai",
        prompt=[{"role": "user", "content": "Is it right?"}], raw_verdict="yes, 4", verdict={"pred": "yes", "score": 4},
        parse_status=Judgment.ParseStatus.OK, latency_s=0.5)
    Judgment.objects.create(prediction=Prediction.objects.filter(run=run_b).first(), kind="cvrr",
                            judge_model="org/judge", judge_backend="openai", prompt=[], parse_status="failed",
                            error="timeout")
    export = exports.select("judgments", runs=[run_a.pk])
    assert export.total == 1
    out = tmp_path / f"j{exports.FORMATS[fmt]}"
    exports.write(export, fmt, out)
    (row,) = read_back(fmt, out, export.columns)
    assert row["judgment_id"] == judgment.pk and row["prediction_id"] == judged.pk
    assert (row["run_id"], row["model_id"], row["request_id"], row["item_external_id"]) == (
        run_a.pk, "org/vlm-a", judged.request_id, "q0")
    assert row["verdict"] == {"pred": "yes", "score": 4} and row["created_at"] == judgment.created_at
    assert row["prompt"] == [{"role": "user", "content": "Is it right?"}]


@pytest.fixture
def scored_runs(db):
    """Two runs over a frozen C-VQA version whose metrics are known (as in tests/evaluation/test_results.py)."""
    from django.core.cache import cache

    from tests.conftest import cvqa_payload
    from tests.eval_support import frozen_version

    cache.clear()  # run ids repeat across tests: no test may see another's cached metrics
    version = frozen_version("cvqa", "m1", [("q1", cvqa_payload("two"), {}), ("q2", cvqa_payload("3"), {}),
                                            ("b1", cvqa_payload("yes", type="boolean", new_answer="no"), {})])
    items = {item.external_id: item for item in version.items.all()}
    made = []
    for model_id, answers in (("org/strong", {"q1:original": "2", "q1:counterfactual": "1", "q2:original": "three",
                                              "q2:counterfactual": "1", "b1:original": "Yes.",
                                              "b1:counterfactual": "no"}),
                              ("org/weak", {"q1:original": "2", "q1:counterfactual": "2",
                                            "q2:original": "I cannot tell", "b1:original": "yes",
                                            "b1:counterfactual": "yes"})):
        run = EvaluationRun.objects.create(version=version, model_id=model_id, backend="openai",
                                           status=EvaluationRun.Status.SUCCEEDED)
        for request_id, text in answers.items():
            item_id, variant = request_id.split(":")
            Prediction.objects.create(run=run, request_id=request_id, item=items[item_id], variant=variant,
                                      raw_output=text, prompt=[{"role": "user", "content": request_id}])
        made.append(run)
    yield made
    cache.clear()


@pytest.mark.parametrize("fmt", ["csv", "hf"])
def test_metrics_are_the_results_pages_numbers_one_row_each(scored_runs, results, tmp_path, fmt):
    from evaluation import results as run_results

    strong, weak = scored_runs
    unscorable = results["run_a"]  # its items are not C-VQA items: its requests cannot be rebuilt
    export = exports.select("metrics", runs=[weak.pk, strong.pk, unscorable.pk])
    assert export.total is None
    out = tmp_path / f"m{exports.FORMATS[fmt]}"
    exports.write(export, fmt, out)
    rows = read_back(fmt, out, export.columns)
    by_run = {}
    for row in rows:
        by_run.setdefault(row["run_id"], []).append(row)
    assert list(by_run) == sorted([unscorable.pk, strong.pk, weak.pk])  # runs in id order
    for run in (strong, weak):
        expected = run_results.flat_metrics(run_results.run_metrics(run))
        assert [(r["metric"], r["n"], r["computed"]) for r in by_run[run.pk]] == [
            (c.path, c.n, c.computed) for c in expected]
        assert all(r["model_id"] == run.model_id and r["benchmark"] == "cvqa" and r["error"] == ""
                   for r in by_run[run.pk])
    weak_rows = {r["metric"]: r for r in by_run[weak.pk]}
    assert weak_rows["real.original_accuracy"]["value"] == pytest.approx(2 / 3)
    assert weak_rows["real.drop"]["rate"] is True and weak_rows["real.original_accuracy"]["n"] == 3
    (failed,) = by_run[unscorable.pk]
    assert failed["metric"] == "" and failed["value"] is None and failed["error"]


# --- Gold, outcome and correct, as the run's results score each prediction ------------------------

@pytest.fixture
def kit_runs(image):
    """Two runs over the kits' C-VQA version: `stored`, the kits' stored run (b1:counterfactual only failed)
    with a second sample of q1:original that the scorer does not read, and `retried`, whose q1:original
    failed at sample 0 and was answered at sample 1 (the sample the scorer reads)."""
    version = kit_version(image)
    stored = stored_run(version)
    items = {item.external_id: item for item in version.items.all()}
    Prediction.objects.create(run=stored, request_id="q1:original", sample_index=1, item=items["q1"],
                              variant="original", prompt=[], raw_output="Seven.")
    retried = EvaluationRun.objects.create(version=version, model_id="org/retried",
                                           status=EvaluationRun.Status.SUCCEEDED)
    for rid, sample, text, error in (("q1:original", 0, "", "timeout"), ("q1:original", 1, "2", ""),
                                     ("b1:original", 0, "Yes", "")):
        Prediction.objects.create(run=retried, request_id=rid, sample_index=sample, item=items[rid.split(":")[0]],
                                  variant=rid.split(":")[1], prompt=[], raw_output=text, error=error)
    return {"version": version, "stored": stored, "retried": retried}


def scores_of(rows) -> dict:
    """(run id, request id, sample index) → (gold, outcome, correct) of exported prediction rows (CSV writes a
    null outcome as an empty cell)."""
    return {(r["run_id"], r["request_id"], r["sample_index"]): (r["gold"], r["outcome"] or None, r["correct"])
            for r in rows}


def read_samples(run) -> dict[str, int]:
    """Request id → the sample the scorer reads: the first one without an error."""
    found = {}
    for rid, sample in run.predictions.filter(error="").order_by("-sample_index").values_list("request_id",
                                                                                              "sample_index"):
        found[rid] = sample
    return found


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet", "hf"])
def test_predictions_carry_gold_outcome_and_correct_as_the_results_and_the_kits_give_them(kit_runs, tmp_path, fmt):
    from evaluation import kits
    from evaluation import results as run_results

    stored, retried = kit_runs["stored"], kit_runs["retried"]
    export = exports.select("predictions", runs=[retried.pk, stored.pk])
    names = [c.name for c in export.columns]
    assert names[names.index("parse_status"):names.index("latency_s") + 1] == [
        "parse_status", "parses", "gold", "outcome", "correct", "latency_s"]
    out = tmp_path / f"p{exports.FORMATS[fmt]}"
    written = exports.write(export, fmt, out)
    rows = read_back(fmt, out, export.columns)
    assert written.rows == len(rows) == 12 and export.note() == ""
    assert [r["run_id"] for r in rows] == [stored.pk] * 9 + [retried.pk] * 3  # by run, then by id
    found = scores_of(rows)
    gold = {line["request_id"]: line["gold"] for line in platform_lines(tmp_path)}  # as export_requests writes it
    assert all(row["gold"] == gold[row["request_id"]] for row in rows)

    for run in (stored, retried):
        outcomes = run_results.run_results(run).outcomes  # what the results pages show
        kit_rows = kits.run_rows(run)
        assert kit_rows
        read = read_samples(run)
        for row in kit_rows:
            rid = row.request.request_id
            assert found[(run.pk, rid, read[rid])] == (row.line["gold"], row.outcome, row.correct)
            assert row.outcome == outcomes[rid].status
        for rid, sample in run.predictions.values_list("request_id", "sample_index"):
            if read.get(rid) != sample and not (rid not in read and outcomes[rid].status == "missing"):
                assert found[(run.pk, rid, sample)][1:] == (None, None)

    assert {rid: found[(stored.pk, rid, 0)][2] for rid in EXPECTED_CORRECT} == EXPECTED_CORRECT
    assert found[(stored.pk, "q2:counterfactual", 0)][1:] == ("empty", False)
    assert found[(stored.pk, "b1:counterfactual", 0)][1:] == ("missing", None)  # its only sample failed
    assert found[(stored.pk, "q1:original", 1)] == (gold["q1:original"], None, None)  # a sample the scorer skips
    assert found[(retried.pk, "q1:original", 0)] == (gold["q1:original"], None, None)  # failed, then retried
    assert found[(retried.pk, "q1:original", 1)][1:] == ("correct", True)
    assert found[(retried.pk, "b1:original", 0)][1:] == ("correct", True)


def test_the_outcomes_are_those_of_the_results_pages(kit_runs, researcher_client, tmp_path):
    stored = kit_runs["stored"]
    export = exports.select("predictions", runs=[stored.pk])
    exports.write(export, "jsonl", tmp_path / "p.jsonl")
    exported = {(r["request_id"], r["outcome"]) for r in read_back("jsonl", tmp_path / "p.jsonl", export.columns)
                if r["outcome"] is not None}
    shown = set()
    for metric in ("real.numerical_direct.original_accuracy", "real.numerical_direct.counterfactual_accuracy",
                   "real.boolean.original_accuracy", "real.boolean.counterfactual_accuracy",
                   "synthetic.original_accuracy", "synthetic.counterfactual_accuracy"):
        page = researcher_client.get(reverse("results-drill", kwargs={"pk": stored.pk, "metric": metric}))
        assert page.status_code == 200, metric
        shown |= {(row["request"].request_id, row["outcome"].status) for row in page.context["rows"]}
    assert shown == exported and len(exported) == 8  # one outcome per request, on the sample the scorer read


def test_an_open_answer_without_a_judgment_is_neither_right_nor_wrong(db, tmp_path):
    from evaluation.models import Judgment
    from tests.eval_support import frozen_version

    def question(n: int) -> dict:
        return {"kind": "question", "video": f"video{n}", "category": "Sentiment_A", "question": f"Che cosa fa {n}?",
                "answers": [f"Taglia pomodori {n}.", *(f"Cucina {n}.{k}" for k in range(7))]}

    version = frozen_version("maia", "open-1", [("q1", question(1), {}), ("q2", question(2), {})])
    run = EvaluationRun.objects.create(version=version, model_id="org/vlm", variants=["oevqa"],
                                       status=EvaluationRun.Status.SUCCEEDED)
    items = {item.external_id: item for item in version.items.all()}
    judged = Prediction.objects.create(run=run, request_id="q1:oevqa", item=items["q1"], variant="oevqa",
                                       prompt=[], raw_output="Taglia pomodori.")
    Prediction.objects.create(run=run, request_id="q2:oevqa", item=items["q2"], variant="oevqa", prompt=[],
                              raw_output="Balla.")
    Judgment.objects.create(prediction=judged, kind="maia", judge_model="org/judge", judge_backend="openai",
                            prompt=[], raw_verdict="yes", verdict={"correct": True}, parse_status="ok")
    export = exports.select("predictions", runs=[run.pk])
    exports.write(export, "hf", tmp_path / "open")
    rows = read_back("hf", tmp_path / "open", export.columns)
    assert scores_of(rows) == {
        (run.pk, "q1:oevqa", 0): (question(1)["answers"], "correct", True),  # the judge said so
        (run.pk, "q2:oevqa", 0): (question(2)["answers"], "answered", None)}  # no judgment: neither
    (config,) = hf_support.checked_card(tmp_path / "open").values()
    assert str(pq.read_schema(config["files"][0]).field("gold").type) == "list<element: string>"
    assert str(pq.read_schema(config["files"][0]).field("correct").type) == "bool"


def test_gold_of_several_types_stays_json_text_in_a_dataset(kit_runs, tmp_path):
    """Numbers, yes/no and letters in C-VQA, lists of references in MAIA: one column cannot type them all."""
    from tests.eval_support import frozen_version

    answers = [f"Cucina {k}." for k in range(8)]
    version = frozen_version("maia", "open-2", [("q1", {"kind": "question", "video": "v1", "category": "Sentiment_A",
                                                        "question": "Che cosa fa?", "answers": answers}, {})])
    maia = EvaluationRun.objects.create(version=version, model_id="org/vlm", variants=["oevqa"])
    Prediction.objects.create(run=maia, request_id="q1:oevqa", item=version.items.get(), variant="oevqa", prompt=[],
                              raw_output="Cucina.")
    export = exports.select("predictions", runs=[kit_runs["stored"].pk, maia.pk])
    exports.write(export, "hf", tmp_path / "mixed")
    (config,) = hf_support.checked_card(tmp_path / "mixed").values()
    assert "gold" in hf_support.json_text_columns(config["files"][0])
    rows = read_back("hf", tmp_path / "mixed", export.columns)
    gold = {line["request_id"]: line["gold"] for line in platform_lines(tmp_path)}
    assert rows[-1]["gold"] == answers and [r["gold"] for r in rows[:-1]] == [gold[r["request_id"]] for r in rows[:-1]]
    assert {type(r["gold"]) for r in rows} == {int, str, list}


def test_a_run_whose_requests_cannot_be_built_exports_nulls_and_says_so(results, kit_runs, tmp_path, capsys,
                                                                        researcher,
                                                                        django_capture_on_commit_callbacks):
    unscorable, stored = results["run_a"], kit_runs["stored"]  # run A's items are not C-VQA items
    stray = Prediction.objects.create(run=stored, request_id="q9:original", item=kit_runs["version"].items.first(),
                                      variant="original", prompt=[], raw_output="2")  # no such request in the plan
    call_command("export_results", "--what", "predictions", "--run", str(unscorable.pk), str(stored.pk),
                 "--out", str(tmp_path / "p.parquet"))
    err = capsys.readouterr().err
    assert "Wrote 15 predictions" in err
    assert (f"6 predictions without gold, outcome or correct (null): run {unscorable.pk}: 5 (The run's requests "
            f"cannot be rebuilt: C-VQA item 'q0' has unknown kind None.); run {stored.pk}: 1 (they answer requests "
            "the run's plan does not hold).") in err
    rows = read_back("parquet", tmp_path / "p.parquet", exports.SOURCES["predictions"].columns)
    assert rows[:5] == expected_predictions(unscorable)  # every other column as it is, the three of them null
    assert [r["prediction_id"] for r in rows[5:] if r["gold"] is None] == [stray.pk]
    assert {r["outcome"] for r in rows[5:]} >= {"correct", "wrong", "missing"}

    job = run_export(researcher, "predictions", "csv", django_capture_on_commit_callbacks,
                     runs=[unscorable.pk, results["run_b"].pk])
    assert job.status == Job.Status.SUCCEEDED, job.message
    assert "7 predictions without gold, outcome or correct (null)" in job.log
    assert f"run {results['run_b'].pk}: 2 (The run's requests cannot be rebuilt" in job.message


def test_the_command_reference_lists_the_prediction_columns_in_order():
    text = " ".join((Path(__file__).resolve().parents[2] / "docs" / "commands.md").read_text(
        encoding="utf-8").split())
    listed = re.search(r"Prediction columns, in order: (.*?)\. ", text)
    assert listed, "docs/commands.md lists the prediction columns"
    assert re.findall(r"`(\w+)`", listed.group(1)) == [c.name for c in exports.PREDICTION_COLUMNS]


def test_selections_by_ids_and_by_runs_look_each_run_up_once(kit_runs, monkeypatch):
    from evaluation import prediction_scores

    stored, retried = kit_runs["stored"], kit_runs["retried"]
    looked_up = []
    real = prediction_scores.run_scores

    def counted(run):
        looked_up.append(run.pk)
        return real(run)

    monkeypatch.setattr(prediction_scores, "run_scores", counted)
    by_runs = exports.select("predictions", runs=[stored.pk, retried.pk], chunk_rows=2)
    names = [c.name for c in by_runs.columns]
    whole = {row[0]: row for row in by_runs.rows}
    assert looked_up == [stored.pk, retried.pk]

    looked_up.clear()
    picked = [*Prediction.objects.filter(run=retried).values_list("pk", flat=True),
              *Prediction.objects.filter(run=stored, request_id__startswith="q1").values_list("pk", flat=True)]
    by_ids = exports.select("predictions", ids=picked, chunk_rows=1)
    rows = list(by_ids.rows)
    assert by_ids.total == len(rows) == 6 and looked_up == [stored.pk, retried.pk]
    assert [(row[names.index("run_id")], row[0]) for row in rows] == sorted(
        (whole[pk][names.index("run_id")], pk) for pk in picked)  # by run, then by id
    assert all(row == whole[row[0]] for row in rows)  # the same gold, outcome and correct as the whole runs'
    assert {row[names.index("outcome")] for row in rows} == {"correct", "wrong", None}


# --- Streaming: writers pull rows as they go, and only once ----------------------------------

class OneShot:
    """Rows that can be iterated once; counts how many were pulled."""

    def __init__(self, rows):
        self.rows, self.pulled, self.used = list(rows), 0, False

    def __iter__(self):
        if self.used:
            raise AssertionError("the rows were iterated twice")
        self.used = True
        for row in self.rows:
            self.pulled += 1
            yield row


def fake_rows(n: int):
    return [(i, f"text {i}", json.dumps({"i": i}), datetime(2024, 1, 1, tzinfo=UTC), i / 2, i % 2 == 0)
            for i in range(n)]


FAKE_COLUMNS = (exports.col("id", "int"), exports.col("text"), exports.col("doc", "json"),
                exports.col("at", "datetime"), exports.col("x", "float"), exports.col("flag", "bool"))


@pytest.mark.parametrize("encoder", [exports.jsonl_chunks, exports.csv_chunks])
def test_text_encoders_pull_one_chunk_of_rows_at_a_time(encoder):
    rows = OneShot(fake_rows(100))
    chunks = encoder(FAKE_COLUMNS, rows, rows_per_chunk=10)
    first = next(chunks)
    assert rows.pulled == 10, "the first piece should need only its own rows"
    assert first.count("\n") == (10 if encoder is exports.jsonl_chunks else 11)  # CSV has its header
    rest = list(chunks)
    assert rows.pulled == 100 and len(rest) == 10 - (encoder is exports.jsonl_chunks)


def test_json_lines_keep_one_object_a_line_and_stay_valid_json():
    columns = (exports.col("doc", "json"), exports.col("x", "float"), exports.col("note"), exports.col("n", "int"),
               exports.col("ok", "bool"))
    rows = [('{\n  "a": [1,\r\n 2]\n}', float("nan"), 'line one\nline "two" — ü', None, False),
            (None, float("inf"), "", 3, None), ('{"b": {"c": null}}', -0.5, None, -1, True)]
    text = "".join(exports.jsonl_chunks(columns, rows))
    lines = text.splitlines()
    assert len(lines) == 3 and text.endswith("\n")
    assert [json.loads(line) for line in lines] == [
        {"doc": {"a": [1, 2]}, "x": None, "note": 'line one\nline "two" — ü', "n": None, "ok": False},
        {"doc": None, "x": None, "note": "", "n": 3, "ok": None},
        {"doc": {"b": {"c": None}}, "x": -0.5, "note": None, "n": -1, "ok": True}]


def test_record_batches_are_bounded_and_parquet_is_written_batch_by_batch(tmp_path):
    rows = OneShot(fake_rows(45))
    batches = exports.record_batches(FAKE_COLUMNS, rows, batch_rows=10)
    assert next(batches).num_rows == 10 and rows.pulled == 10
    assert [b.num_rows for b in batches] == [10, 10, 10, 5]

    rows = OneShot(fake_rows(45))
    exports.write_parquet(FAKE_COLUMNS, rows, tmp_path / "x.parquet", batch_rows=10)
    metadata = pq.ParquetFile(tmp_path / "x.parquet").metadata
    assert (metadata.num_rows, metadata.num_row_groups) == (45, 5)


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet", "hf"])
def test_every_writer_reads_its_rows_once(tmp_path, fmt):
    rows = OneShot(fake_rows(25))
    export = exports.Export(exports.SOURCES["runs"], FAKE_COLUMNS, iter(rows), 25)
    written = exports.write(export, fmt, tmp_path / f"out{exports.FORMATS[fmt]}")
    assert rows.pulled == 25 and written.rows == 25
    assert [r["doc"] for r in read_back(fmt, written.path, FAKE_COLUMNS)] == [{"i": i} for i in range(25)]


def test_rows_come_from_the_database_lazily_as_tuples(results):
    export = exports.select("predictions", runs=[results["run_b"].pk])
    assert export.total == 2
    late = Prediction.objects.create(run=results["run_b"], request_id="q2:cf", item=results["items"][2],
                                     variant="cf", prompt=[])
    rows = list(export.rows)
    assert all(type(row) is tuple for row in rows)
    assert rows[-1][0] == late.pk, "rows are read when iterated, not when the export is selected"


def test_hf_refuses_a_folder_that_is_not_empty(tmp_path):
    (tmp_path / "ds").mkdir()
    (tmp_path / "ds" / "keep.txt").write_text("mine")
    export = exports.Export(exports.SOURCES["runs"], FAKE_COLUMNS, iter(fake_rows(3)), 3)
    with pytest.raises(exports.ExportError, match="not an empty folder"):
        exports.write(export, "hf", tmp_path / "ds")
    assert (tmp_path / "ds" / "keep.txt").read_text() == "mine"


# --- Hugging Face datasets: typed JSON columns ------------------------------------------------

def test_hf_runs_read_back_with_their_settings_as_structs(results, tmp_path):
    export = exports.select("runs")
    exports.write(export, "hf", tmp_path / "runs")
    rows = read_back("hf", tmp_path / "runs", export.columns)
    runs = list(EvaluationRun.objects.select_related("version__benchmark").order_by("pk"))
    assert [row["run_id"] for row in rows] == [run.pk for run in runs]
    for row, run in zip(rows, runs, strict=True):
        assert (row["model_id"], row["backend"], row["seed"], row["version_label"], row["created_at"]) == (
            run.model_id, run.backend, run.seed, run.version.label, run.created_at)
        for name in ("frame_policy", "generation_params", "variants", "describer"):
            assert row[name] == hf_support.without_nulls(getattr(run, name)), name
    assert rows[0]["generation_params"] == {"max_new_tokens": 16} and rows[1]["variants"] == ["real"]
    schema = pq.read_schema(next((tmp_path / "runs" / "data" / "runs").glob("*.parquet")))
    assert str(schema.field("variants").type) == "list<element: string>"
    assert str(schema.field("generation_params").type) == "struct<max_new_tokens: int64>"
    assert str(schema.field("created_at").type) == "timestamp[us, tz=UTC]"


def test_hf_keeps_a_json_column_whose_values_share_no_type_as_text_and_says_so(results, tmp_path):
    """Run A's parsed answers are objects, run B's strings: one column cannot hold both."""
    export = exports.select("predictions", runs=[results["run_a"].pk, results["run_b"].pk])
    exports.write(export, "hf", tmp_path / "both")
    (config,) = hf_support.checked_card(tmp_path / "both").values()
    assert config["features"]["parsed_answer"].dtype == "string"
    assert hf_support.json_text_columns(config["files"][0]) == {"parsed_answer", "parses"}
    assert "Columns kept as JSON text (read them with `json.loads`): `parsed_answer`, `parses`." in config["text"]
    assert "| `parsed_answer` | `string` | JSON text" in config["text"]
    rows = read_back("hf", tmp_path / "both", export.columns)
    assert [r["parsed_answer"] for r in rows] == [{"count": 0}, None, {"count": 2}, {"count": 3}, {"count": 4},
                                                  "two", "two"]
    assert rows[0]["prompt"][0]["content"][0] == {"type": "image", "sha256": f"{0:064x}"}


def test_hf_unifies_each_json_column_over_every_batch(tmp_path):
    """The first batches hold whole numbers and some keys, later ones decimals, more keys, lists that were
    empty: one type over all rows, written batch by batch; texts that look like dates stay texts."""
    def doc(i):
        if i < 10:
            return {"n": i, "tags": [], "maybe": None, "at": f"2024-05-{i + 1:02d}T10:00:00"}
        return {"n": i + 0.5, "tags": [f"t{i}"], "maybe": {"deep": [i]}, "late": True, "at": "soon"}

    columns = (exports.col("id", "int"), exports.col("doc", "json"), exports.col("mixed", "json"),
               exports.col("empty", "json"), exports.col("wide", "json"))
    rows = OneShot([(i, json.dumps(doc(i)), json.dumps(i if i % 7 else {"i": i}), "{}",
                     json.dumps({f"key{k}": k for k in range(300)})) for i in range(25)])
    export = exports.Export(exports.SOURCES["runs"], columns, iter(rows), 25)
    written = exports.write(export, "hf", tmp_path / "ds", batch_rows=4)
    assert rows.pulled == 25 and written.rows == 25
    (config,) = hf_support.checked_card(tmp_path / "ds").values()
    assert config["features"]["mixed"].dtype == "string"
    schema = pq.read_schema(config["files"][0])
    assert str(schema.field("doc").type) == ("struct<n: double, tags: list<element: string>, "
                                             "maybe: struct<deep: list<element: int64>>, at: string, late: bool>")
    assert hf_support.json_text_columns(config["files"][0]) == {"mixed", "empty", "wide"}
    assert pq.ParquetFile(config["files"][0]).metadata.num_row_groups == 7  # batch by batch
    back = read_back("hf", tmp_path / "ds", columns)
    assert [r["doc"] for r in back] == [hf_support.without_nulls(doc(i)) for i in range(25)]
    assert [r["mixed"] for r in back] == [i if i % 7 else {"i": i} for i in range(25)]
    assert back[3]["empty"] == {} and len(back[3]["wide"]) == 300


def test_hf_splits_a_large_export_into_shards(tmp_path, monkeypatch):
    from annotation.exporters import hf_dataset

    monkeypatch.setattr(hf_dataset, "SHARD_BYTES", 1)  # every row would be a shard of its own; at most rows
    export = exports.Export(exports.SOURCES["runs"], FAKE_COLUMNS, iter(fake_rows(9)), 9)
    exports.write(export, "hf", tmp_path / "ds", batch_rows=4)
    (config,) = hf_support.checked_card(tmp_path / "ds").values()
    assert [f.name for f in config["files"]] == [f"train-{i:05d}-of-00009.parquet" for i in range(9)]
    back = read_back("hf", tmp_path / "ds", FAKE_COLUMNS)
    assert [r["id"] for r in back] == list(range(9))


# --- The export job and its download -----------------------------------------------------------

def run_export(user, what, fmt, capture, **selection) -> Job:
    with capture(execute=True):
        job = exports.enqueue_export(user, what, fmt, **selection)
    job.refresh_from_db()
    return job


def test_the_job_writes_the_file_and_its_owner_downloads_it(results, researcher, admin_user, curator, annotator,
                                                            media_root, django_capture_on_commit_callbacks):
    job = run_export(researcher, "predictions", "jsonl", django_capture_on_commit_callbacks,
                     runs=[results["run_a"].pk])
    assert job.status == Job.Status.SUCCEEDED, job.message
    assert job.params == {"what": "predictions", "fmt": "jsonl", "runs": [results["run_a"].pk]}
    stored = media_root / "exports" / f"job-{job.pk}" / "predictions.jsonl"
    assert stored.is_file()
    url = reverse("export-download", kwargs={"pk": job.pk})
    assert job.result["rows"] == 5 and job.result["download_url"] == url
    assert job.result["path"] == f"job-{job.pk}/predictions.jsonl"

    for user in (researcher, admin_user):
        response = logged_in_client(user).get(url)
        assert response.status_code == 200
        body = b"".join(response.streaming_content)
        assert body == stored.read_bytes()
        assert response["Content-Disposition"] == 'attachment; filename="predictions.jsonl"'
        assert response["Cache-Control"] == "private, no-store"
    assert [json.loads(line)["prediction_id"] for line in body.decode().splitlines()] == [
        r["prediction_id"] for r in expected_predictions(results["run_a"])]

    colleague = make_user("res-2", RESEARCHER)
    assert logged_in_client(colleague).get(url).status_code == 403
    assert logged_in_client(annotator).get(url).status_code == 403
    assert logged_in_client(curator).get(url).status_code == 403
    assert logged_in_client(None).get(url).status_code == 302
    missing = reverse("export-download", kwargs={"pk": 987654})
    assert logged_in_client(researcher).get(missing).status_code == 404


def test_downloads_of_other_jobs_unfinished_exports_and_lost_files(results, researcher, media_root, settings,
                                                                    django_capture_on_commit_callbacks):
    client = logged_in_client(researcher)
    probe = Job.objects.create(kind="probe_video", status=Job.Status.SUCCEEDED, requested_by=researcher,
                               result={"path": "job-1/predictions.jsonl"})
    assert client.get(reverse("export-download", kwargs={"pk": probe.pk})).status_code == 404
    queued = jobs.create(exports.EXPORT_JOB_KIND, params={"what": "runs", "fmt": "csv"}, user=researcher)
    assert client.get(reverse("export-download", kwargs={"pk": queued.pk})).status_code == 409
    escaping = Job.objects.create(kind=exports.EXPORT_JOB_KIND, status=Job.Status.SUCCEEDED, requested_by=researcher,
                                  result={"path": "../../../etc/passwd"})
    assert client.get(reverse("export-download", kwargs={"pk": escaping.pk})).status_code == 404
    job = run_export(researcher, "runs", "csv", django_capture_on_commit_callbacks)
    url = reverse("export-download", kwargs={"pk": job.pk})
    assert client.get(url).status_code == 200
    settings.MEDIA_ACCEL_REDIRECT_PREFIX = "/protected"  # behind nginx: it sends the file from MEDIA_ROOT
    response = client.get(url)
    assert response["X-Accel-Redirect"] == f"/protected/exports/job-{job.pk}/runs.csv"
    assert response["Content-Disposition"] == 'attachment; filename="runs.csv"'
    (media_root / "exports" / job.result["path"]).unlink()
    assert client.get(url).status_code == 404


def test_an_hf_export_job_is_downloaded_as_a_zip_of_the_dataset_folder(results, researcher, tmp_path,
                                                                       django_capture_on_commit_callbacks):
    job = run_export(researcher, "predictions", "hf", django_capture_on_commit_callbacks, runs=[results["run_b"].pk])
    assert job.status == Job.Status.SUCCEEDED, job.message
    assert job.result["file_name"] == "predictions.hf.zip" and job.result["rows"] == 2
    response = logged_in_client(researcher).get(job.result["download_url"])
    with zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content))) as archive:
        assert sorted(archive.namelist()) == ["predictions.hf/README.md",
                                              "predictions.hf/data/predictions/train-00000-of-00001.parquet"]
        archive.extractall(tmp_path)
    folder = tmp_path / "predictions.hf"
    (config,) = hf_support.checked_card(folder).values()
    assert f"run {results['run_b'].pk}: cvqa v-exports" in config["text"]
    dataset = hf_support.load(folder, cache=tmp_path / "cache", split="train")
    assert dataset["request_id"] == ["q0:cf", "q1:cf"] and dataset["model_id"] == ["org/vlm-b"] * 2
    assert dataset["parsed_answer"] == ["two", "two"]  # JSON strings: a string column


def test_only_researchers_and_admins_queue_exports(results, curator, annotator):
    from django.core.exceptions import PermissionDenied

    for user in (curator, annotator):
        with pytest.raises(PermissionDenied):
            exports.enqueue_export(user, "runs", "csv")
    assert not Job.objects.filter(kind=exports.EXPORT_JOB_KIND).exists()


# --- Admin actions -----------------------------------------------------------------------------

def admin_request(user):
    request = RequestFactory().post("/admin/")
    request.user = user
    request.session = {}
    request._messages = FallbackStorage(request)
    return request


def test_the_run_admin_action_queues_an_export_job(results, django_user_model, django_capture_on_commit_callbacks):
    run_a = results["run_a"]
    root = django_user_model.objects.create_superuser("root", "root@example.org", "pw")
    run_admin = admin.site.get_model_admin(EvaluationRun)
    names = [getattr(a, "__name__", a) for a in run_admin.actions]
    assert {"cancel_runs", "export_predictions_of_runs_parquet", "export_metrics_of_runs_csv",
            "export_judgments_of_runs_jsonl", "export_runs_hf"} <= set(names)
    client = logged_in_client(root)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("admin:evaluation_evaluationrun_changelist"),
                               {"action": "export_predictions_of_runs_parquet", "_selected_action": [run_a.pk]},
                               follow=True)
    assert response.status_code == 200
    job = Job.objects.get(kind=exports.EXPORT_JOB_KIND)
    assert job.requested_by == root
    assert job.params == {"what": "predictions", "fmt": "parquet", "runs": [run_a.pk]}
    assert job.status == Job.Status.SUCCEEDED, job.message
    assert f"job #{job.pk}" in response.content.decode()
    assert pq.read_metadata(Path(job_files.export_root(), job.result["path"])).num_rows == 5


def test_prediction_actions_send_whole_runs_or_ids(results, researcher, curator):
    run_a = results["run_a"]
    action = next(a for a in admin.site.get_model_admin(Prediction).actions
                  if getattr(a, "__name__", "") == "export_predictions_jsonl")
    model_admin = admin.site.get_model_admin(Prediction)
    action(model_admin, admin_request(researcher), Prediction.objects.filter(run=run_a))
    pks = sorted(Prediction.objects.filter(run=run_a).values_list("pk", flat=True))[:2]
    action(model_admin, admin_request(researcher), Prediction.objects.filter(pk__in=pks))
    queued = list(Job.objects.filter(kind=exports.EXPORT_JOB_KIND).order_by("pk").values_list("params", flat=True))
    assert queued == [{"what": "predictions", "fmt": "jsonl", "runs": [run_a.pk]},
                      {"what": "predictions", "fmt": "jsonl", "ids": pks}]

    request = admin_request(curator)
    action(model_admin, request, Prediction.objects.filter(run=run_a))
    assert Job.objects.filter(kind=exports.EXPORT_JOB_KIND).count() == 2
    assert [m.message for m in request._messages] == ["Only researchers and admins export results."]


def test_a_large_selection_of_single_rows_is_refused(results, researcher, monkeypatch):
    monkeypatch.setattr(admin_export_actions, "MAX_SELECTED_IDS", 2)
    src = exports.source("predictions")
    three = Prediction.objects.filter(run=results["run_a"]).order_by("pk")[:3].values_list("pk", flat=True)
    with pytest.raises(exports.ExportError, match="3 rows are selected"):
        admin_export_actions.selection_of(src, Prediction.objects.filter(pk__in=list(three)))
    assert admin_export_actions.selection_of(src, Prediction.objects.filter(run=results["run_b"])) == {
        "runs": [results["run_b"].pk]}


def test_submission_and_judgment_admins_have_export_actions():
    from annotation.crowd.models import Submission
    from evaluation.models import Judgment

    names = {getattr(a, "__name__", a) for a in admin.site.get_model_admin(Submission).actions}
    assert {"export_submissions_csv", "export_submissions_hf"} <= names
    names = {getattr(a, "__name__", a) for a in admin.site.get_model_admin(Judgment).actions}
    assert {"export_judgments_jsonl", "export_judgments_parquet"} <= names


# --- The command ---------------------------------------------------------------------------------

def test_command_writes_each_format(results, tmp_path, capsys):
    run_a = results["run_a"]
    call_command("export_results", "--what", "predictions", "--run", str(run_a.pk), "--format", "jsonl",
                 "--out", str(tmp_path / "a.jsonl"))
    assert "Wrote 5 predictions" in capsys.readouterr().err
    columns = exports.SOURCES["predictions"].columns
    assert read_back("jsonl", tmp_path / "a.jsonl", columns) == expected_predictions(run_a)
    call_command("export_results", "--what", "predictions", "--run", str(run_a.pk), "--out",
                 str(tmp_path / "a.parquet"))  # format from the extension
    assert read_back("parquet", tmp_path / "a.parquet", columns) == expected_predictions(run_a)
    call_command("export_results", "--what", "runs", "--format", "hf", "--out", str(tmp_path / "runs"))
    runs = read_back("hf", tmp_path / "runs", exports.SOURCES["runs"].columns)
    assert sorted(r["model_id"] for r in runs) == ["org/vlm-a", "org/vlm-b"]
    assert [r["variants"] for r in runs] == [[], ["real"]] and runs[0]["generation_params"] == {"max_new_tokens": 16}
    out = io.StringIO()
    call_command("export_results", "--what", "runs", "--run", str(results["run_b"].pk), "--format", "csv",
                 "--out", "-", stdout=out)
    (row,) = csv.DictReader(io.StringIO(out.getvalue()))
    assert row["model_id"] == "org/vlm-b" and row["backend"] == "openai"


@pytest.mark.parametrize(("args", "message"), [
    (["--what", "predictions", "--run", "987654", "--out", "x.csv"], "No evaluation run"),
    (["--what", "predictions", "--study", "s", "--out", "x.csv"], "do not belong to crowd studies"),
    (["--what", "nothing", "--out", "x.csv"], "invalid choice"),
    (["--what", "runs", "--out", "x.txt"], "Cannot tell the format"),
    (["--what", "runs", "--format", "parquet", "--out", "-"], "standard output"),
])
def test_command_errors(results, args, message):
    with pytest.raises(CommandError, match=message):
        call_command("export_results", *args)


@pytest.mark.django_db
def test_role_groups_hold_the_permissions_of_every_app_after_migrate():
    """The groups are filled after the last app migrated, so apps after `annotation` count too."""
    from django.contrib.auth.models import Group, Permission

    researcher = {f"{p.content_type.app_label}.{p.codename}"
                  for p in Group.objects.get(name="researcher").permissions.select_related("content_type")}
    assert {"evaluation.view_evaluationrun", "evaluation.view_prediction", "evaluation.view_judgment",
            "annotation.view_submission", "generation.view_job"} <= researcher
    admin_group = Group.objects.get(name="admin")
    assert admin_group.permissions.count() == Permission.objects.count()
    assert admin_group.permissions.filter(content_type__app_label="evaluation").exists()
