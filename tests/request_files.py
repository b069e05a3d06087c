"""Small frozen versions and the files that travel outside the platform, for the tests of `export_requests`,
`score`, the evaluation kits, results exports and imported runs: a C-VQA version with numerical, yes/no and
A–D questions (`kit_version`) and a stored run over it (`stored_run`), its requests exported in any format,
answers to them written in the platform's JSON lines or filled into a kit's files, and metrics compared
without what only says where they came from."""

from __future__ import annotations

import csv
import io
import json

from django.core.management import call_command

from annotation import versions
from annotation.models import Benchmark, BenchmarkVersion
from evaluation import runner, stored_readings
from evaluation.kits import tables
from evaluation.models import EvaluationRun, Prediction
from tests.conftest import cvqa_payload

SYNTHETIC = {"kind": "synthetic", "type": "abs_counting_4",
             "query": "How many dots are there? Select the correct answer:A:16  B:17  C:12  D:13", "answer": "B",
             "new_query": "How many dots if 5 were removed? Select the correct answer:A:11  B:12  C:10  D:14",
             "new_answer": "B"}
BOOLEAN = cvqa_payload("yes", type="boolean", query="Is there a cup on the table?",
                       new_query="Is there a cup on the table if it is taken away?", new_answer="no")
KIT_LABEL = "k1"  # the label of `kit_version`


def frozen(slug: str, label: str, items: list[tuple[str, dict, dict]]) -> BenchmarkVersion:
    version = BenchmarkVersion.objects.create(benchmark=Benchmark.objects.get(slug=slug), label=label)
    for external_id, payload, media in items:
        versions.add_item(version, external_id, payload, media)
    return versions.freeze(version)


def run_command(name: str, *args) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command(name, *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def kit_version(image) -> BenchmarkVersion:
    """C-VQA `k1`: numerical questions (one with an image), a yes/no question and an A–D synthetic question;
    8 requests."""
    return frozen("cvqa", KIT_LABEL, [("q1", cvqa_payload("two"), {"image": image}), ("q2", cvqa_payload("3"), {}),
                                      ("b1", BOOLEAN, {}), ("s1", SYNTHETIC, {})])


def stored_run(version) -> EvaluationRun:
    """A run over `kit_version` with right, wrong, unparsed and failed predictions (b1:counterfactual only
    failed), its readings stored as `score --run` stores them; `EXPECTED_CORRECT` is how its results score it."""
    run = EvaluationRun.objects.create(version=version, model_id="org/vlm", status=EvaluationRun.Status.SUCCEEDED)
    requests = {planned.request.request_id: planned for planned in runner.plan(run)}
    answers = {"q1:original": "Two.", "q1:counterfactual": "There would be 5 cups.", "q2:original": "I can't tell",
               "q2:counterfactual": "", "b1:original": "No.", "s1:original": requests["s1:original"].request.gold,
               "s1:counterfactual": "E"}
    items = {item.external_id: item for item in version.items.all()}
    for rid, text in answers.items():
        Prediction.objects.create(run=run, request_id=rid, item=items[rid.split(":")[0]], variant=rid.split(":")[1],
                                  prompt=[], raw_output=text)
    Prediction.objects.create(run=run, request_id="b1:counterfactual", item=items["b1"], variant="counterfactual",
                              prompt=[], raw_output="", error="CUDA out of memory")
    stored_readings.store_readings(run, [planned.request for planned in requests.values()])
    return run


EXPECTED_CORRECT = {"q1:original": True, "q1:counterfactual": False, "q2:original": False,
                    "q2:counterfactual": False, "b1:original": False, "s1:original": True, "s1:counterfactual": False}


def export(tmp_path, fmt: str, name: str, *args) -> str:
    """The requests of `kit_version` in a format, as `manage.py export_requests` writes them."""
    path = tmp_path / name
    run_command("export_requests", "--benchmark", "cvqa", "--version", KIT_LABEL, "--out", str(path), "--format", fmt,
                *args)
    return path.read_text(encoding="utf-8")


def platform_lines(tmp_path) -> list[dict]:
    return [json.loads(line) for line in export(tmp_path, "jsonl", "requests.jsonl").splitlines()]


def score(tmp_path, predictions, *args) -> dict:
    """metrics.json of `manage.py score --predictions` on `kit_version`."""
    out = tmp_path / "metrics.json"
    out.unlink(missing_ok=True)
    run_command("score", "--benchmark", "cvqa", "--version", KIT_LABEL, "--predictions", str(predictions),
                "--out", str(out), *args)
    return json.loads(out.read_text(encoding="utf-8"))


def answers_for(lines: list[dict]) -> dict[str, str]:
    """Some right, some wrong, one unparseable; q2:counterfactual is left unanswered."""
    gold = {line["request_id"]: line["gold"] for line in lines}
    wrong_letter = next(letter for letter in "ABCD" if letter != gold["s1:original"])
    return {"q1:original": "Two.", "q1:counterfactual": "There would be 5 cups.", "q2:original": "I can't tell",
            "b1:original": "Yes, there is.", "b1:counterfactual": "Yes.", "s1:original": wrong_letter,
            "s1:counterfactual": f"Answer: {gold['s1:counterfactual']}"}


def write_platform(tmp_path, answers: dict[str, str], name: str = "platform.jsonl"):
    """The answers in the platform's JSON lines."""
    path = tmp_path / name
    path.write_text("".join(json.dumps({"request_id": rid, "response": text}) + "\n" for rid, text in answers.items()),
                    encoding="utf-8")
    return path


def platform_metrics(tmp_path, answers: dict[str, str]) -> dict:
    return score(tmp_path, write_platform(tmp_path, answers))


def without_meta(metrics: dict) -> dict:
    """Metrics less what says where they came from (`meta`) and the predictions that named no request."""
    found = {key: value for key, value in metrics.items() if key != "meta"}
    found["predictions"] = {k: v for k, v in found["predictions"].items()
                            if k not in ("unknown_requests", "unknown_request_ids")}
    return found


def read_tsv(text: str) -> list[dict]:
    return list(csv.DictReader(text.splitlines(), delimiter="\t"))


def fill_vlmevalkit(text: str, answers: dict[str, str], keep_request_id: bool) -> tuple[list[str], list[list]]:
    """VLMEvalKit's prediction table of the exported dataset TSV `text`: its rows that `answers` answers, with a
    `prediction` column (and without `request_id` unless kept, as VLMEvalKit's own dataset would be)."""
    rows = read_tsv(text)
    header = [name for name in rows[0] if keep_request_id or name != "request_id"] + ["prediction"]
    filled = [[row[name] for name in header[:-1]] + [answers[row["request_id"]]]
              for row in rows if row["request_id"] in answers]
    return header, filled


def write_vlmevalkit(tmp_path, answers: dict[str, str], name: str = "model_cvqa_k1.tsv"):
    """The answers filled into `kit_version`'s VLMEvalKit TSV, joined back by `index` only."""
    header, filled = fill_vlmevalkit(export(tmp_path, "vlmevalkit", "cvqa_k1.tsv"), answers, keep_request_id=False)
    path = tmp_path / name
    path.write_text("".join(tables.tsv_chunks(header, filled)), encoding="utf-8")
    return path


def fill_lmms_eval(text: str, answers: dict[str, str]) -> list[dict]:
    """lmms-eval's samples of the exported samples `text` that `answers` answers, filled as its
    `--log_samples` writes them; q1 and s1 keep only their `doc_id` (as lmms-eval's own task would), an
    older log (no `filtered_resps`) for b1:counterfactual, and a row for a document the export does not have."""
    filled = []
    for sample in map(json.loads, text.splitlines()):
        rid = sample["request_id"]
        if rid not in answers:
            continue  # as if the kit was run with a limit
        sample["resps"] = [[answers[rid]]]
        if rid == "b1:counterfactual":
            del sample["filtered_resps"]  # an older log: the first raw response is read
        else:
            sample["filtered_resps"] = [answers[rid]]
        if rid.startswith("q1") or rid.startswith("s1"):
            del sample["request_id"]
            del sample["doc"]["request_id"]
        filled.append(sample)
    filled.append({"doc_id": 99, "doc": {}, "target": "1", "resps": [["1"]], "filtered_resps": ["1"]})
    return filled


def write_lmms_eval(tmp_path, answers: dict[str, str], name: str = "samples_cvqa_k1.jsonl"):
    samples = fill_lmms_eval(export(tmp_path, "lmms-eval", "samples.jsonl"), answers)
    path = tmp_path / name
    path.write_text("".join(json.dumps(s) + "\n" for s in samples), encoding="utf-8")
    return path
