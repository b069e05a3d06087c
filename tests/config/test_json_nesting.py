"""JSON nested too deep in a file people bring is refused with the line it is on, never a crash: one shared
reader (`config.json_text`, `IMPORT_JSON_MAX_DEPTH`) behind every JSON and JSON Lines import (predictions made
elsewhere on the API, the page and the command line, with format auto-detection; crowd study items; imported
proposals; release and C-VQA source files), and nothing is written then. The same reader refuses text the
database cannot store (a NUL character, a lone surrogate) in people's data; model output keeps it, to be
cleaned where it is stored (tests/generation/test_model_text_nul.py)."""

import html
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotation.crowd.models import Study
from annotation.models import BenchmarkVersion
from config import json_text
from evaluation import prediction_import_jobs
from evaluation.models import EvaluationRun
from generation.models import Job, ProposalSet
from tests import release_fixtures
from tests.conftest import create_study, logged_in_client
from tests.release_fixtures import assert_nothing_created, write_cvrr
from tests.request_files import kit_version, run_command

pytestmark = pytest.mark.django_db

DEPTH = 200_000
DEEP_LINE = '{"a": ' * DEPTH + "1" + "}" * DEPTH
DEEP_LIST = "[" * DEPTH + "]" * DEPTH
GOOD_LINE = json.dumps({"request_id": "q1:original", "response": "2"})
REFUSAL = "nested more than 128 levels deep"


def test_the_shared_reader_takes_the_cap_and_refuses_one_level_more_naming_where(settings):
    assert json_text.loads("[" * 128 + "]" * 128) is not None
    assert json_text.loads(json.dumps({"text": "[{" * 5000})) == {"text": "[{" * 5000}  # brackets in strings
    with pytest.raises(json_text.JsonTooDeep) as caught:
        json_text.loads('{"x": 1,\n "y": ' + "[" * 129 + "]" * 129 + "}")
    assert isinstance(caught.value, ValueError) and (caught.value.lineno, caught.value.colno) == (2, 134)
    assert str(caught.value) == f"{REFUSAL} (at line 2, column 134)"
    with pytest.raises(json_text.JsonTooDeep, match=r"\(at column 769\)"):
        json_text.loads(DEEP_LINE)
    with pytest.raises(json_text.JsonTooDeep):
        json_text.loads("[" * DEPTH)  # never closed
    settings.IMPORT_JSON_MAX_DEPTH = 4
    with pytest.raises(json_text.JsonTooDeep, match="nested more than 4 levels deep"):
        json_text.loads("[[[[[1]]]]]")


# --- Predictions made elsewhere ------------------------------------------------------------------------

@pytest.fixture
def version(image):
    return kit_version(image)


def deep_upload(name: str = "deep.jsonl", *lines: str) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, "\n".join(lines or (DEEP_LINE,)).encode())


def no_import_left(media_root) -> bool:
    stored = [path for path in (media_root / "exports").rglob("*") if path.is_file()]
    imports = Job.objects.filter(kind=prediction_import_jobs.IMPORT_JOB_KIND)
    return (not EvaluationRun.objects.exists() and not imports.exists()
            and not stored)


def test_the_api_refuses_a_deep_line_while_telling_the_format(version, researcher_api, media_root):
    response = researcher_api.post(reverse("api-run-import"), {"version": version.pk, "file": deep_upload(),
                                                               "model_id": "m"}, format="multipart")
    assert response.status_code == 400, response.content[:300]
    assert response.json()["error"] == f"deep.jsonl line 1: {REFUSAL} (at column 769)."
    assert no_import_left(media_root)


def test_the_page_refuses_a_deep_line_while_telling_the_format(version, researcher_client, media_root):
    response = researcher_client.post(reverse("results-version-import", kwargs={"pk": version.pk}),
                                      {"file": deep_upload(), "model_id": "m", "fmt": ""})
    assert response.status_code == 400
    assert f"Nothing was imported: deep.jsonl line 1: {REFUSAL}" in response.content.decode()
    assert no_import_left(media_root)


def test_the_command_names_a_deep_line_past_the_first(tmp_path, version):
    path = tmp_path / "preds.jsonl"
    path.write_text(f"{GOOD_LINE}\n{DEEP_LINE}\n")
    with pytest.raises(CommandError, match=rf"preds.jsonl line 2: {REFUSAL} \(at column 769\)"):
        run_command("import_run", "--benchmark", "cvqa", "--version", "k1", "--predictions", str(path),
                    "--model-id", "m")
    assert not EvaluationRun.objects.exists()
    path.write_text(f"{DEEP_LINE}\n")
    for args in ((), ("--predictions-format", "lmms-eval")):
        with pytest.raises(CommandError, match=rf"preds.jsonl line 1: {REFUSAL}"):
            run_command("score", "--benchmark", "cvqa", "--version", "k1", "--predictions", str(path),
                        "--out", str(tmp_path / "metrics.json"), *args)


# --- Crowd study items, imported proposals ---------------------------------------------------------------

FORM = {"fields": [{"name": "answer", "type": "single_choice", "label": "Right?", "options": ["yes", "no"]}]}


def test_study_items_name_the_deep_row_and_nothing_is_added(curator):
    study = create_study("deep", form=FORM, items=0, state=Study.State.DRAFT)
    text = '{"external_id": "a", "payload": {}}\n' + DEEP_LINE
    response = logged_in_client(curator).post(reverse("crowd-study-items", args=[study.slug]), {
        "source": "file", "file": SimpleUploadedFile("items.jsonl", text.encode())})
    assert response.status_code == 400
    assert response.context["outcome"].problems == [
        {"row": 2, "problem": f"the line is not valid JSON ({REFUSAL})"}]
    assert not study.items.exists()


def test_imported_proposals_name_the_deep_row(curator, curator_client, tmp_path):
    rows = json.dumps({"inputs": {}, "raw_output": "x"}) + "\n" + DEEP_LIST
    response = curator_client.post(reverse("proposals-import"), {
        "task": "cvrr_qa", "model_id": "m", "file": SimpleUploadedFile("rows.jsonl", rows.encode())})
    assert response.status_code == 400 and f"Row 2: not valid JSON ({REFUSAL} at column 129)" in \
        response.content.decode()
    path = tmp_path / "rows.jsonl"
    path.write_text(rows)
    with pytest.raises(CommandError, match=f"row 2: not valid JSON \\({REFUSAL}"):
        call_command("import_proposals", "--task", "cvrr_qa", "--file", str(path), "--model-id", "m",
                     "--user", curator.username)
    assert not ProposalSet.objects.exists()


# --- Release and source files ------------------------------------------------------------------------------

def test_a_release_file_nested_too_deep_is_a_problem_of_the_import(tmp_path, media, media_root):
    root = tmp_path / "cvrr"
    written = write_cvrr(root, media)
    (written["base"] / "partial_actions" / "annotations_partial_actions.json").write_text(DEEP_LIST)
    message = release_fixtures.import_problems("cvrr", root)
    assert (f"CVRR-ES/partial_actions/annotations_partial_actions.json: not valid JSON ({REFUSAL} at line 1, "
            "column 129)") in message
    assert_nothing_created(media_root)


def test_cvqa_source_files_nested_too_deep_are_refused_on_the_page_and_the_command(curator_client, tmp_path,
                                                                                   astronaut):
    response = curator_client.post(reverse("cvqa-sources"), {
        "version": "s", "format": "vqa", "questions": SimpleUploadedFile("q.json", DEEP_LINE.encode()),
        "annotations": SimpleUploadedFile("a.json", b'{"annotations": []}'),
        "images": SimpleUploadedFile("x.png", astronaut.read_bytes())})
    assert response.status_code == 400 and REFUSAL in response.content.decode()
    (tmp_path / "v2_questions.json").write_text(DEEP_LIST)
    (tmp_path / "v2_annotations.json").write_text('{"annotations": []}')
    with pytest.raises(CommandError, match=REFUSAL):
        call_command("cvqa_import_sources", str(tmp_path), "--version", "s", "--format", "vqa")
    assert not BenchmarkVersion.objects.filter(benchmark__slug="cvqa").exists()


# --- Text the database cannot store --------------------------------------------------------------------------

def test_the_shared_reader_refuses_nul_and_lone_surrogates_unless_reading_model_output():
    with pytest.raises(json_text.JsonNotStorable) as caught:
        json_text.loads('{"a": 1,\n "b": "x\\u0000y"}')
    assert str(caught.value) == "holds a NUL character (\\u0000), which cannot be stored (at line 2, column 9)"
    with pytest.raises(json_text.JsonNotStorable, match=r"a lone surrogate \(\\ud83d\), which is not valid Unicode"):
        json_text.loads('{"\\ud83d": 1}')
    assert json_text.loads('{"a": "\\\\u0000 \\ud83d\\ude00"}') == {"a": "\\u0000 \U0001f600"}  # no NUL, a pair
    assert json_text.loads('["x\\u0000y"]', keep_nul=True) == ["x\x00y"]


def test_study_items_and_source_files_holding_nul_are_refused_naming_the_row(curator, curator_client, astronaut):
    study = create_study("nul", form=FORM, items=0, state=Study.State.DRAFT)
    text = ('{"external_id": "a", "payload": {"caption": "fine"}}\n'
            '{"external_id": "b", "payload": {"caption": "a\\u0000b"}}\n'
            '{"external_id": "c", "payload": {"caption": "a\\ud800b"}}\n')
    response = logged_in_client(curator).post(reverse("crowd-study-items", args=[study.slug]), {
        "source": "file", "file": SimpleUploadedFile("items.jsonl", text.encode())})
    assert response.status_code == 400
    assert response.context["outcome"].problems == [
        {"row": 2, "problem": "the line is not valid JSON (holds a NUL character (\\u0000), which cannot be stored)"},
        {"row": 3, "problem": "the line is not valid JSON (holds a lone surrogate (\\ud800), which is not valid "
                              "Unicode)"}]
    assert not study.items.exists()
    questions = '{"questions": [{"image_id": 1, "question": "How\\u0000 many?", "question_id": 1}]}'
    response = curator_client.post(reverse("cvqa-sources"), {
        "version": "s", "format": "vqa", "questions": SimpleUploadedFile("q.json", questions.encode()),
        "annotations": SimpleUploadedFile("a.json", b'{"annotations": []}'),
        "images": SimpleUploadedFile("x.png", astronaut.read_bytes())})
    assert response.status_code == 400
    assert "questions.json: not valid JSON (holds a NUL character" in html.unescape(response.content.decode())
    assert not BenchmarkVersion.objects.filter(benchmark__slug="cvqa").exists()
