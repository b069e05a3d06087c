"""BlackSwanSuite end to end: annotated real videos → preview with fallback distractors made by tiny real
models and decided by a curator → frozen version → an evaluation run of a tiny VLM → metrics.

The models are random: nothing checks what they say, only that every step records it, that the
curator's decisions are what reaches the version, and that the metrics count what the run holds.
"""

import json

import av
import pytest
from django.core.management import call_command

from annotation.benchmarks.blackswan import variants, versions
from evaluation import runner, runs
from evaluation.models import EvaluationRun, Prediction
from generation import proposals
from generation.models import Proposal
from tests.conftest import ingest_path

pytestmark = pytest.mark.django_db

FRAMES = 100  # 4 s at 25 fps
SIZE = (160, 90)
SPLIT = {"preevent": 0.0, "event": 1.2, "postevent": 2.6}  # V_pre 1.2 s, V_main 1.4 s, V_post 1.4 s
YES, NO = "yes", "no"


def cut(source, target, start: int):
    """FRAMES frames of `source` from frame `start`, scaled to SIZE."""
    with av.open(str(source)) as reader, av.open(str(target), mode="w") as writer:
        stream = writer.add_stream("mpeg4", rate=25)
        stream.width, stream.height, stream.pix_fmt = *SIZE, "yuv420p"
        written = 0
        for index, frame in enumerate(reader.decode(video=0)):
            if index < start:
                continue
            pixels = frame.reformat(width=SIZE[0], height=SIZE[1], format="rgb24").to_ndarray()
            writer.mux(stream.encode(av.VideoFrame.from_ndarray(pixels, format="rgb24")))
            written += 1
            if written == FRAMES:
                break
        writer.mux(stream.encode(None))
    return target


@pytest.fixture(scope="module")
def clips(tmp_path_factory, bikes, bigbuckbunny):
    folder = tmp_path_factory.mktemp("blackswan-e2e")
    return {"bikes-mixed": cut(bikes, folder / "bikes-mixed.mp4", 0),
            "bunny-hard": cut(bigbuckbunny, folder / "bunny-hard.mp4", 0),
            "bikes-late": cut(bikes, folder / "bikes-late.mp4", 120)}


RECORDS = [
    {"id": "bikes-mixed", **SPLIT,
     "task1_gt": ["The cyclist overtakes the others.", "The cyclist falls off the bike.", "The group stops to rest."],
     "task2_checkboxes": [YES, NO, NO],
     "task2_gt": ["The cyclist overtakes the others.", "A second rider joins the group.",
                  "The riders turn onto a side road."],
     "task3_checkboxes": [NO, YES, NO], "task3_gt": "A second rider joins the cyclists on the sandy road."},
    {"id": "bunny-hard", **SPLIT,
     "task1_gt": ["The rabbit falls asleep.", "The rabbit eats a flower.", "A bird lands on the rabbit."],
     "task2_checkboxes": [NO, NO, NO],
     "task2_gt": ["The rabbit runs into the forest.", "The rabbit hides in its burrow.", "A squirrel throws a nut."],
     "task3_checkboxes": [NO, NO, NO], "task3_gt": "The rabbit stretches, yawns and walks out of its burrow."},
    {"id": "bikes-late", **SPLIT,
     "task1_gt": ["The riders keep going.", "The riders speed up.", "One rider stops."],
     "task2_checkboxes": [YES, YES, NO],
     "task2_gt": ["The riders keep going.", "The riders speed up.", "A car passes the riders."],
     "task3_checkboxes": [YES, NO, NO], "task3_gt": "The riders keep going along the road past the trees."},
]
# Under the paper's MCQ rules (the fallback path is what this test follows):
# Detective MCQs: one per Detective hypothesis, 3 per video; Reporter MCQs: the caption plus each Detective
# hypothesis validated in step 3 (2, 1, 2). "bikes-late" has one invalidated forecast, so its Detective MCQs
# lack one distractor: a caption of V_pre rewritten in the style of its hypotheses fills the gap.
DETECTIVE_MCQ, REPORTER_MCQ = 9, 5
# Y/N: every forecast (Detective); the hypotheses written in step 2 (Reporter): 2 + 3 + 1
DETECTIVE_YN, REPORTER_YN = 9, 6
HARD = {"detective_mcq": 3, "reporter_mcq": 1}  # "bunny-hard": step 3 invalidated every Detective hypothesis


def test_annotated_videos_to_a_scored_run(clips, tiny_models_dir, curator, tmp_path,
                                          django_capture_on_commit_callbacks):
    library = {name: ingest_path(path, user=curator) for name, path in clips.items()}
    pairs = [(record, library[record["id"]]) for record in RECORDS]
    models = {"caption": {"backend": "transformers", "model_id": str(tiny_models_dir / "qwen2-vl"),
                          "params": {"max_new_tokens": 8}, "backend_options": {"device": "cpu"}},
              "rewrite": {"backend": "causal_lm", "model_id": str(tiny_models_dir / "causal-lm"),
                          "params": {"max_new_tokens": 12}, "backend_options": {"device": "cpu"}}}

    def preview():
        with django_capture_on_commit_callbacks(execute=True):  # the proposal jobs run when the build commits
            job = versions.start_build(pairs, seed=11, fallback_models=models, frames="uniform:2@64", user=curator,
                                       here=True, mcq_rules="paper")
        assert job.status == "succeeded", job.message
        return job

    # 1. the preview asks the VLM for a caption of V_pre of the one video that lacks distractors
    first = preview()
    assert first.result["counts"]["pending"] == {"detective_mcq": 3, "reporter_mcq": 0}
    assert first.result["requested"]["captions"] == ["bikes-late"] and first.result["requested"]["rewrites"] == []
    (caption,) = Proposal.objects.filter(task_kind=variants.PRE_CAPTION_KIND)
    assert caption.inputs["media"]["segment"] == [0.0, 1.2] and caption.model_id.endswith("qwen2-vl")
    assert caption.status != "pending" and caption.prompt[-1]["content"][0]["type"] == "video"
    proposals.decide(caption, curator, "correct", fields={"caption": "Three cyclists ride along a sandy road."})

    # 2. with the curator's caption, the preview asks the LM for the rewrite
    second = preview()
    assert second.result["requested"]["rewrites"] == ["bikes-late"]
    assert second.result["counts"]["pending"]["detective_mcq"] == 3
    rewrites = list(Proposal.objects.filter(task_kind=variants.REWRITE_KIND).order_by("pk"))
    assert rewrites and all(p.inputs["caption"] == "Three cyclists ride along a sandy road." for p in rewrites)
    assert all(p.model_id.endswith("causal-lm") and p.raw_output == rewrites[0].raw_output for p in rewrites)
    proposals.decide(rewrites[0], curator, "correct", fields={"distractor": "Three cyclists ride along the road."})
    for extra in rewrites[1:]:
        proposals.decide(extra, curator, "reject", reason="one is enough")

    # 3. nothing pending: freeze
    third = preview()
    counts = third.result["counts"]
    assert counts["pending"] == {"detective_mcq": 0, "reporter_mcq": 0} and counts["problems"] == 0
    assert counts["variants"] == {"forecaster_gen": 3, "detective_gen": 3, "reporter_gen": 3,
                                  "detective_mcq": DETECTIVE_MCQ, "reporter_mcq": REPORTER_MCQ,
                                  "detective_yn": DETECTIVE_YN, "reporter_yn": REPORTER_YN}
    assert counts["hard"] == {"videos": 1, **HARD}
    version = versions.freeze_variants(third, "e2e", curator)
    late = [i.payload for i in version.items.filter(payload__kind="mcq", payload__id="bikes-late",
                                                    payload__mcq_task=1)]
    assert len(late) == 3 and all("Three cyclists ride along the road." in p["mcq_options"] for p in late)

    # 4. a tiny VLM answers every request of the version
    run = runs.create_run(version, model_id=str(tiny_models_dir / "qwen2-vl"), frame_policy="uniform:2@64",
                          generation_params={"max_new_tokens": 4}, backend_options={"device": "cpu"})
    assert run.total_requests == 3 * 3 + DETECTIVE_MCQ + REPORTER_MCQ + DETECTIVE_YN + REPORTER_YN
    assert run.total_predictions == 3 * (3 + 3 + 1) + DETECTIVE_MCQ + REPORTER_MCQ + DETECTIVE_YN + REPORTER_YN
    run = runs.start_run(run, workers="local")
    assert run.status == EvaluationRun.Status.SUCCEEDED, run.message
    stored = list(Prediction.objects.filter(run=run))
    assert len(stored) == run.total_predictions and not any(p.error for p in stored)

    # 5. the scorer's metrics
    out = tmp_path / "metrics.json"
    call_command("score", "--run", str(run.pk), "--out", str(out))
    metrics = json.loads(out.read_text())
    gold = {p.request.request_id: p.request for p in runner.plan(run)}

    def expected(variant, hard=None):
        found = [p for p in stored if p.variant == variant and p.sample_index == 0
                 and (hard is None or gold[p.request_id].extra["hard"] is hard)]
        right = sum(p.parse_status == "ok" and str(p.parsed_answer).lower() == str(gold[p.request_id].gold).lower()
                    for p in found)
        return len(found), right / len(found), sum(p.parse_status != "ok" for p in found) / len(found)

    for variant, n in (("detective_mcq", DETECTIVE_MCQ), ("reporter_mcq", REPORTER_MCQ), ("detective_yn", DETECTIVE_YN),
                       ("reporter_yn", REPORTER_YN)):
        group = metrics[variant]
        assert (group["n"], group["accuracy"], group["unparsed_rate"]) == (n, *expected(variant)[1:])
    for variant, hard_n in HARD.items():
        group = metrics[variant]
        n = DETECTIVE_MCQ if variant == "detective_mcq" else REPORTER_MCQ
        assert (group["hard"]["n"], group["easy"]["n"]) == (hard_n, n - hard_n)
        assert group["hard"]["accuracy"] == expected(variant, True)[1]
        assert group["easy"]["accuracy"] == expected(variant, False)[1]
        assert group["hard_minus_easy"] == group["hard"]["accuracy"] - group["easy"]["accuracy"]
    for variant in ("forecaster_gen", "detective_gen", "reporter_gen"):
        assert metrics[variant]["n"] == 3
        assert metrics[variant]["clip_score"]["computed"] is False
        assert metrics[variant]["llm_match"]["computed"] is False
    assert metrics["meta"]["version"] == "e2e" and metrics["meta"]["checksum"] == version.checksum
