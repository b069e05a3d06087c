"""The one check of request options (`evaluation.request_options`): every way in (the run form, the requests
download and the import form of the results page; the runs and import API; `manage.py evaluate`,
`export_requests`, `score --predictions` and `import_run`) refuses the same bad option with the same message, the
benchmark's own, and starts nothing."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError
from django.urls import reverse
from django.utils.html import escape

from evaluation import prediction_import_jobs, request_options, runs
from evaluation.models import EvaluationRun
from generation.models import Job
from tests.request_files import KIT_LABEL, kit_version, run_command

pytestmark = pytest.mark.django_db

MODEL = "org/chat-model"
BAD = [("prompting", "--prompting", "shouting"), ("input_strategy", "--input", "telepathy")]


@pytest.fixture
def version(image, register_model):
    register_model(MODEL, backend="openai")
    return kit_version(image)


@pytest.fixture
def predictions(tmp_path):
    path = tmp_path / "preds.jsonl"
    path.write_text('{"request_id": "q1:original", "response": "2"}\n', encoding="utf-8")
    return path


def refusal(version, field: str, value: str) -> str:
    """The message of the one check for the option."""
    with pytest.raises(request_options.RunConfigError) as refused:
        request_options.check(version, **{field: value})
    return str(refused.value)


def nothing_started() -> bool:
    """No run and no job that runs or imports one."""
    return not EvaluationRun.objects.exists() and not Job.objects.filter(
        kind__in=(runs.JOB_KIND, prediction_import_jobs.IMPORT_JOB_KIND)).exists()


def test_the_message_is_the_benchmark_s_own(version):
    assert refusal(version, "prompting", "shouting").startswith("cvqa does not use prompting 'shouting'; known: ")
    assert refusal(version, "input_strategy", "telepathy").startswith("cvqa has no input strategy 'telepathy'; known: ")
    with pytest.raises(request_options.RunConfigError, match="cvqa has no variant 'bogus'; known: original, "):
        request_options.check(version, variants=["bogus"])


@pytest.mark.parametrize(("field", "flag", "value"), BAD)
def test_the_pages_refuse_it_with_the_message(version, researcher_client, predictions, field, flag, value):
    message = escape(refusal(version, field, value))
    run_form = researcher_client.post(reverse("runs"), {
        "version": version.pk, "model_id": MODEL, "backend": "openai", "frames": "uniform:2@64", "batch_size": 1,
        "chunk_size": 64, "max_new_tokens": 4, "seed": 0, "prompting": "standard", "describer_backend": "transformers",
        field: value})
    download = researcher_client.get(reverse("results-version-requests", kwargs={"pk": version.pk}),
                                     {"fmt": "jsonl", field: value})
    imported = researcher_client.post(reverse("results-version-import", kwargs={"pk": version.pk}), {
        "file": SimpleUploadedFile(predictions.name, predictions.read_bytes()), "model_id": "m", field: value})
    for response in (run_form, download, imported):
        assert response.status_code == 400 and message in response.content.decode()
    assert nothing_started()


@pytest.mark.parametrize(("field", "flag", "value"), BAD)
def test_the_api_refuses_it_with_the_message(version, researcher_api, predictions, field, flag, value):
    message = refusal(version, field, value)
    run = researcher_api.post(reverse("api-run-list"), {"version": version.pk, "model_id": MODEL, "backend": "openai",
                                                        field: value}, format="json")
    imported = researcher_api.post(reverse("api-run-import"), {
        "version": version.pk, "file": SimpleUploadedFile(predictions.name, predictions.read_bytes()),
        "model_id": "m", field: value}, format="multipart")
    for response in (run, imported):
        assert response.status_code == 400 and message in response.json()["error"]
    assert nothing_started()


@pytest.mark.parametrize(("field", "flag", "value"), BAD)
def test_the_commands_refuse_it_with_the_message(version, tmp_path, predictions, field, flag, value):
    message = refusal(version, field, value)
    named = ("--benchmark", "cvqa", "--version", KIT_LABEL, flag, value)
    for command in (("evaluate", *named, "--model", MODEL, "--backend", "openai"),
                    ("export_requests", *named, "--out", str(tmp_path / "requests.jsonl")),
                    ("score", *named, "--predictions", str(predictions), "--out", str(tmp_path / "metrics.json")),
                    ("import_run", *named, "--predictions", str(predictions), "--model-id", "m")):
        with pytest.raises(CommandError) as refused:
            run_command(*command)
        assert str(refused.value) == message, command[0]
    assert nothing_started() and not (tmp_path / "requests.jsonl").exists()
