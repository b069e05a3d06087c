"""Predictions made outside the platform imported as a run (evaluation/imported_runs.py): a version's requests
exported in each format, answered, and brought back with `manage.py import_run`, or from the version's
results page and the API by a background job (evaluation/prediction_import_jobs.py) that links the new run; the run's
metrics are those `manage.py score --predictions` gives for the same file, it shows on the results pages and
the leaderboard, its predictions export with gold and correctness, and bad input (a malformed file, an
unknown or unfrozen version, a file too large, rows naming no request) is refused with a clear message,
leaving nothing behind (a file refused by the job fails it with the reason, and its stored upload is
removed). The requests download of the results page in each format."""

import hashlib
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError
from django.urls import reverse

from config.models import StateChange
from evaluation import imported_runs, prediction_import_jobs, results, runs
from evaluation.models import EvaluationRun, Prediction
from generation.models import Job
from tests.request_files import (
    answers_for,
    export,
    kit_version,
    platform_lines,
    read_tsv,
    run_command,
    score,
    without_meta,
    write_lmms_eval,
    write_platform,
    write_vlmevalkit,
)

pytestmark = pytest.mark.django_db

WRITERS = {"jsonl": write_platform, "lmms-eval": write_lmms_eval, "vlmevalkit": write_vlmevalkit}
# How `answers_for` scores (q2:counterfactual has no answer): C-VQA reads "Two." as 2, "I can't tell" as unparsed
EXPECTED_CORRECT = {"q1:original": True, "q1:counterfactual": False, "q2:original": False, "b1:original": True,
                    "b1:counterfactual": False, "s1:original": False, "s1:counterfactual": True}


@pytest.fixture
def version(image):
    return kit_version(image)


@pytest.fixture
def answers(tmp_path, version) -> dict[str, str]:
    return answers_for(platform_lines(tmp_path))


def import_file(path, *args) -> tuple[EvaluationRun, str]:
    out, _ = run_command("import_run", "--benchmark", "cvqa", "--version", "k1", "--predictions", str(path),
                         "--model-id", "org/elsewhere-vlm", *args)
    return EvaluationRun.objects.get(), out


def nothing_left() -> bool:
    return not EvaluationRun.objects.exists() and not Prediction.objects.exists() and not StateChange.objects.filter(
        content_type__model="evaluationrun").exists()


# --- The service and the command -------------------------------------------------------------------------

@pytest.mark.parametrize("fmt", list(WRITERS))
def test_each_format_imports_as_a_run_scored_like_score_predictions(tmp_path, version, answers, fmt):
    path = WRITERS[fmt](tmp_path, answers)
    expected = score(tmp_path, path)
    run, out = import_file(path)

    assert (run.backend, run.status, run.model_id, run.version) == ("imported", "succeeded", "org/elsewhere-vlm",
                                                                     version)
    assert (run.input_strategy, run.prompting, run.option_order, run.seed) == ("default", "standard", "release", 0)
    found = results.run_results(run)
    assert found.ok and without_meta(found.metrics) == without_meta(expected)
    assert found.metrics["predictions"]["missing"] == 1  # q2:counterfactual
    assert found.metrics["real"]["numerical_direct"]["original_accuracy"] == 0.5
    assert {rid: outcome.status == results.CORRECT for rid, outcome in found.outcomes.items()
            if rid in answers} == EXPECTED_CORRECT

    options = run.backend_options
    assert (options["file"], options["format"]) == (path.name, fmt)
    assert options["checksum"] == "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()
    assert options["bytes"] == path.stat().st_size
    assert (options["predictions"], options["answered_requests"], options["unanswered_requests"]) == (7, 7, 1)
    joined = {"jsonl": {"request_id": 7}, "lmms-eval": {"request_id": 3, "doc_id": 5},
              "vlmevalkit": {"request_id": 0, "index": 7}}[fmt]
    sources = {"jsonl": {"response": 7}, "lmms-eval": {"filtered_resps": 7, "resps": 1},
               "vlmevalkit": {"prediction": 7}}[fmt]
    assert (options["joined_by"], options["responses_from"]) == (joined, sources)
    assert (options["unknown_requests"], options["unknown_request_ids"]) == (
        (1, ["doc_id 99"]) if fmt == "lmms-eval" else (0, []))

    stored = {p.request_id: p for p in run.predictions.all()}
    assert len(stored) == 8 and all(stored[rid].raw_output == text and not stored[rid].error
                                    for rid, text in answers.items())
    assert stored["q1:original"].parses["authors"] == {"value": 2, "status": "ok"}
    assert stored["q1:original"].parsed_answer == 2 and stored["q2:original"].parse_status == "unparsed"
    assert stored["q2:counterfactual"].error == f"no answer in {path.name}"
    assert stored["q1:original"].inputs == {"imported": {"file": path.name, "format": fmt}}
    assert stored["q1:original"].prompt[0]["content"][-1]["text"].startswith("How many cups")
    assert (run.total_requests, run.completed_predictions, run.failed_predictions) == (8, 7, 1)
    assert [(c.from_state, c.to_state) for c in run.transitions] == [("pending", "running"), ("running", "succeeded")]

    assert out.startswith(f"Run {run.pk}: org/elsewhere-vlm on cvqa:k1")
    assert f"Imported 7 predictions from {path.name}" in out and "1 without an answer" in out
    headline = next(line for line in out.splitlines() if line.startswith("Real original"))
    assert headline.split() == ["Real", "original", "66.7%", "3", "1"]  # the headline metrics


def test_the_request_options_are_those_the_file_was_exported_with(tmp_path, version):
    """A VLMEvalKit table of the original questions only, joined by index: the same --variants on both sides."""
    header = ["index", "prediction"]
    rows = read_tsv(export(tmp_path, "vlmevalkit", "originals.tsv", "--variants", "original"))
    assert [row["request_id"] for row in rows] == ["b1:original", "q1:original", "q2:original", "s1:original"]
    path = tmp_path / "originals-preds.tsv"
    path.write_text("\t".join(header) + "\n1\ttwo\n2\t3\n", encoding="utf-8")

    run, _ = import_file(path, "--variants", "original")
    metrics = results.run_results(run).metrics
    assert run.variants == ["original"] and run.total_requests == 4
    assert metrics["real"]["numerical_direct"]["original_accuracy"] == 1.0
    assert metrics["predictions"]["answered"] == 2
    assert without_meta(metrics) == without_meta(score(tmp_path, path, "--variants", "original"))


def test_judgments_in_the_file_are_counted_not_imported_and_batches_are_small(tmp_path, version, answers,
                                                                               monkeypatch):
    path = tmp_path / "judged.jsonl"
    lines = [{"request_id": rid, "response": text, "judgment": {"score": 1}} for rid, text in answers.items()]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    sizes = []
    bulk_create = Prediction.objects.bulk_create

    def counted(rows, *args, **kwargs):
        sizes.append(len(rows))
        return bulk_create(rows, *args, **kwargs)

    monkeypatch.setattr(imported_runs, "BATCH", 3)
    monkeypatch.setattr(Prediction.objects, "bulk_create", counted)
    run, out = import_file(path)
    assert run.backend_options["judgments_not_imported"] == 7
    assert "7 judge verdicts in the file were not imported" in out
    assert sizes == [3, 3, 2]  # 7 answers and the failed row of the unanswered request, 3 at a time
    assert run.predictions.count() == 8


def test_an_imported_run_has_no_model_to_resume(tmp_path, version, answers):
    run, _ = import_file(write_platform(tmp_path, answers))
    with pytest.raises(runs.RunConfigError, match="was imported from a file"):
        runs.start_run(run)
    run.refresh_from_db()
    assert run.status == "succeeded"


@pytest.mark.parametrize(("name", "content", "args", "message"), [
    ("bad.tsv", "index\tprediction\n0\t2\nfirst\t3\n", (), r"bad.tsv row 3: `index` must be an integer"),
    ("bad.jsonl", '{"request_id": "q1:original", "response": "2"}\n{not json\n', (), r"bad.jsonl line 2: not JSON"),
    ("twice.jsonl", '{"request_id": "q1:original", "response": "2"}\n{"request_id": "q1:original", "response": "3"}\n',
     (), "Two predictions for request 'q1:original' sample 0"),
    ("samples.jsonl", '{"doc_id": 0, "resps": [["1"]]}\n{"doc_id": 0, "resps": [["2"]]}\n', (),
     r"samples.jsonl line 2: a second row for request 'b1:original' \(the first is samples.jsonl line 1\)"),
    ("empty.jsonl", "\n", (), "empty.jsonl is empty: it holds no predictions"),
    ("header.tsv", "index\tprediction\n", (), "header.tsv is empty: it holds no predictions"),
    ("elsewhere.jsonl", '{"request_id": "z9:original", "response": "2"}\n', (),
     r"No row of elsewhere.jsonl names a request of cvqa:k1 under these options \(e.g. z9:original\)"),
    ("unanswered.jsonl", '{"doc_id": 0, "resps": [], "filtered_resps": []}\n', (),
     "No row of unanswered.jsonl holds an answer"),
    ("preds.jsonl", '{"request_id": "q1:original", "response": "2"}\n', ("--input", "frames"),
     "cvqa has no input strategy 'frames'"),
    ("latin.jsonl", b'{"request_id": "q1:original", "response": "\xe9"}\n', (), "latin.jsonl: not UTF-8 text"),
])
def test_bad_files_and_options_are_refused_and_leave_nothing(tmp_path, version, name, content, args, message):
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    with pytest.raises(CommandError, match=message):
        import_file(path, *args)
    assert nothing_left()


def test_the_command_refuses_an_unknown_or_unfrozen_version_and_a_missing_file(tmp_path, version, draft_version,
                                                                              answers):
    path = write_platform(tmp_path, answers)
    base = ("import_run", "--benchmark", "cvqa", "--predictions", str(path), "--model-id", "m")
    with pytest.raises(CommandError, match="cvqa has no version 'k9'; its versions: draft-1, k1"):
        run_command(*base, "--version", "k9")
    with pytest.raises(CommandError, match="Version cvqa:draft-1 is not frozen"):
        run_command(*base, "--version", "draft-1")
    with pytest.raises(CommandError, match="Cannot read missing.jsonl"):
        run_command(*base[:3], "--predictions", str(tmp_path / "missing.jsonl"), "--model-id", "m", "--version", "k1")
    with pytest.raises(CommandError, match="Give the model's name"):
        run_command(*base[:5], "--model-id", " ", "--version", "k1")
    with pytest.raises(imported_runs.ImportRefused, match="is not frozen"):
        imported_runs.import_run(draft_version, path, model_id="m")
    assert nothing_left()


# --- The results pages ---------------------------------------------------------------------------------

def test_the_imported_run_shows_on_the_results_pages_and_the_leaderboard(tmp_path, version, answers,
                                                                        researcher_client):
    run, _ = import_file(write_vlmevalkit(tmp_path, answers))
    board = researcher_client.get(reverse("results-version", kwargs={"pk": version.pk})).content.decode()
    row = board[board.index(f'<tr data-run="{run.pk}">'):]
    row = row[:row.index("</tr>")]
    assert "elsewhere-vlm" in row and ">imported</span>" in row and "model_cvqa_k1.tsv" in row
    assert results.run_results(run).metrics["real"]["original_accuracy"] == 2 / 3
    cell = row[row.index('data-metric="real.original_accuracy"'):]
    assert cell[:cell.index("</td>")].split("</a>")[0].endswith(">66.7%")

    page = researcher_client.get(reverse("results-run", kwargs={"pk": run.pk})).content.decode()
    facts = page[page.index('id="imported-from"'):]
    facts = facts[:facts.index("</dd>")]
    assert "Imported 7 predictions from model_cvqa_k1.tsv (VLMEvalKit (TSV))" in facts
    assert "1 without an answer" in facts and run.backend_options["checksum"] in facts and "index: 7" in facts
    metric = "real.numerical_direct.original_accuracy"
    drill = researcher_client.get(reverse("results-drill", kwargs={"pk": run.pk, "metric": metric}))
    assert drill.status_code == 200 and "I can&#x27;t tell" in drill.content.decode()
    assert researcher_client.get(reverse("run-detail", kwargs={"pk": run.pk})).status_code == 200


def test_predictions_exports_of_an_imported_run_carry_gold_and_correctness(tmp_path, version, answers):
    run, _ = import_file(write_lmms_eval(tmp_path, answers))
    out = tmp_path / "run.tsv"
    run_command("export_results", "--what", "predictions", "--format", "vlmevalkit", "--run", str(run.pk),
                "--out", str(out))
    rows = {row["request_id"]: row for row in read_tsv(out.read_text(encoding="utf-8"))}
    assert {rid: row["correct"] for rid, row in rows.items()} == {
        rid: "1" if right else "0" for rid, right in EXPECTED_CORRECT.items()}  # the unanswered one has no row
    assert rows["b1:counterfactual"]["answer"] == "No" and rows["b1:counterfactual"]["prediction"] == "Yes."
    samples_out = tmp_path / "run.jsonl"
    run_command("export_results", "--what", "predictions", "--format", "lmms-eval", "--run", str(run.pk),
                "--out", str(samples_out))
    samples = {s["request_id"]: s for s in map(json.loads, samples_out.read_text(encoding="utf-8").splitlines())}
    assert {rid: s["correct"] for rid, s in samples.items()} == EXPECTED_CORRECT
    assert samples["q1:original"]["target"] == 2 and samples["q1:original"]["parsed"] == 2


def upload(path, name: str | None = None) -> SimpleUploadedFile:
    return SimpleUploadedFile(name or path.name, path.read_bytes())


def post_import(client, url, data, capture, **kwargs):
    """A post of the import form or the API, with the jobs it queues run (as the worker runs them) when it commits."""
    with capture(execute=True):
        return client.post(url, data, **kwargs)


def import_job() -> Job:
    return Job.objects.get(kind=prediction_import_jobs.IMPORT_JOB_KIND)


def stored_files(media_root) -> list:
    return [path for path in (media_root / "exports").rglob("*") if path.is_file()]


def no_import_left(media_root) -> bool:
    """No import job was queued and no upload is stored."""
    return not Job.objects.filter(kind=prediction_import_jobs.IMPORT_JOB_KIND).exists() and not stored_files(media_root)


def test_a_researcher_imports_from_the_version_page(tmp_path, version, answers, researcher_client, researcher,
                                                    media_root, django_capture_on_commit_callbacks):
    page = researcher_client.get(reverse("results-version", kwargs={"pk": version.pk})).content.decode()
    assert 'id="import-form"' in page and 'id="requests-form"' in page and "Import predictions made elsewhere" in page
    assert "Your imports" in page and '<ul class="result-jobs" id="import-jobs">' in page
    path = write_lmms_eval(tmp_path, answers)
    url = reverse("results-version-import", kwargs={"pk": version.pk})
    response = post_import(researcher_client, url, {"file": upload(path), "fmt": "", "model_id": "lab/my-vlm",
                                                    "input_strategy": "default", "prompting": "standard", "seed": "0"},
                           django_capture_on_commit_callbacks)
    job, run = import_job(), EvaluationRun.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse("job-detail", kwargs={"pk": job.pk})
    assert job.status == Job.Status.SUCCEEDED, job.message
    assert (job.requested_by, job.params["version"], job.params["fmt"], job.params["model_id"]) == (
        researcher, version.pk, "lmms-eval", "lab/my-vlm")
    assert job.params["path"] == f"job-{job.pk}/samples_cvqa_k1.jsonl"
    run_url = reverse("results-run", kwargs={"pk": run.pk})
    assert (job.result["run"], job.result["run_url"]) == (run.pk, run_url)
    assert not stored_files(media_root)  # the stored upload is gone once imported
    assert (run.model_id, run.created_by, run.backend_options["format"]) == ("lab/my-vlm", researcher, "lmms-eval")
    assert without_meta(results.run_results(run).metrics) == without_meta(score(tmp_path, path))
    assert f"Importing samples_cvqa_k1.jsonl (lmms-eval) as lab/my-vlm on {version}." in job.log

    shown = researcher_client.get(response["Location"]).content.decode()
    assert f"The import started as job #{job.pk}" in shown
    assert f'<a class="button run-link" href="{run_url}">Open run #{run.pk}</a>' in shown
    assert f"Run #{run.pk}: Imported 7 predictions from samples_cvqa_k1.jsonl" in shown
    assert "left out: answers to 1 request the version does not have under these options (e.g. doc_id 99)" in shown
    listed = researcher_client.get(reverse("results-version", kwargs={"pk": version.pk})).content.decode()
    imports = listed[listed.index('id="import-jobs"'):]
    imports = imports[:imports.index("</ul>")]
    assert f'data-job-row="{job.pk}"' in imports and "succeeded" in imports
    assert f'<a class="run-link" href="{run_url}">Open run #{run.pk}</a>' in imports


def test_the_page_imports_with_the_options_and_format_given(tmp_path, version, researcher_client, media_root,
                                                            django_capture_on_commit_callbacks):
    path = tmp_path / "originals.csv"
    path.write_text("index,prediction\n1,two\n2,3\n", encoding="utf-8")
    response = post_import(researcher_client, reverse("results-version-import", kwargs={"pk": version.pk}), {
        "file": upload(path), "fmt": "vlmevalkit", "model_id": "m", "variants": ["original"], "seed": "3",
        "prompting": "cot"}, django_capture_on_commit_callbacks)
    assert response.status_code == 302
    assert import_job().params["options"] == {"input_strategy": "default", "prompting": "cot", "seed": 3,
                                              "variants": ["original"], "option_order": "release"}
    run = EvaluationRun.objects.get()
    assert (run.variants, run.seed, run.prompting, run.total_requests) == (["original"], 3, "cot", 4)


@pytest.mark.parametrize(("posted", "message"), [
    ({"model_id": ""}, "model_id: This field is required."),
    ({"model_id": "m", "prompting": "shouting"}, "Nothing was imported: cvqa does not use prompting &#x27;shouting"),
    ({"model_id": "m", "input_strategy": "frames"}, "Nothing was imported: cvqa has no input strategy &#x27;frames"),
    ({"model_id": "m", "variants": ["nope"]}, "variants: Select a valid choice. nope is not one of the available"),
    ({"model_id": "m", "fmt": "xml"}, "fmt: Select a valid choice."),
])
def test_imports_refused_in_the_request_are_400_with_the_reason_and_start_no_job(
        tmp_path, version, researcher_client, media_root, posted, message, django_capture_on_commit_callbacks):
    path = tmp_path / "preds.tsv"
    path.write_text("index\tprediction\n0\t2\n", encoding="utf-8")
    response = post_import(researcher_client, reverse("results-version-import", kwargs={"pk": version.pk}),
                           {"file": upload(path), **posted}, django_capture_on_commit_callbacks)
    page = response.content.decode()
    assert response.status_code == 400 and message in page, page[page.find('id="action-error"') - 20:][:400]
    assert nothing_left() and no_import_left(media_root)


@pytest.mark.parametrize(("content", "message"), [
    ("index\tprediction\n0\t2\nfirst\t3\n", "preds.tsv row 3: `index` must be an integer (got 'first')."),
    ("request_id\tprediction\nz9:original\t2\n", "No row of preds.tsv names a request of cvqa:k1"),
    ("index\tprediction\n", "preds.tsv is empty: it holds no predictions."),
])
def test_a_file_refused_by_the_job_fails_it_with_the_reason_leaving_no_run_and_no_file(
        tmp_path, version, researcher_client, media_root, content, message, django_capture_on_commit_callbacks):
    path = tmp_path / "preds.tsv"
    path.write_text(content, encoding="utf-8")
    response = post_import(researcher_client, reverse("results-version-import", kwargs={"pk": version.pk}),
                           {"file": upload(path), "model_id": "m", "fmt": "vlmevalkit"},
                           django_capture_on_commit_callbacks)
    job = import_job()
    assert response.status_code == 302 and response["Location"] == reverse("job-detail", kwargs={"pk": job.pk})
    assert job.status == Job.Status.FAILED and job.message.startswith(message), job.message
    assert job.result == {}
    assert nothing_left() and not stored_files(media_root)
    shown = researcher_client.get(response["Location"]).content.decode()
    assert "run-link" not in shown and 'class="badge failed"' in shown


def test_a_file_too_large_an_unfrozen_or_unknown_version_and_other_roles_are_refused(
        tmp_path, version, draft_version, answers, researcher_client, annotator_client, curator_client, settings,
        media_root, django_capture_on_commit_callbacks):
    path = write_platform(tmp_path, answers)
    posted = {"model_id": "m"}
    url = reverse("results-version-import", kwargs={"pk": version.pk})

    settings.MEDIA_MAX_UPLOAD_MB = 1
    big = tmp_path / "big.jsonl"
    big.write_text(path.read_text() + "\n" * (1024 * 1024 + 10), encoding="utf-8")
    response = post_import(researcher_client, url, {"file": upload(big), **posted}, django_capture_on_commit_callbacks)
    # refused as it is read, at the first byte past the limit (config.uploads)
    assert response.status_code == 413
    assert "&#x27;big.jsonl&#x27; is larger than the 1 MB the platform accepts." in response.content.decode()

    response = post_import(researcher_client, reverse("results-version-import", kwargs={"pk": draft_version.pk}),
                           {"file": upload(path), **posted}, django_capture_on_commit_callbacks)
    assert response.status_code == 400 and "Version cvqa:draft-1 is not frozen" in response.content.decode()
    response = researcher_client.post(reverse("results-version-import", kwargs={"pk": 987654}),
                                      {"file": upload(path), **posted})
    assert response.status_code == 404
    for client in (annotator_client, curator_client):
        assert client.post(url, {"file": upload(path), **posted}).status_code == 403
        assert client.get(reverse("results-version-requests", kwargs={"pk": version.pk}), {"fmt": "jsonl"}
                          ).status_code == 403
    assert nothing_left() and no_import_left(media_root)


def test_the_import_job_is_its_owners_and_has_no_download(tmp_path, version, answers, researcher_client,
                                                         annotator_client, media_root, annotator,
                                                         django_capture_on_commit_callbacks):
    post_import(researcher_client, reverse("results-version-import", kwargs={"pk": version.pk}),
                {"file": upload(write_platform(tmp_path, answers)), "model_id": "m"},
                django_capture_on_commit_callbacks)
    job = import_job()
    detail = reverse("job-detail", kwargs={"pk": job.pk})
    download = reverse("export-download", kwargs={"pk": job.pk})
    assert job.status == Job.Status.SUCCEEDED and researcher_client.get(detail).status_code == 200
    assert annotator_client.get(detail).status_code == 404  # an annotator sees only the jobs they asked for
    assert annotator_client.get(reverse("api-job-detail", kwargs={"pk": job.pk})).status_code == 404
    assert annotator_client.get(download).status_code == 403
    assert researcher_client.get(download).status_code == 404  # an import keeps no file to download
    other = Job.objects.create(kind=prediction_import_jobs.IMPORT_JOB_KIND, requested_by=annotator,
                               params={"version": version.pk})
    listed = researcher_client.get(reverse("results-version", kwargs={"pk": version.pk})).content.decode()
    assert f'data-job-row="{job.pk}"' in listed and f'data-job-row="{other.pk}"' not in listed  # only one's own


# --- The requests download ---------------------------------------------------------------------------------

@pytest.mark.parametrize(("fmt", "file_name"), [("jsonl", "cvqa-k1-requests.jsonl"),
                                                ("lmms-eval", "cvqa-k1-requests.lmms-eval.jsonl"),
                                                ("vlmevalkit", "cvqa-k1-requests.tsv")])
def test_the_requests_download_in_each_format_is_the_export(tmp_path, version, researcher_client, fmt, file_name):
    url = reverse("results-version-requests", kwargs={"pk": version.pk})
    response = researcher_client.get(url, {"fmt": fmt, "seed": "2", "variants": ["original"]})
    assert response.status_code == 200 and response.streaming
    assert response["Content-Disposition"] == f'attachment; filename="{file_name}"'
    body = b"".join(response.streaming_content).decode("utf-8")
    assert body == export(tmp_path, fmt, "cli-export", "--seed", "2", "--variants", "original")
    assert body.count("\n") == 4 + (fmt == "vlmevalkit")  # the original questions (and a header)


def test_the_requests_download_refuses_bad_options_and_unfrozen_versions(version, draft_version, researcher_client):
    url = reverse("results-version-requests", kwargs={"pk": version.pk})
    refused = researcher_client.get(url, {"fmt": "jsonl", "prompting": "shouting"})
    assert refused.status_code == 400 and "cvqa does not use prompting &#x27;shouting&#x27;" in refused.content.decode()
    refused = researcher_client.get(url, {"fmt": "jsonl", "frames": "every:other"})
    assert refused.status_code == 400 and "The requests cannot be exported" in refused.content.decode()
    refused = researcher_client.get(url, {"fmt": "xml"})
    assert refused.status_code == 400 and "fmt: Select a valid choice" in refused.content.decode()
    refused = researcher_client.get(reverse("results-version-requests", kwargs={"pk": draft_version.pk}),
                                    {"fmt": "jsonl"})
    assert refused.status_code == 400 and "is not frozen" in refused.content.decode()


# --- The API ------------------------------------------------------------------------------------------------

def test_the_api_imports_a_run_as_the_page_does(tmp_path, version, answers, researcher_api, annotator_api,
                                                media_root, django_capture_on_commit_callbacks):
    path = write_vlmevalkit(tmp_path, answers)
    url = reverse("api-run-import")
    capture = django_capture_on_commit_callbacks
    response = post_import(researcher_api, url, {"version": version.pk, "file": upload(path),
                                                 "model_id": "lab/api-vlm", "predictions_format": "vlmevalkit"},
                           capture, format="multipart")
    assert response.status_code == 202, response.content
    body = response.json()
    job = Job.objects.get(pk=body["id"])
    assert (body["kind"], body["status"]) == ("import_predictions", "queued")  # as it was when it was answered
    job.refresh_from_db()
    run = EvaluationRun.objects.get()
    assert job.status == Job.Status.SUCCEEDED and job.result["run"] == run.pk
    found = researcher_api.get(reverse("api-job-detail", kwargs={"pk": job.pk})).json()
    assert found["result"]["run_url"] == reverse("results-run", kwargs={"pk": run.pk})
    assert (run.backend, run.status, run.model_id) == ("imported", "succeeded", "lab/api-vlm")
    assert run.backend_options["file"] == path.name and run.backend_options["joined_by"] == {
        "request_id": 0, "index": 7}
    assert without_meta(results.run_results(run).metrics) == without_meta(score(tmp_path, path))

    by_label = post_import(researcher_api, url, {"benchmark": "cvqa", "version_label": "k1", "file": upload(path),
                                                 "model_id": "lab/api-vlm-2", "variants": ["original"]},
                           capture, format="multipart")
    assert by_label.status_code == 202
    assert EvaluationRun.objects.get(model_id="lab/api-vlm-2").variants == ["original"]

    bad = tmp_path / "bad.tsv"
    bad.write_text("index\tprediction\nfirst\t2\n", encoding="utf-8")
    failed = post_import(researcher_api, url, {"version": version.pk, "file": upload(bad), "model_id": "m"},
                         capture, format="multipart")
    assert failed.status_code == 202
    job = Job.objects.get(pk=failed.json()["id"])
    assert (job.status, job.message) == (Job.Status.FAILED, "bad.tsv row 2: `index` must be an integer (got 'first').")
    refused = post_import(researcher_api, url, {"version": version.pk, "file": upload(bad), "model_id": "m",
                                                "prompting": "shouting"}, capture, format="multipart")
    assert refused.status_code == 400 and "cvqa does not use prompting 'shouting'" in refused.json()["error"]
    missing = researcher_api.post(url, {"version": version.pk, "model_id": "m"}, format="multipart")
    assert missing.status_code == 400 and "file" in missing.json()
    unknown = researcher_api.post(url, {"benchmark": "cvqa", "version_label": "k9", "file": upload(path),
                                        "model_id": "m"}, format="multipart")
    assert unknown.status_code == 400 and "cvqa has no version 'k9'" in unknown.content.decode()
    assert annotator_api.post(url, {"version": version.pk, "file": upload(path), "model_id": "m"},
                              format="multipart").status_code == 403
    assert EvaluationRun.objects.count() == 2
    assert Job.objects.filter(kind=prediction_import_jobs.IMPORT_JOB_KIND).count() == 3
    assert not stored_files(media_root)
