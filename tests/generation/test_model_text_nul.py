"""Model text holding NUL characters (U+0000), which PostgreSQL keeps in no text column and no jsonb value, is
stored without them and counted (`generation.model_text`): a run's predictions (the `evaluate` command, the run's
page and API showing the sum), a judge's verdicts (the `judge` command, a `\\x00` escape in the verdict too),
generated proposals (a `\\u0000` escape in the parsed fields too), and imported predictions and proposals. On
PostgreSQL one such reply used to fail its whole chunk, judge batch or job."""

import io
import json
import random

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.urls import reverse

from evaluation import runs
from evaluation.models import EvaluationRun, Judgment, Prediction, ResponseCache
from generation import model_text
from generation.models import Proposal, ProposalSet
from tests.conftest import cvqa_payload, logged_in_api, logged_in_client
from tests.evaluation.test_judges import cvrr_run, said
from tests.generation.test_proposals import run_set, scripted_set, use_scripted_backend
from tests.openai_test_server import openai_test_server
from tests.request_files import answers_for, frozen, kit_version, platform_lines, run_command, write_platform
from tests.scripted_backend import ScriptedBackend, install

pytestmark = [pytest.mark.django_db, pytest.mark.postgres]


class NulReplies(ScriptedBackend):
    name = "nul-replies"

    @staticmethod
    def default(text: str) -> str:
        """An answer with two NUL characters."""
        return "Two\x00 cups\x00."


def holds_nul(value) -> bool:
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(holds_nul(key) or holds_nul(item) for key, item in value.items())
    return isinstance(value, list) and any(holds_nul(item) for item in value)


def no_nul_anywhere(*querysets) -> bool:
    """No text or JSON field of any row holds a NUL character (as SQLite would keep it)."""
    return not any(holds_nul(getattr(row, field.attname)) for queryset in querysets for row in queryset
                   for field in row._meta.concrete_fields)


def test_a_run_whose_model_replies_with_nul_succeeds_and_counts_them(image, monkeypatch, researcher, register_model):
    install(monkeypatch, NulReplies)
    register_model("scripted/nul", backend="nul-replies", uses=["evaluation"])
    frozen("cvqa", "n1", [(f"q{n}", cvqa_payload(str(n)), {"image": image}) for n in range(3)])
    out, _ = run_command("evaluate", "--benchmark", "cvqa", "--version", "n1", "--model", "scripted/nul",
                         "--backend", "nul-replies", "--batch-size", "4")
    run = EvaluationRun.objects.get()
    assert run.status == EvaluationRun.Status.SUCCEEDED, run.message
    predictions = list(Prediction.objects.filter(run=run))
    assert len(predictions) == run.total_predictions == 6
    assert {p.raw_output for p in predictions} == {"Two cups."}
    assert {p.params[model_text.NUL_KEY] for p in predictions} == {2}
    assert {p.parsed_answer for p in predictions} == {2}
    assert no_nul_anywhere(Prediction.objects.filter(run=run), ResponseCache.objects.all())
    assert runs.nul_removed(run) == 12 and "12 NUL characters removed from the replies" in out
    api = logged_in_api(researcher).get(reverse("api-run-detail", kwargs={"pk": run.pk})).json()
    assert api["nul_removed"] == 12
    page = logged_in_client(researcher).get(reverse("run-detail", kwargs={"pk": run.pk})).content.decode()
    assert 'id="run-nul-removed">12 from the model' in page


def test_a_judge_replying_with_nul_stores_its_verdicts_without_them(monkeypatch, register_model):
    register_model("judge-test", backend="openai", uses=["judge"])  # its endpoint given on the command line
    for name in ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    run = cvrr_run("nul-1", {"q1": "q1 waves", "q2": "q2 sits"})
    out = io.StringIO()
    with openai_test_server() as server:
        server.script(*[said("{'pred': 'correct', 'score': 5, 'reason': 'the same\\x00 action'}\x00")] * 2)
        call_command("judge", "--run", str(run.pk), "--kind", "cvrr", "--judge-model", "judge-test",
                     "--judge-backend", "openai", "--judge-option", f"base_url={server.base_url}",
                     "--judge-option", "max_concurrency=1", stdout=out)
    assert "Stored: 2 ok, 0 unparsed, 0 failed" in out.getvalue()
    rows = list(Judgment.objects.filter(prediction__run=run))
    assert {row.verdict["reason"] for row in rows} == {"the same action"}
    assert {row.raw_verdict for row in rows} == {"{'pred': 'correct', 'score': 5, 'reason': 'the same\\x00 action'}"}
    assert {row.params[model_text.NUL_KEY] for row in rows} == {2}  # one in the text, one in the verdict
    assert no_nul_anywhere(Judgment.objects.all())


def test_generated_proposals_are_stored_without_nul(monkeypatch, curator, django_capture_on_commit_callbacks):
    scripted = use_scripted_backend(monkeypatch)
    pset = scripted_set(scripted, {"A man waves.": '{"statement": "He waves\\u0000.", "label": true, '
                                                   '"objects": 1}\x00'}, kind="test_fact", user=curator)
    job = run_set(pset, curator, django_capture_on_commit_callbacks)
    assert job.status == "succeeded", job.message
    proposal = Proposal.objects.get(proposal_set=pset)
    assert proposal.status == Proposal.Status.OK and proposal.fields["statement"] == "He waves."
    assert proposal.params[model_text.NUL_KEY] == 2 and "\x00" not in proposal.raw_output
    assert no_nul_anywhere(Proposal.objects.all())


def test_imported_predictions_and_proposals_are_stored_without_nul(tmp_path, image, curator, curator_client):
    kit_version(image)
    answers = answers_for(platform_lines(tmp_path))
    answers["q1:original"] = "Two\x00."
    run_command("import_run", "--benchmark", "cvqa", "--version", "k1", "--predictions",
                str(write_platform(tmp_path, answers)), "--model-id", "elsewhere")
    run = EvaluationRun.objects.get()
    assert run.status == EvaluationRun.Status.SUCCEEDED
    prediction = Prediction.objects.get(run=run, request_id="q1:original")
    assert (prediction.raw_output, prediction.params) == ("Two.", {model_text.NUL_KEY: 1})
    assert runs.nul_removed(run) == 1 and no_nul_anywhere(Prediction.objects.all())

    row = {"inputs": {"item_id": 1, "dimension": "multiple_actions_in_a_single_video", "instruction": "Ask\x00.",
                      "caption": "A man rides."},
           "raw_output": json.dumps([{"question": "What\x00 does he do?", "answer": "He rides.",
                                      "question_kind": "reasoning"}]) + "\x00"}
    response = curator_client.post(reverse("proposals-import"), {
        "task": "cvrr_qa", "model_id": "m", "file": SimpleUploadedFile("rows.jsonl", json.dumps(row).encode())})
    assert response.status_code == 302, response.content.decode()[:500]
    proposal = ProposalSet.objects.get().proposals.get()
    assert proposal.fields["question"] == "What does he do?" and proposal.inputs["instruction"] == "Ask."
    assert proposal.params == {model_text.NUL_KEY: 3}
    assert no_nul_anywhere(Proposal.objects.all())


def test_the_tiny_qwen2_vl_run_succeeds_with_the_nul_it_writes_counted(image, tiny_models_dir, tiny_registry):
    """The tiny random Qwen2-VL writes NUL characters in answers to questions of random words."""
    rng = random.Random(0)
    words = ("what", "how", "many", "is", "there", "a", "the", "cup", "dog", "cat", "man", "video", "image", "frame",
             "answer", "yes", "no", "select", "option", "count")
    questions = [" ".join(rng.choice(words) for _ in range(rng.randint(3, 30))) for _ in range(16)]
    frozen("cvqa", "tiny", [(f"q{n}", cvqa_payload(str(n), query=questions[2 * n], new_query=questions[2 * n + 1]),
                             {"image": image}) for n in range(8)])
    out, _ = run_command("evaluate", "--benchmark", "cvqa", "--version", "tiny", "--model",
                         str(tiny_models_dir / "qwen2-vl"), "--max-new-tokens", "64", "--batch-size", "4",
                         "--backend-option", "device=cpu")
    run = EvaluationRun.objects.get()
    assert run.status == EvaluationRun.Status.SUCCEEDED, run.message
    counted = sum(p.params.get(model_text.NUL_KEY, 0) for p in Prediction.objects.filter(run=run))
    assert counted > 0 and runs.nul_removed(run) == counted and f"{counted} NUL characters removed" in out
    assert no_nul_anywhere(Prediction.objects.filter(run=run), ResponseCache.objects.all())
