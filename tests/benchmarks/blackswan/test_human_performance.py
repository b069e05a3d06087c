"""BlackSwanSuite's human performance and ablation subsets (seeds/000 §5.2): named, reproducible subsets of
a version (`evaluation.subsets`), runs restricted to one, the expert baseline over 150-per-task subsets and
people's written Gen answers, each scored by the benchmark's own scorer and shown as Human rows."""

import io
import random

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotation.crowd import assignment, submissions
from annotation.crowd.models import Qualification, Study, Submission
from annotation.models import Benchmark, BenchmarkVersion
from config.roles import ANNOTATOR
from evaluation import human_eval, runner, runs, scoring, subsets
from evaluation.benchmarks.base import RequestOptions, derived_seed
from evaluation.benchmarks.blackswan import benchmark as blackswan
from evaluation.models import EvaluationRun, HumanAnswerJudgment, HumanBaselineMetric, Prediction, VersionSubset
from evaluation.results import human_baseline_rows, leaderboard, run_label
from evaluation.results.specs import main_metrics
from generation.backends import registry
from tests.benchmarks.blackswan.test_staged import make_split
from tests.conftest import make_user
from tests.eval_support import frozen_version, make_version, use_toy_benchmark

pytestmark = pytest.mark.django_db

VIDEOS = [f"v{n:02d}" for n in range(6)]
DISCRETE = ("detective_mcq", "reporter_mcq", "detective_yn", "reporter_yn")
GEN = ("forecaster_gen", "detective_gen", "reporter_gen")
OPTIONS = ["The rider falls off.", "The rider waves.", "The rider stops."]


def video_payload(video_id: str) -> dict:
    # the split of `make_split`: V_main starts at frame 30 (1.2 s), V_post at frame 60 (2.4 s) of 4 s
    return {"kind": "video", "id": video_id, "preevent": 0.0, "event": 1.2, "postevent": 2.4,
            "task1_gt": [f"{video_id} falls.", f"{video_id} waves.", f"{video_id} stops."],
            "task2_gt": ["", "", ""], "task2_checkboxes": ["yes", "yes", "yes"],
            "task3_gt": f"A rider on {video_id} falls.", "task3_checkboxes": ["no", "no", "no"]}


def version_items(parent) -> list:
    items = []
    for video_id in VIDEOS:
        media = {"video": parent}
        items.append((video_id, video_payload(video_id), media))
        for task in (1, 2):
            items.append((f"{video_id}-mcq-{task}", {"kind": "mcq", "id": video_id, "mcq_task": task,
                                                      "mcq_options": list(OPTIONS), "mcq_label": task - 1}, media))
            items.append((f"{video_id}-yn-{task}", {"kind": "yn", "id": video_id, "def_task": task,
                                                     "exp": f"{video_id} falls.", "def_label": "yes"}, media))
    random.Random(5).shuffle(items)  # the order items were added in changes nothing
    return items


@pytest.fixture
def split(tmp_path, curator):
    return make_split(tmp_path / "clips", curator)


@pytest.fixture
def version(split):
    return frozen_version("blackswan", "hp-1", version_items(split.video))


def all_ids(version, variant: str) -> list[str]:
    return sorted(r.request_id for _, found in scoring.item_requests(version, RequestOptions(), (variant,))
                  for r in found)


def expected_draw(ids: list[str], size: int, seed: int, group: str) -> list[str]:
    return sorted(random.Random(derived_seed(seed, f"subset:{group}")).sample(sorted(ids), size))


# --- Subsets ---------------------------------------------------------------------------------------------

def test_a_subset_is_the_same_for_the_same_seed_and_sizes_and_another_for_another_seed(version, curator):
    first = subsets.make_subset(version, "ablation-a", seed=7, per_group=3, videos=2, user=curator)
    again = subsets.make_subset(version, "ablation-b", seed=7, per_group=3, videos=2, user=curator)
    other = subsets.make_subset(version, "ablation-c", seed=8, per_group=3, videos=2, user=curator)

    assert first.request_ids == again.request_ids and first.groups == again.groups
    assert other.request_ids != first.request_ids
    assert first.variants == list(blackswan.BENCHMARK.variants)
    # per MCQ and Y/N variant: 3 of the 6, drawn with the variant's own seed over the sorted ids
    for variant in DISCRETE:
        assert first.groups[variant] == expected_draw(all_ids(version, variant), 3, 7, variant)
    assert subsets.counts(first) == {**dict.fromkeys(GEN, 2), **dict.fromkeys(DISCRETE, 3)}
    # Gen: 2 videos, all three tasks of each
    assert first.item_ids == expected_draw(VIDEOS, 2, 7, "items")
    assert first.groups["forecaster_gen"] == [f"{video_id}:forecaster_gen" for video_id in first.item_ids]
    assert first.groups["reporter_gen"] == [f"{video_id}:reporter_gen" for video_id in first.item_ids]
    assert first.request_ids == [rid for variant in first.variants for rid in first.groups[variant]]
    assert first.created_by == curator and first.per_group == 3 and first.items == 2
    assert "ablation-a" in str(first) and "18 requests" in str(first)


def test_a_group_smaller_than_the_size_is_taken_whole_and_variants_narrow_the_draw(version):
    found = subsets.make_subset(version, "mcq-only", seed=1, per_group=150, variants=["reporter_mcq", "detective_mcq"])
    assert found.variants == ["detective_mcq", "reporter_mcq"]  # the benchmark's order
    assert found.groups == {variant: all_ids(version, variant) for variant in ("detective_mcq", "reporter_mcq")}
    # without --videos the Gen variants are drawn by request like the others
    gen = subsets.make_subset(version, "gen-requests", seed=1, per_group=4, variants=["forecaster_gen"])
    assert gen.groups["forecaster_gen"] == expected_draw(all_ids(version, "forecaster_gen"), 4, 1, "forecaster_gen")
    assert gen.item_ids == []


def test_subsets_are_refused_with_a_clear_message_and_nothing_stored(version, curator):
    subsets.make_subset(version, "taken", seed=0, per_group=2)
    cases = [
        ({"name": "x", "variants": ["nope_gen"]}, 400, "has no variant nope_gen"),
        ({"name": "x", "per_group": 0}, 400, "size per group must be a whole number of at least 1"),
        ({"name": "x", "videos": 0}, 400, "number of videos must be a whole number of at least 1"),
        ({"name": "taken"}, 409, "already has a subset named 'taken'"),
        ({"name": "  "}, 400, "needs a name"),
    ]
    for fields, status, message in cases:
        name = fields.pop("name")
        with pytest.raises(subsets.SubsetError, match=message) as caught:
            subsets.make_subset(version, name, seed=0, **fields)
        assert caught.value.status == status
    draft = BenchmarkVersion.objects.create(benchmark=Benchmark.objects.get(slug="blackswan"), label="draft",
                                            created_by=curator)
    with pytest.raises(subsets.SubsetError, match="is not frozen"):
        subsets.make_subset(draft, "x", seed=0)
    assert list(VersionSubset.objects.values_list("name", flat=True)) == ["taken"]


def test_the_command_draws_a_subset_and_prints_its_counts(version, curator):
    out = io.StringIO()
    call_command("make_subset", "--benchmark", "blackswan", "--version", "hp-1", "--name", "abl", "--seed", "3",
                 "--per-group", "2", "--variants", "detective_mcq,reporter_yn,forecaster_gen", "--videos", "1",
                 "--user", curator.username, stdout=out)
    subset = VersionSubset.objects.get(name="abl")
    assert subset.seed == 3 and subset.created_by == curator
    assert out.getvalue().splitlines() == [
        f"Subset 'abl' of {version} (seed 3): 5 requests",
        "  videos (items of the open-ended variants): 1",
        "  forecaster_gen: 1", "  detective_mcq: 2", "  reporter_yn: 2"]
    with pytest.raises(CommandError, match="already has a subset named 'abl'"):
        call_command("make_subset", "--benchmark", "blackswan", "--version", "hp-1", "--name", "abl", "--seed", "3")
    with pytest.raises(CommandError, match="has no version 'nope'"):
        call_command("make_subset", "--benchmark", "blackswan", "--version", "nope", "--name", "n", "--seed", "3")


def test_the_draw_does_not_depend_on_the_order_items_were_stored_in(version, split):
    """Subset ids come from a Python sort of the ids, whatever order the database holds or returns them in."""
    reversed_items = sorted(version_items(split.video), key=lambda row: row[0], reverse=True)
    stored_backwards = frozen_version("blackswan", "hp-backwards", reversed_items)
    for seed in (0, 11):
        here = subsets.draw(version, seed=seed, per_group=2, items=2)
        there = subsets.draw(stored_backwards, seed=seed, per_group=2, items=2)
        assert here == there
        assert here["groups"]["reporter_yn"] == expected_draw(all_ids(version, "reporter_yn"), 2, seed,
                                                              "reporter_yn")


# --- Runs restricted to a subset -------------------------------------------------------------------------

def test_a_run_restricted_to_a_subset_plans_only_its_requests_and_says_so(version, curator):
    subset = subsets.make_subset(version, "abl-150", seed=2, per_group=2, videos=1)
    run = runs.create_run(version, model_id="org/chat-model", backend="openai", subset="abl-150", user=curator)
    planned = [p.request.request_id for p in runner.plan(run)]
    assert sorted(planned) == sorted(subset.request_ids)
    assert run.subset == subset and run.total_requests == len(subset.request_ids) == 11
    # Forecaster and Detective ask 3 samples, Reporter 1
    assert run.total_predictions == 3 + 3 + 1 + 8
    assert run_label(run) == f"#{run.pk} chat-model (frames, subset abl-150)"
    # the variants narrow the subset further
    narrowed = runs.create_run(version, model_id="org/chat-model", backend="openai", subset=subset,
                               variants=["reporter_yn"])
    assert [p.request.request_id for p in runner.plan(narrowed)] == subset.groups["reporter_yn"]
    full = runs.create_run(version, model_id="org/chat-model", backend="openai")
    assert full.total_requests == 6 * 3 + 24 and full.subset is None
    with pytest.raises(runs.RunConfigError, match="has no subset 'missing'; its subsets: abl-150"):
        runs.create_run(version, model_id="org/chat-model", backend="openai", subset="missing")
    other = frozen_version("blackswan", "hp-2", version_items(version.items.first().media.first().video))
    with pytest.raises(runs.RunConfigError, match="belongs to"):
        runs.create_run(other, model_id="org/chat-model", backend="openai", subset=subset)
    assert EvaluationRun.objects.count() == 3


def test_evaluate_subset_answers_only_the_subset_s_requests(db, monkeypatch, tiny_models_dir, tiny_registry, curator):
    use_toy_benchmark(monkeypatch)
    toy = make_version("sub", [(f"q{n}", {}, ["open"]) for n in range(5)])
    subset = subsets.make_subset(toy, "two", seed=4, per_group=2)
    assert subset.request_ids == expected_draw([f"q{n}:open" for n in range(5)], 2, 4, "open")
    out, err = io.StringIO(), io.StringIO()
    call_command("evaluate", "--benchmark", "cvrr", "--version", "sub", "--model", str(tiny_models_dir / "causal-lm"),
                 "--backend", "causal_lm", "--input", "text_only", "--subset", "two", "--max-new-tokens", "2",
                 stdout=out, stderr=err)
    run = EvaluationRun.objects.get()
    assert run.status == EvaluationRun.Status.SUCCEEDED, run.message
    assert run.subset == subset
    assert sorted(Prediction.objects.filter(run=run).values_list("request_id", flat=True)) == subset.request_ids
    with pytest.raises(CommandError, match="has no subset 'three'"):
        call_command("evaluate", "--benchmark", "cvrr", "--version", "sub", "--model", "tiny-causal-lm",
                     "--subset", "three")


def test_the_run_form_takes_a_subset_and_the_run_page_shows_it(version, researcher_client, monkeypatch,
                                                               register_model):
    register_model("org/chat-model", backend="openai")
    subsets.make_subset(version, "abl", seed=0, per_group=1)
    monkeypatch.setattr(runs, "start_run", lambda run, **kwargs: run)  # no worker here
    page = researcher_client.get("/runs/")
    assert b'<option value="abl">' in page.content
    response = researcher_client.post("/runs/", {"version": version.pk, "model_id": "org/chat-model",
                                                 "backend": "openai", "batch_size": 8, "chunk_size": 64, "seed": 0,
                                                 "subset": "abl"})
    run = EvaluationRun.objects.get()
    assert response.status_code == 302 and run.subset.name == "abl" and run.total_requests == 7
    detail = researcher_client.get(f"/runs/{run.pk}/")
    assert b"abl" in detail.content and b"7 requests" in detail.content
    refused = researcher_client.post("/runs/", {"version": version.pk, "model_id": "org/chat-model",
                                                "backend": "openai", "batch_size": 8, "chunk_size": 64, "seed": 0,
                                                "subset": "nope"})
    assert refused.status_code == 400 and b"has no subset" in refused.content
    assert EvaluationRun.objects.count() == 1


def test_the_runs_api_takes_a_subset_by_name_and_names_it(version, researcher_api, monkeypatch, register_model):
    register_model("org/chat-model", backend="openai")
    subsets.make_subset(version, "abl", seed=0, per_group=1)
    monkeypatch.setattr(runs, "start_run", lambda run, **kwargs: run)
    response = researcher_api.post("/api/runs/", {"version": version.pk, "model_id": "org/chat-model",
                                                  "backend": "openai", "subset": "abl"}, format="json")
    assert response.status_code == 201, response.data
    assert response.data["subset"] == "abl" and response.data["total_requests"] == 7
    refused = researcher_api.post("/api/runs/", {"version": version.pk, "model_id": "org/chat-model",
                                                 "backend": "openai", "subset": "other"}, format="json")
    assert refused.status_code == 400 and "has no subset 'other'" in refused.json()["error"]
    assert EvaluationRun.objects.count() == 1


# --- The expert baseline -----------------------------------------------------------------------------------

@pytest.fixture
def expert(db):
    return make_user("expert", ANNOTATOR)


def answer(study: Study, worker, answer_for) -> dict:
    given = {}
    while (claim := assignment.claim_next(study, worker)) is not None:
        text = answer_for(claim.item)
        submissions.submit(claim, worker, {"answer": text})
        given[claim.item.external_id] = text
    return given


def test_the_expert_baseline_asks_150_per_task_by_default_on_the_task_s_clip(version, curator, split):
    made = human_eval.create_expert_baseline(version, curator=curator, seed=1)
    study = made.study
    subset = VersionSubset.objects.get(version=version, name="human-expert-s1")
    assert subset.variants == list(DISCRETE) and subset.per_group == 150
    assert subset.groups == {variant: all_ids(version, variant) for variant in DISCRETE}  # 6 each: all of them
    assert study.annotators_per_item == 1 and made.left_out == {}
    assert study.form_schema["human_eval"]["subset"] == "human-expert-s1"
    assert study.form_schema["human_eval"]["who"] == "expert"
    items = {item.external_id: item for item in study.items.all()}
    assert sorted(items) == sorted(subset.request_ids)
    # Detective questions show the Detective clip (V_main blacked out), Reporter ones the whole clip
    assert {items[rid].video_id for rid in subset.groups["detective_mcq"] + subset.groups["detective_yn"]} == \
        {split.detective_video_id}
    assert {items[rid].video_id for rid in subset.groups["reporter_mcq"] + subset.groups["reporter_yn"]} == \
        {split.full_video_id}
    mcq = items[subset.groups["detective_mcq"][0]]
    assert [c["id"] for c in mcq.payload["choices"]] == ["A", "B", "C"]
    assert "hidden (black) frames" in mcq.payload["question"]  # the video strategy's wording
    # the same default draw again reuses the subset; a qualification gates the study
    qualification = Qualification.objects.create(name="blackswan-expert")
    again = human_eval.create_expert_baseline(version, curator=curator, seed=1, qualification=qualification)
    assert again.study.required_qualification == qualification
    assert VersionSubset.objects.filter(version=version).count() == 1


def test_the_expert_s_answers_are_scored_like_a_model_s_and_shown_as_a_human_row(version, curator, expert,
                                                                                   researcher_client):
    made = human_eval.create_expert_baseline(version, curator=curator, seed=3, per_group=4)
    subset = VersionSubset.objects.get(name="human-expert-s3")
    assert subsets.counts(subset) == dict.fromkeys(DISCRETE, 4)
    # the expert: right on the first three of each variant (in id order), wrong on the fourth
    wrong = {variant: ids[3] for variant, ids in subset.groups.items()}
    requests = {r.request_id: r for _, found in scoring.item_requests(version, RequestOptions(), DISCRETE)
                for r in found}

    def answer_for(item):
        request = requests[item.external_id]
        right = request.gold
        if item.external_id not in wrong.values():
            return right
        return next(c["id"] for c in item.payload["choices"] if c["id"] != right)

    given = answer(made.study, expert, answer_for)
    assert len(given) == 16
    found = human_eval.human_baseline_results(made.study)
    for variant in DISCRETE:
        assert found["metrics"][variant]["accuracy"] == 3 / 4
        assert found["metrics"][variant]["n"] == 4
    # exactly the scorer's figures on the same answers, as a model's predictions
    asked = [requests[rid] for rid in subset.request_ids]
    as_model = scoring.score_predictions(blackswan.BENCHMARK, asked, [
        {"request_id": rid, "sample": 0, "response": text} for rid, text in given.items()], clip=None, judge=None)
    for variant in DISCRETE:
        assert found["metrics"][variant] == as_model[variant]
    assert found["per_annotator"]["mean_accuracy"] == 12 / 16
    rows = human_baseline_rows(version, main_metrics("blackswan"))
    assert [row.label for row in rows] == ["Human (expert, subset human-expert-s3)"]
    assert rows[0].subset == "human-expert-s3" and rows[0].annotators == 1
    cells = dict(zip([spec.path for spec in main_metrics("blackswan")], rows[0].cells, strict=True))
    assert cells["detective_mcq.accuracy"].value == 3 / 4 and cells["reporter_yn.accuracy"].value == 3 / 4
    # the version's leaderboard page shows the row
    html = researcher_client.get(reverse("results-version", args=[version.pk])).content.decode()
    row = html.split('<tr class="human-row" data-human="baseline">')[1].split("</tr>")[0]
    assert "Human (expert, subset human-expert-s3)" in row and "16 of 16 requests answered" in row
    assert "75.0%" in row


# --- People's written answers ------------------------------------------------------------------------------

@pytest.fixture
def clip(tiny_models_dir):
    return registry.load_backend("clip", str(tiny_models_dir / "clip"), device="cpu")


WRITTEN = {"forecaster_gen": "The rider falls off.", "detective_gen": "The bike slipped.",
           "reporter_gen": "A rider falls off a bike."}


def test_written_answers_are_asked_on_each_task_s_own_clip_only(version, curator, split):
    made = human_eval.create_written_baseline(version, curator=curator, seed=2, videos=2)
    subset = VersionSubset.objects.get(name="human-written-s2")
    assert subset.item_ids == expected_draw(VIDEOS, 2, 2, "items") and subset.items == 2
    study = made.study
    assert study.annotators_per_item == 1
    assert study.form_schema["human_eval"]["judge_kind"] == "llm_match"
    assert study.form_schema["fields"][0]["type"] == "free_text"
    items = {item.external_id: item for item in study.items.all()}
    assert sorted(items) == sorted(subset.request_ids) and len(items) == 6
    for video_id in subset.item_ids:
        # the staged reveal holds: a Forecaster question shows V_pre alone, never what follows it
        assert items[f"{video_id}:forecaster_gen"].video_id == split.pre_video_id
        assert items[f"{video_id}:detective_gen"].video_id == split.detective_video_id
        assert items[f"{video_id}:reporter_gen"].video_id == split.full_video_id
        assert "gold" not in items[f"{video_id}:forecaster_gen"].payload  # people never see the references
    assert items[f"{subset.item_ids[0]}:forecaster_gen"].payload["question"].startswith("In one sentence")


def test_a_video_without_a_matching_split_is_left_out(curator, split):
    moved = {**video_payload("w1"), "event": 2.0}  # V_pre would end later than the split's cut
    version = frozen_version("blackswan", "hp-3", [("w1", moved, {"video": split.video}),
                                                   ("w2", video_payload("w2"), {"video": split.video})])
    made = human_eval.create_written_baseline(version, curator=curator, seed=0, videos=2)
    assert sorted(made.left_out) == ["w1:detective_gen", "w1:forecaster_gen", "w1:reporter_gen"]
    assert "no clip of just those parts" in made.left_out["w1:forecaster_gen"]
    assert sorted(made.study.items.values_list("external_id", flat=True)) == [
        "w2:detective_gen", "w2:forecaster_gen", "w2:reporter_gen"]


def judge(study: Study, scores: dict[str, list[int]]) -> None:
    """Stored LLM-Match judgments of each answer, one per reference, as `human_eval judge` writes them."""
    for answer_ in human_eval.answers_of([study]):
        for index, score in enumerate(scores[answer_.request.variant]):
            HumanAnswerJudgment.objects.create(
                submission=answer_.submission, study=study, request_id=answer_.request.request_id,
                answer=answer_.text, kind="llm_match", judge_model="judge-m", judge_backend="openai",
                reference_key=f"ref:{index}", prompt=[], verdict={"score": score, "reason": ""}, parse_status="ok")


def test_written_answers_are_scored_with_clip_score_and_llm_match_like_a_model(version, curator, expert, clip):
    made = human_eval.create_written_baseline(version, curator=curator, seed=2, videos=2)
    study = made.study
    given = answer(study, expert, lambda item: WRITTEN[item.external_id.split(":")[1]])
    scores = {"forecaster_gen": [5, 4, 3], "detective_gen": [2, 2, 2], "reporter_gen": [4]}
    judge(study, scores)
    before = human_eval.human_baseline_results(study)
    assert scoring.is_not_computed(before["metrics"]["forecaster_gen"]["clip_score"])
    # LLM-Match: per question the mean over its references, mean over questions
    assert before["metrics"]["forecaster_gen"]["llm_match"] == pytest.approx(4.0)
    assert before["metrics"]["detective_gen"]["llm_match"] == pytest.approx(2.0)
    assert before["metrics"]["reporter_gen"]["llm_match"] == pytest.approx(4.0)

    stored = human_eval.score_human_baseline(study, clip=clip, model_id="tiny-clip")
    assert stored.kind == "clip" and stored.studies == [study.slug] and "tiny-clip" in str(stored)
    found = human_eval.human_baseline_results(study)
    requests = {r.request_id: r for _, made_ in scoring.item_requests(version, RequestOptions(), GEN)
                for r in made_}
    for variant in GEN:
        asked = [requests[rid] for rid in given if rid.endswith(variant)]
        responses = {rid: [scoring.Response(given[rid])] for rid in given if rid.endswith(variant)}
        expected = blackswan.score_generative(asked, responses, clip=clip)
        assert found["metrics"][variant]["clip_score"] == pytest.approx(expected["clip_score"])
        assert found["metrics"][variant]["clip_score_all_pairs"] == pytest.approx(expected["clip_score_all_pairs"])
    assert found["model_metrics"][0]["current"] is True
    rows = human_baseline_rows(version, main_metrics("blackswan"))
    assert [row.label for row in rows] == ["Human (crowd, subset human-written-s2)"]
    cells = dict(zip([spec.path for spec in main_metrics("blackswan")], rows[0].cells, strict=True))
    assert cells["forecaster_gen.clip_score"].value == pytest.approx(found["metrics"]["forecaster_gen"]["clip_score"])
    assert cells["detective_gen.llm_match"].value == pytest.approx(2.0)

    # a reviewer's correction changes the answers: the stored CLIP score no longer shows as current
    submission = HumanAnswerJudgment.objects.filter(study=study).first().submission
    Submission.objects.filter(pk=submission.pk).update(reviewed_data={"answer": "Something else entirely."})
    stale = human_eval.human_baseline_results(study)
    assert stale["model_metrics"][0]["current"] is False
    assert scoring.is_not_computed(stale["metrics"]["forecaster_gen"]["clip_score"])
    assert HumanBaselineMetric.objects.count() == 1


def test_the_human_eval_command_makes_both_baselines_and_scores_the_written_one(version, curator, expert,
                                                                                tiny_models_dir, tiny_registry):
    out = io.StringIO()
    call_command("human_eval", "expert-baseline", "--benchmark", "blackswan", "--version", "hp-1", "--user",
                 curator.username, "--seed", "4", "--per-group", "2", stdout=out)
    assert "8 item(s), 1 people each; 0 left out" in out.getvalue()
    call_command("human_eval", "written-baseline", "--benchmark", "blackswan", "--version", "hp-1", "--user",
                 curator.username, "--seed", "4", "--videos", "1", stdout=out)
    assert "3 item(s), 1 people each; 0 left out" in out.getvalue()
    written = Study.objects.get(form_schema__human_eval__subset="human-written-s4")
    with pytest.raises(CommandError, match="No CLIP score was computed"):
        call_command("human_eval", "score", "--study", written.slug, "--clip-model", str(tiny_models_dir / "clip"))
    answer(written, expert, lambda item: WRITTEN[item.external_id.split(":")[1]])
    scored = io.StringIO()
    call_command("human_eval", "score", "--study", written.slug, "--clip-model", str(tiny_models_dir / "clip"),
                 "--device", "cpu", stdout=scored)
    assert "forecaster_gen.clip_score:" in scored.getvalue()
    with pytest.raises(CommandError, match="has no subset 'nope'"):
        call_command("human_eval", "expert-baseline", "--benchmark", "blackswan", "--version", "hp-1", "--user",
                     curator.username, "--subset", "nope")
    assert [row.label for row in human_baseline_rows(version, main_metrics("blackswan"))] == [
        "Human (expert, subset human-expert-s4)", "Human (crowd, subset human-written-s4)"]
    assert leaderboard(version).rows == []


def test_subsets_and_kept_clip_scores_are_read_only_records_in_the_admin(version, admin_client_role):
    subset = subsets.make_subset(version, "abl", seed=0, per_group=1)
    listing = admin_client_role.get("/admin/evaluation/versionsubset/")
    assert listing.status_code == 200 and b"abl" in listing.content
    assert admin_client_role.get("/admin/evaluation/versionsubset/add/").status_code == 403
    assert admin_client_role.get(f"/admin/evaluation/versionsubset/{subset.pk}/delete/").status_code == 403
    assert admin_client_role.get("/admin/evaluation/humanbaselinemetric/").status_code == 200


def test_the_results_page_draws_subsets_and_starts_the_paper_s_human_performance(version, researcher_client,
                                                                                  expert, tiny_models_dir,
                                                                                  tiny_registry,
                                                                                  django_capture_on_commit_callbacks):
    page = reverse("results-version", args=[version.pk])
    text = researcher_client.get(page).content.decode()
    assert 'id="subset-form"' in text and 'id="human-performance-form"' in text and 'id="human-clip-form"' not in text

    bad = researcher_client.post(reverse("results-version-subset", args=[version.pk]),
                                 {"name": "abl", "seed": 1, "per_group": 2, "variants": "no_such_variant"})
    assert bad.status_code == 400 and not VersionSubset.objects.exists()
    made = researcher_client.post(reverse("results-version-subset", args=[version.pk]),
                                  {"name": "abl", "seed": 1, "per_group": 2})
    assert made.status_code == 302
    subset = VersionSubset.objects.get(name="abl")
    assert subset.request_ids == subsets.make_subset(version, "abl-again", seed=1, per_group=2).request_ids
    assert 'data-subset="abl"' in researcher_client.get(page).content.decode()
    taken = researcher_client.post(reverse("results-version-subset", args=[version.pk]),
                                   {"name": "abl", "seed": 2, "per_group": 2})
    assert taken.status_code == 400 and "already has a subset" in taken.content.decode()

    unknown = researcher_client.post(reverse("results-version-human-performance", args=[version.pk]),
                                     {"who": "expert", "seed": 5, "size": 2, "qualification": "nobody-has-it", "k": 1})
    assert unknown.status_code == 400 and "no qualification" in unknown.content.decode()
    for who, size in (("expert", 2), ("crowd", 1)):
        started = researcher_client.post(reverse("results-version-human-performance", args=[version.pk]),
                                         {"who": who, "seed": 5, "size": size, "k": 1})
        assert started.status_code == 302
    written = Study.objects.get(form_schema__human_eval__subset="human-written-s5")
    assert VersionSubset.objects.filter(name__in=["human-expert-s5", "human-written-s5"]).count() == 2

    answer(written, expert, lambda item: WRITTEN[item.external_id.split(":")[1]])
    assert 'id="human-clip-form"' in researcher_client.get(page).content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        scored = researcher_client.post(reverse("results-version-human-clip", args=[version.pk]),
                                        {"model": str(tiny_models_dir / "clip")})
    assert scored.status_code == 302
    assert HumanBaselineMetric.objects.get().study == written
