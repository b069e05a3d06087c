"""MAIA from a library video to metrics: a worker writes the video's 24 questions (2 per category), a
curator approves them; 16 workers answer them, 8 answers per question and at most 12 questions of the
video each; the pools are checked with the tiny NLI model and a curator decides those in review; a text
model behind an OpenAI-compatible server proposes the 8 true statements of each question in one prompt
and a minimal-pair false statement per true one, which a curator accepts; the pairs are checked and
the failing ones rewritten by a person; the version is frozen, evaluated by the tiny Qwen2-VL model in
the 32-frame, 1-frame and black-video settings, judged by the tiny chat model, and exported in the
release layout, which the importer reads back."""

import re

import pytest
from django.core.management import call_command

from annotation import versions
from annotation.benchmarks.maia import (
    answer_collection,
    minimal_pairs,
    pool_checks,
    question_writing,
    stages,
    statement_checks,
    statement_generation,
    statements,
)
from annotation.benchmarks.maia.payload import N_ANSWERS
from annotation.crowd import assignment, review, submissions
from annotation.curation_models import CurationRecord
from annotation.models import BenchmarkItem
from config.roles import ANNOTATOR
from evaluation import demo, judges, results, runs
from evaluation.models import EvaluationRun
from generation import proposals
from tests.conftest import ingest_path, make_user
from tests.openai_test_server import openai_test_server
from tests.release_fixtures import run_import

pytestmark = pytest.mark.django_db

QUESTIONS = 24
WORKERS = 16  # 24 questions × 8 answers, at most 12 questions of the video per worker
FRAME_SETTINGS = ("uniform:32@56", "first@56", "black:32@56")
ANSWER_WORDS = ("sul prato", "vicino all'albero", "davanti alla tana", "in mezzo ai fiori", "sotto il sole",
                "accanto al sasso", "lungo il sentiero", "dietro il cespuglio")


def statement_model(prompt: str) -> str:
    """The text model behind the test server: 8 numbered true statements from a prompt's 8 answers; a
    false statement that changes the place of a true one."""
    if "Risposte:" in prompt:
        block = prompt.split("Risposte:\n", 1)[1].split("\n\n", 1)[0]
        answers = [re.sub(r"^\d+\. ", "", line) for line in block.splitlines()]
        return "\n".join(f"{n}. Il coniglio si trova {answer.rstrip('.')}." for n, answer in enumerate(answers, 1))
    true = next(line.removeprefix("Affermazione vera: ") for line in prompt.splitlines()
                if line.startswith("Affermazione vera: "))
    return true.replace("si trova", "non si trova")


def submit(study, worker, data):
    claim = assignment.claim_next(study, worker)
    if claim is None:
        return None
    submission, created, _ = submissions.submit(submissions.load_claim(claim.pk), worker, data)
    assert created
    return submission


def written_questions(curator, video):
    """The 24 questions of the video, written by one worker and approved: question drafts."""
    version = question_writing.curation_version(curator, label="curation-e2e")
    study = question_writing.create_question_study(curator, "Scrivi le domande", videos=[video], open_now=True,
                                                   version=version)
    writer = make_user("writer", ANNOTATOR)
    questions = {slot: f"Che cosa si vede nella scena numero {n} del video?"
                 for n, slot in enumerate(question_writing.SLOT_NAMES, 1)}
    review.approve(submit(study, writer, questions), curator)
    drafts = version.items.all()
    assert drafts.count() == QUESTIONS
    assert {item.payload["kind"] for item in drafts} == {"question_draft"}
    return version


def answered_pools(curator, version):
    """8 approved answers per question; no worker answers more than 12 questions of the video."""
    study = answer_collection.create_answer_study(curator, version, "Rispondi alle domande", open_now=True)
    assert study.items.count() == QUESTIONS
    answered = {}
    for n in range(WORKERS):
        worker = make_user(f"answerer{n}", ANNOTATOR)
        while (submission := submit(study, worker, {"answer": f"È {ANSWER_WORDS[n % 8]}."})) is not None:
            answered[worker.pk] = answered.get(worker.pk, 0) + 1
            review.approve(submission, curator)
    assert sorted(answered.values()) == [12] * WORKERS
    items = version.items.all()
    assert {item.payload["kind"] for item in items} == {"question"}
    assert all(len(item.payload["answers"]) == N_ANSWERS for item in items)
    assert set(CurationRecord.objects.filter(item__version=version).values_list("stage", flat=True)) == {
        stages.POOL_COMPLETE}


def checked_pools(curator, version, nli_model):
    """Every pool checked by the tiny NLI model; a curator overrides the contradictions it found."""
    results_ = pool_checks.run_checks(version, curator, pool_checks.load_scorer(nli_model), model_id=nli_model)
    assert len(results_) == QUESTIONS
    in_review = pool_checks.review_queue(version)
    overall = pool_checks.report(version)["overall"]
    assert (overall["checked"], overall["agree"]) == (QUESTIONS, QUESTIONS - len(in_review))
    assert overall["share"] == pytest.approx((QUESTIONS - len(in_review)) / QUESTIONS)
    for item, _check in in_review:
        pool_checks.review(item.pk, curator, pool_checks.REVIEW_OVERRIDE, note="The answers agree.")
    assert all(statements.pool_passed(item) for item in version.items.all())


def accept_all(pset, curator):
    for proposal in pset.proposals.order_by("pk"):
        assert proposal.status == "ok", proposal.error
        proposals.decide(proposal, curator, "accept")


def with_statements(curator, version, server, capture):
    """True statements (one prompt per question), then a false statement per true one, all accepted."""
    model = {"backend": "openai", "model_id": "gpt-test", "backend_options": {"base_url": server.base_url,
                                                                             "max_retries": 0}}
    with capture(execute=True):
        trues = statement_generation.start_true_statements(version, user=curator, **model)
    assert trues.proposals.count() == QUESTIONS
    accept_all(trues, curator)
    with capture(execute=True):
        falses = statement_generation.start_false_statements(version, user=curator, **model)
    assert falses.proposals.count() == QUESTIONS * N_ANSWERS
    accept_all(falses, curator)
    for item in version.items.all():
        assert len(item.payload["true_statements"]) == len(item.payload["false_statements"]) == N_ANSWERS
        assert item.payload["false_statements"][0] == item.payload["true_statements"][0].replace(
            "si trova", "non si trova")


def ready_statements(curator, version, nli_model):
    """The pairs checked by the tiny NLI model; a person rewrites every pair that fails."""
    counts = statement_checks.run_checks(version, curator, pool_checks.load_scorer(nli_model))
    assert counts["pairs"] == QUESTIONS * N_ANSWERS
    for failing in minimal_pairs.failing_pairs(version):
        for pair in failing.pairs:
            item = BenchmarkItem.objects.get(pk=failing.item.pk)
            statements.edit_false_statement(curator, item, pair.index,
                                            pair.true_statement.replace("si trova", "non si trova mai"))
    assert set(CurationRecord.objects.filter(item__version=version).values_list("stage", flat=True)) == {
        stages.READY}


def test_a_library_video_becomes_a_frozen_evaluated_exported_maia_version(
        curator, bigbuckbunny, tiny_models_dir, tiny_registry, tmp_path, media_root,
        django_capture_on_commit_callbacks):
    video = ingest_path(bigbuckbunny, user=curator)
    nli_model = str(tiny_models_dir / "nli")
    version = written_questions(curator, video)
    answered_pools(curator, version)
    checked_pools(curator, version, nli_model)
    with openai_test_server() as server:
        server.responder = statement_model
        with_statements(curator, version, server, django_capture_on_commit_callbacks)
    ready_statements(curator, version, nli_model)

    frozen = versions.freeze(version)
    assert frozen.frozen and frozen.item_count == QUESTIONS
    for frames in FRAME_SETTINGS:
        run = runs.create_run(frozen, model_id=str(tiny_models_dir / "qwen2-vl"),
                              **{**demo.RUN_OPTIONS, "frame_policy": frames})
        run = runs.start_run(run, workers="local")
        assert run.status == EvaluationRun.Status.SUCCEEDED, run.error
        assert run.predictions.count() == QUESTIONS * (N_ANSWERS + 1)
        judges.judge_run(run, "maia", judges.judge_spec(str(tiny_models_dir / "causal-lm")), decoding=judges.CHOICES)
        metrics = {cell.path: cell for cell in results.flat_metrics(results.run_results(run).metrics)}
        for path in ("vsv.independent_accuracy", "vsv.pool_accuracy", "oevqa.judge_accuracy", "aggregate_accuracy"):
            assert metrics[path].computed, (frames, path, metrics[path].reason)

    out = tmp_path / "release"
    call_command("export_benchmark", "maia", "--version", frozen.label, str(out))
    assert (out / "dataset" / "data.json").exists()
    again = run_import("maia", out, "reimported")
    fields = ("question", "answers", "true_statements", "false_statements")
    assert sorted(tuple(map(str, (i.payload[f] for f in fields))) for i in again.items.all()) == sorted(
        tuple(map(str, (i.payload[f] for f in fields))) for i in frozen.items.all())
    assert {link.video.checksum for i in again.items.all() for link in i.media.all()} == {video.checksum}
