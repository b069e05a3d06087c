"""CVRR-ES from a library video to metrics: the video assigned to a dimension, two captions and the one
chosen, QA pairs proposed by a text model behind an OpenAI-compatible server, filtration (keep, fix,
remove), the experts' assessment, freezing, a tiny-model run with standard and DSCP prompting judged by
the tiny chat model, and the release export read back by the importer."""

import json

import pytest
from django.core.management import call_command

from annotation import versions
from annotation.benchmarks.cvrr import (
    caption_choice,
    captions,
    expert_group,
    expert_report,
    filtration,
    qa_generation,
    qa_pool,
    stages,
    video_pool,
)
from annotation.benchmarks.cvrr.expert_study import create_expert_study
from annotation.crowd import assignment, submissions
from annotation.curation_models import CurationRecord
from config.roles import ANNOTATOR
from evaluation import demo, judges, results, runs
from evaluation.models import EvaluationRun
from tests.conftest import ingest_path, make_user
from tests.openai_test_server import Reply, openai_test_server
from tests.release_fixtures import run_import

pytestmark = pytest.mark.django_db

DIMENSION = "interpretation_of_visual_context"
CAPTIONS = ("A big white cartoon rabbit walks out of his burrow onto a green meadow, stretches his arms and "
            "smiles at the sunny morning while butterflies fly past.",
            "A fat grey rabbit crawls out of a hole under a tree, stands up on the grass, yawns and stretches, "
            "then looks around the meadow with a happy face.")
PAIRS = [
    {"question": "What does the rabbit do after leaving the burrow?", "answer": "He stretches and smiles.",
     "question_kind": "reasoning"},
    {"question": "Where does the rabbit come out from?", "answer": "From a burrow under a tree.",
     "question_kind": "reasoning"},
    {"question": "Why is the rabbit swimming in the lake?", "answer": "The rabbit is not swimming; he stands "
     "on a meadow.", "question_kind": "robustness"},
]


def completion(content: str) -> dict:
    return {"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "gpt-test",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 40, "total_tokens": 50}}


def submit(study, worker, data):
    claim = submissions.load_claim(assignment.claim_next(study, worker).pk)
    submission, created, _ = submissions.submit(claim, worker, data)
    assert created
    return submission


def captioned_video(curator, video):
    """The video in a dimension, captioned by two annotators; the curator picks the first caption."""
    item = video_pool.assign_video(curator, video, DIMENSION, "internet", "title: Big Buck Bunny")
    study = captions.create_caption_study(curator, "Caption the videos", open_now=True)
    first = submit(study, make_user("writer1", ANNOTATOR), {"caption": CAPTIONS[0]})
    submit(study, make_user("writer2", ANNOTATOR), {"caption": CAPTIONS[1]})
    item = caption_choice.choose_caption(item.pk, curator, how="picked", sources=[first.pk])
    assert CurationRecord.objects.get(item=item).stage == stages.CAPTIONED
    return item


def proposed_pairs(item, curator, capture):
    with openai_test_server() as server:
        server.script(Reply(body=completion(json.dumps(PAIRS))))
        with capture(execute=True):
            pset = qa_generation.start_qa_generation(
                [item.pk], user=curator, backend="openai", model_id="gpt-test", pairs=3,
                backend_options={"base_url": server.base_url, "max_retries": 0})
        [body] = server.bodies
    assert CAPTIONS[0] in body["messages"][-1]["content"][0]["text"]
    made = list(pset.proposals.order_by("record_index"))
    assert [(p.status, p.fields) for p in made] == [("ok", pair) for pair in PAIRS]
    return made


def filtered(made, curator, reviewer):
    """Keep the first pair, fix the second, remove the third; the curator records the answers."""
    study = filtration.create_filtration_study(made, curator=curator).study
    answers = [{"verdict": "accept"},
               {"verdict": "correct", "corrected_answer": "From a burrow under a big tree."},
               {"verdict": "reject", "reason": "unrelated"}]
    for answer in answers:
        submit(study, reviewer, answer)
    filtration.record_decisions(study, user=curator)
    kept = {record.item.payload["question"]: record for record in qa_pool.records()}
    assert sorted(kept) == sorted(pair["question"] for pair in PAIRS[:2])
    assert kept[PAIRS[1]["question"]].item.payload["answer"] == "From a burrow under a big tree."
    return qa_pool.pool_version()


def expert_checked(pool, curator):
    expert = make_user("expert1", ANNOTATOR)
    expert_group.grant(expert, curator)
    study = create_expert_study(pool, curator, seed=0, share=1, k=1).study
    while (claim := assignment.claim_next(study, expert)) is not None:
        claim = submissions.load_claim(claim.pk)
        submissions.submit(claim, expert, {"represents_dimension": "yes", "answerable_from_video": "agree",
                                           "answer_correct": "yes", "notes": ""})
    report = expert_report.report(study)
    assert report["overall"]["answer_correct"]["rate"] == 1.0
    summary = expert_report.finalise(study, curator)
    assert len(summary["checked"]) == 2 and summary["returned"] == []
    assert set(CurationRecord.objects.filter(item__version=pool).values_list("stage", flat=True)) == {
        stages.EXPERT_CHECKED}


def test_a_library_video_becomes_a_frozen_judged_exported_cvrr_version(
        curator, annotator, bigbuckbunny, tiny_models_dir, tmp_path, media_root, django_capture_on_commit_callbacks):
    video = ingest_path(bigbuckbunny, user=curator)
    item = captioned_video(curator, video)
    made = proposed_pairs(item, curator, django_capture_on_commit_callbacks)
    pool = filtered(made, curator, annotator)
    expert_checked(pool, curator)

    frozen = versions.freeze(pool)
    assert frozen.frozen and frozen.item_count == 2
    for prompting in ("standard", "dscp"):
        run = runs.create_run(frozen, model_id=str(tiny_models_dir / "qwen2-vl"), prompting=prompting,
                              **demo.RUN_OPTIONS)
        run = runs.start_run(run, workers="local")
        assert run.status == EvaluationRun.Status.SUCCEEDED and run.predictions.count() == 2
        judges.judge_run(run, "cvrr", judges.judge_spec(str(tiny_models_dir / "causal-lm")),
                         decoding=judges.CHOICES)
        metrics = {cell.path: cell for cell in results.flat_metrics(results.run_results(run).metrics)}
        for path in ("accuracy", "mean_score", "pooled_accuracy"):
            assert metrics[path].computed, (prompting, path, metrics[path].reason)

    out = tmp_path / "release"
    call_command("export_benchmark", "cvrr", "--version", frozen.label, str(out))
    assert (out / "CVRR-ES" / DIMENSION / f"annotations_{DIMENSION}.json").exists()
    again = run_import("cvrr", out, "reimported")
    originals = sorted((i.payload["question"], i.payload["answer"], i.payload.get("caption"))
                       for i in frozen.items.all())
    back = sorted((i.payload["question"], i.payload["answer"], i.payload.get("caption")) for i in again.items.all())
    assert back == originals
    assert {link.video.checksum for i in again.items.all() for link in i.media.all()} == {video.checksum}
