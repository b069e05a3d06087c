"""CVRR-ES expert assessment of QA pairs (annotation.benchmarks.cvrr.expert_*): a sample that covers every
video, drawn with a seed; the qualification gate; the server's check of the three answers; the report's
rates per dimension and overall and the experts' agreement against figures worked out by hand; finalising,
which sends the pairs whose answer fails back to filtration; the pages, their permissions and refusals;
the command."""

import json

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotation import versions
from annotation.benchmarks.cvrr import expert_group, expert_report, expert_sample, expert_study, stages
from annotation.benchmarks.cvrr.expert_study import create_expert_study
from annotation.crowd import assignment, review, submissions
from annotation.crowd.errors import CrowdError, InvalidSubmission, NotEligible
from annotation.crowd.models import Qualification, Study, StudyItem, Submission, WorkerQualification
from annotation.curation_models import CategoryDefinition, CurationRecord
from annotation.models import Benchmark, BenchmarkVersion
from config.models import StateChange
from config.roles import ANNOTATOR, RESEARCHER
from generation.models import Proposal, ProposalSet
from tests.conftest import logged_in_api, logged_in_client, make_user

pytestmark = pytest.mark.django_db

# dimension -> {video id: number of pairs}: 16 pairs over 6 videos
POOL = {
    "fine_grained_action_understanding": {"a1": 4, "a2": 4},
    "partial_actions": {"b1": 2},
    "time_order_understanding": {"c1": 2, "c2": 2, "c3": 2},
}


def benchmark():
    return Benchmark.objects.get(slug="cvrr")


def qa(dimension: str, video_id: str, number: int, **extra) -> dict:
    return {"kind": "qa", "dimension": dimension, "video_id": video_id,
            "question": f"What happens in {video_id}, question {number}?",
            "answer": f"Answer {number} about {video_id}.", **extra}


def add_pair(version, external_id: str, payload: dict, video, stage=stages.FILTERED):
    """A pair kept in filtration, as the filtration study leaves it: a pool item made from an accepted
    `cvrr_qa` proposal."""
    item = versions.add_item(version, external_id, payload, {"video": video} if video else None)
    proposal_set, _ = ProposalSet.objects.get_or_create(
        name=f"QA pairs of {version.label}", task_kind="cvrr_qa", backend="openai", model_id="gpt-test")
    proposal = Proposal.objects.create(
        proposal_set=proposal_set, task_kind="cvrr_qa", source_key=f"cvrr:{external_id}", status="ok",
        inputs={"dimension": payload["dimension"], "video": payload["video_id"], "caption": "A caption."},
        fields={"question": payload["question"], "answer": payload["answer"], "question_kind": "reasoning"})
    CurationRecord.objects.create(item=item, stage=stage, working={"source": {"proposal": proposal.pk}})
    return item


def make_pool(curator, video, layout=POOL, label="qa-pool"):
    version = BenchmarkVersion.objects.create(benchmark=benchmark(), label=label, created_by=curator)
    for dimension, videos in layout.items():
        index = 0
        for video_id, count in videos.items():
            for _ in range(count):
                add_pair(version, f"{dimension}:{index}", qa(dimension, video_id, index), video)
                index += 1
    return version


@pytest.fixture
def pool(curator, video):
    return make_pool(curator, video)


def videos_of(items) -> set:
    return {(item.payload["dimension"], item.payload["video_id"]) for item in items}


def per_dimension(items) -> dict:
    found = {}
    for item in items:
        found[item.payload["dimension"]] = found.get(item.payload["dimension"], 0) + 1
    return found


# --- Sampling ----------------------------------------------------------------------------------

def test_the_sample_covers_every_video_then_fills_up_by_dimension(pool, curator, video):
    made = create_expert_study(pool, curator, seed=7, size=10)
    items = made.items
    assert len(items) == 10 and videos_of(items) == {(d, v) for d, vs in POOL.items() for v in vs}
    # one pair per video (A 2, B 1, C 3), then 4 places to the dimension furthest below its share of 10:
    # A 5, B 1.25, C 3.75 -> A, A, A, C
    assert per_dimension(items) == {"fine_grained_action_understanding": 5, "partial_actions": 1,
                                    "time_order_understanding": 4}
    for item in items:
        assert item.benchmark_item.version == pool and item.video == video
        assert item.external_id == item.benchmark_item.external_id and item.open_slots == 1
    first = items[0]
    assert first.payload == {
        "dimension": first.benchmark_item.payload["dimension"], "dimension_name": "Fine grained action understanding",
        "dimension_description": "", "video_id": "a1", "question": first.benchmark_item.payload["question"],
        "answer": first.benchmark_item.payload["answer"], "question_kind": ""}
    # ordered by video, then by pair
    keys = [(i.payload["dimension"], i.payload["video_id"], i.external_id) for i in items]
    assert keys == sorted(keys)

    study = made.study
    assert (study.step_kind, study.state, study.annotators_per_item) == (expert_sample.STUDY_KIND, "open", 1)
    assert study.form_schema == expert_study.FORM and study.required_qualification.name == "cvrr-expert"
    assert (study.expert_share, study.expert_first, study.gold_share) == (0.0, 0, 0.0)
    sample = expert_study.recorded_sample(study)
    assert sample["sampled"] == [item.external_id for item in items]
    assert (sample["seed"], sample["size"], sample["population"], sample["videos"], sample["experts_per_pair"]) == (
        7, 10, 16, 6, 1)
    assert sample["dimensions"]["partial_actions"] == {"population": 2, "sampled": 1}


def test_the_same_seed_draws_the_same_pairs_and_every_seed_covers_every_video(pool, curator):
    first = [item.external_id for item in create_expert_study(pool, curator, seed=3, size=8).items]
    again = [item.external_id for item in create_expert_study(pool, curator, seed=3, size=8).items]
    assert first == again
    draws = set()
    for seed in range(12):
        items = create_expert_study(pool, curator, seed=seed, size=6).items
        assert len(videos_of(items)) == 6  # the smallest sample: exactly one pair of every video
        draws.add(tuple(item.external_id for item in items))
    assert len(draws) > 1


def test_a_share_of_the_pool_is_rounded_half_up(pool, curator):
    assert len(create_expert_study(pool, curator, seed=1, share=0.5).items) == 8
    assert len(create_expert_study(pool, curator, seed=1, share=0.40625).items) == 7  # 6.5 -> 7
    assert len(create_expert_study(pool, curator, seed=1, share=1).items) == 16


def test_only_pairs_kept_in_filtration_with_a_video_are_sampled(pool, curator, video):
    add_pair(pool, "partial_actions:9", qa("partial_actions", "b9", 9), None)  # no video to show
    add_pair(pool, "partial_actions:8", qa("partial_actions", "b8", 8), video, stage=stages.RETURNED)
    found = expert_sample.population(pool)
    assert len(found.pairs) == 16 and found.excluded == {"partial_actions:9": "no library video to show the experts"}
    items = create_expert_study(pool, curator, seed=1, share=1).items
    assert "partial_actions:8" not in {item.external_id for item in items} and len(items) == 16


def test_the_dimension_shown_comes_from_its_definition(pool, curator):
    CategoryDefinition.objects.create(benchmark=benchmark(), key="partial_actions", name="Partial actions",
                                      description="Actions begun and not finished.")
    items = create_expert_study(pool, curator, seed=1, share=1).items
    partial = next(item for item in items if item.payload["dimension"] == "partial_actions")
    assert (partial.payload["dimension_name"], partial.payload["dimension_description"]) == (
        "Partial actions", "Actions begun and not finished.")


def test_bad_requests_create_nothing(pool, curator, researcher, video):
    frozen = BenchmarkVersion.objects.create(benchmark=benchmark(), label="old", frozen=True, checksum="x")
    other = BenchmarkVersion.objects.create(benchmark=Benchmark.objects.get(slug="cvqa"), label="c1")
    cases = [
        (lambda: create_expert_study(pool, curator, seed=1, size=5), 400, "cannot cover the 6 videos"),
        (lambda: create_expert_study(pool, curator, seed=1, size=17), 400, "larger than the 16 pairs"),
        (lambda: create_expert_study(pool, curator, seed=1, share=0.2), 400, "fewer than the 6 videos"),
        (lambda: create_expert_study(pool, curator, seed=1, share=1.5), 400, "above 0 and at most 1"),
        (lambda: create_expert_study(pool, curator, seed=1, size=8, share=0.5), 400, "not both"),
        (lambda: create_expert_study(pool, curator, seed=1), 400, "not both"),
        (lambda: create_expert_study(pool, curator, seed="x", size=8), 400, "seed must be a whole number"),
        (lambda: create_expert_study(pool, curator, seed=1, size=8, k=0), 400, "experts per pair (k)"),
        (lambda: create_expert_study(frozen, curator, seed=1, size=8), 409, "not an unfrozen CVRR-ES QA pool"),
        (lambda: create_expert_study(other, curator, seed=1, size=8), 400, "not an unfrozen CVRR-ES QA pool"),
        (lambda: create_expert_study(pool, researcher, seed=1, size=8), 403, "Only curators and admins"),
    ]
    for call, status, words in cases:
        with pytest.raises(CrowdError) as caught:
            call()
        assert caught.value.status == status and words in caught.value.message, caught.value.message
    assert Study.objects.count() == 0 and StudyItem.objects.count() == 0


# --- The qualification gate --------------------------------------------------------------------

def test_only_qualified_experts_may_claim_and_creating_the_study_grants_nothing(pool, curator):
    study = create_expert_study(pool, curator, seed=1, size=6).study
    worker = make_user("worker", ANNOTATOR)
    assert Qualification.objects.filter(name="cvrr-expert").exists()
    assert not WorkerQualification.objects.exists()
    with pytest.raises(NotEligible, match="needs the qualification 'cvrr-expert'"):
        assignment.claim_next(study, worker)
    page = logged_in_client(worker).get(reverse("crowd-work", args=[study.slug]))
    assert page.status_code == 403 and "needs the qualification" in page.content.decode()

    assert expert_group.grant(worker, curator) is True and expert_group.grant(worker, curator) is False
    assert [user.username for user in expert_group.members()] == ["worker"]
    assert assignment.claim_next(study, worker) is not None
    assert expert_group.revoke(worker, curator) is True
    with pytest.raises(CrowdError) as caught:
        expert_group.grant(worker, worker)
    assert caught.value.status == 403


def test_a_qualified_expert_sees_the_video_the_dimension_the_question_and_the_answer(pool, curator, video):
    CategoryDefinition.objects.create(benchmark=benchmark(), key="fine_grained_action_understanding",
                                      name="Fine-grained action understanding",
                                      description="Telling apart actions that look alike.")
    study = create_expert_study(pool, curator, seed=1, size=6).study
    expert = make_user("expert", ANNOTATOR)
    expert_group.grant(expert, curator)
    page = logged_in_client(expert).post(reverse("crowd-work", args=[study.slug]), follow=True)
    html = page.content.decode()
    assert page.status_code == 200
    assert f'src="{reverse("media-video-file", kwargs={"pk": video.pk})}"' in html
    claim = assignment.claim_next(study, expert)
    texts = ["Fine-grained action understanding", "Telling apart actions that look alike.",
             claim.item.payload["question"], claim.item.payload["answer"]]
    positions = [html.index(text) for text in texts]
    assert positions == sorted(positions)  # dimension, its description, question, answer
    for label in ("correctly represent the evaluation dimension", "given only the video content",
                  "Is the ground-truth answer correct?", "Agree", "Disagree"):
        assert label in html


# --- The answers -------------------------------------------------------------------------------

GOOD = {"represents_dimension": "yes", "answerable_from_video": "agree", "answer_correct": "yes", "notes": ""}


@pytest.mark.parametrize("change, field, phrase", [
    ({"represents_dimension": None}, "represents_dimension", "answer this question"),
    ({"answerable_from_video": "yes"}, "answerable_from_video", "answer this question"),
    ({"answer_correct": "maybe"}, "answer_correct", "answer this question"),
    ({"answer_correct": "no"}, "notes", "say what is wrong"),
    ({"answer_correct": "no", "notes": "   "}, "notes", "say what is wrong"),
    ({"notes": "x" * 2001}, "notes", "at most 2000"),
    ({"surprise": "extra"}, "surprise", "unknown field"),
])
def test_the_three_answers_are_checked_on_the_server(change, field, phrase):
    data = {key: value for key, value in {**GOOD, **change}.items() if value is not None}
    with pytest.raises(InvalidSubmission) as caught:
        expert_study.clean_answers(expert_study.FORM, {}, data)
    assert caught.value.status == 400 and phrase in caught.value.details[field]


def test_a_clean_answer_and_the_api_refusal(pool, curator):
    assert expert_study.clean_answers({}, {}, {**GOOD, "notes": "  fine  "}) == {**GOOD, "notes": "fine"}
    wrong = {**GOOD, "answer_correct": "no", "notes": "The man holds a cup."}
    assert expert_study.clean_answers({}, {}, wrong) == wrong
    with pytest.raises(InvalidSubmission):
        expert_study.clean_answers({}, {}, ["yes"])

    study = create_expert_study(pool, curator, seed=1, size=6).study
    expert = make_user("expert", ANNOTATOR)
    expert_group.grant(expert, curator)
    claim = assignment.claim_next(study, expert)
    api = logged_in_api(expert)
    url = reverse("api-claim-submit", args=[claim.pk])
    refused = api.post(url, {"data": {**GOOD, "answer_correct": "no"}, "active_seconds": 3}, format="json")
    assert refused.status_code == 400 and "notes" in json.dumps(refused.json())
    assert not Submission.objects.exists()
    accepted = api.post(url, {"data": wrong, "active_seconds": 3}, format="json")
    assert accepted.status_code == 201 and Submission.objects.get().data == wrong


# --- The report --------------------------------------------------------------------------------

A, B = "fine_grained_action_understanding", "partial_actions"
SMALL = {A: {"a1": 1, "a2": 1}, B: {"b1": 2}}
Y, N_, AG, D = "yes", "no", "agree", "disagree"
# pair -> expert -> (dimension, video only, answer, note)
ANSWERS = {
    f"{A}:0": {"e1": (Y, AG, Y, ""), "e2": (Y, AG, Y, "")},  # passes all: expert checked
    f"{A}:1": {"e1": (N_, AG, Y, ""), "e2": (Y, D, N_, "The man holds a cup, not a phone.")},  # ties: returned
    f"{B}:0": {"e1": (Y, AG, N_, "Three people, not two."), "e2": (Y, AG, N_, "There are three.")},  # returned
    f"{B}:1": {"e1": (N_, AG, Y, ""), "e2": (N_, AG, Y, "")},  # fails (1) only: kept in filtration
}


def answer(values) -> dict:
    dimension, video_only, correct, note = values
    return {"represents_dimension": dimension, "answerable_from_video": video_only, "answer_correct": correct,
            "notes": note}


@pytest.fixture
def assessed(curator, video):
    """Every pair of a small pool assessed by two experts."""
    pool = make_pool(curator, video, SMALL, label="small")
    study = create_expert_study(pool, curator, seed=2, share=1, k=2, slug="experts-small").study
    for name in ("e1", "e2"):
        expert = make_user(name, ANNOTATOR)
        expert_group.grant(expert, curator)
        while (claim := assignment.claim_next(study, expert)) is not None:
            submissions.submit(claim, expert, answer(ANSWERS[claim.item.external_id][name]))
    assert Submission.objects.filter(claim__study=study).count() == 8
    return study


def test_the_three_rates_per_dimension_and_overall(assessed):
    made = expert_report.report(assessed)
    assert (made["pairs_in_study"], made["pairs_assessed"], made["videos_in_study"], made["n_answers"],
            made["n_experts"], made["experts_per_pair"]) == (4, 4, 3, 8, 2, 2)
    assert made["left_out"] == {"pending": 0, "rejected": 0}
    assert made["overall"] == {
        "represents_dimension": {"n": 8, "yes": 5, "rate": 5 / 8},
        "answerable_from_video": {"n": 8, "yes": 7, "rate": 7 / 8},
        "answer_correct": {"n": 8, "yes": 5, "rate": 5 / 8}}
    rows = {row["dimension"]: row for row in made["dimensions"]}
    assert rows[A]["represents_dimension"] == {"n": 4, "yes": 3, "rate": 0.75}
    assert rows[A]["answerable_from_video"] == {"n": 4, "yes": 3, "rate": 0.75}
    assert rows[A]["answer_correct"] == {"n": 4, "yes": 3, "rate": 0.75}
    assert rows[B]["represents_dimension"] == {"n": 4, "yes": 2, "rate": 0.5}
    assert rows[B]["answerable_from_video"] == {"n": 4, "yes": 4, "rate": 1.0}
    assert rows[B]["answer_correct"] == {"n": 4, "yes": 2, "rate": 0.5}
    assert (rows[A]["pairs"], rows[A]["assessed"], rows[A]["name"]) == (2, 2, "Fine grained action understanding")

    outcomes = {pair["study_item"]: pair["outcome"] for pair in made["pairs"]}
    assert outcomes == {f"{A}:0": "checked", f"{A}:1": "returned", f"{B}:0": "returned", f"{B}:1": "kept"}
    tie = next(pair for pair in made["pairs"] if pair["study_item"] == f"{A}:1")
    assert tie["votes"]["answer_correct"] == {"yes": 1, "no": 1} and tie["verdicts"]["answer_correct"] == "fail"
    assert made["failing_answer"] == [f"{A}:1", f"{B}:0"] and made["kept"] == [f"{B}:1"]
    assert made["finalised"] is None


def test_the_agreement_of_two_experts(assessed):
    agreement = expert_report.report(assessed)["agreement"]
    # every question: 3 of the 4 pairs unanimous
    for question in expert_study.QUESTIONS:
        assert agreement[question]["percent_agreement"]["value"] == pytest.approx(0.75)
        assert agreement[question]["fleiss_kappa"]["n_items"] == 4
    # Fleiss, question 1: (y,y), (n,y), (y,y), (n,n): P = 3/4, p_yes = 5/8, Pe = 34/64 -> (3/4 - 17/32) / (15/32) = 7/15
    assert agreement["represents_dimension"]["fleiss_kappa"]["value"] == pytest.approx(7 / 15)
    assert agreement["answer_correct"]["fleiss_kappa"]["value"] == pytest.approx(7 / 15)
    # question 2: 7 agree, 1 disagree: Pe = 50/64 -> (24/32 - 25/32) / (7/32) = -1/7
    assert agreement["answerable_from_video"]["fleiss_kappa"]["value"] == pytest.approx(-1 / 7)
    # Krippendorff's alpha (nominal), question 1: D_o = 2/8, D_e = 2·5·3 / (8·7) -> 1 - 7/15 = 8/15
    assert agreement["represents_dimension"]["krippendorff_alpha"]["value"] == pytest.approx(8 / 15)
    assert agreement["answerable_from_video"]["krippendorff_alpha"]["value"] == pytest.approx(0.0)


def test_rejected_answers_are_left_out_and_a_reviewer_s_correction_counts(assessed, curator):
    def submission(pair, expert):
        return Submission.objects.get(claim__study=assessed, claim__item__external_id=pair,
                                      claim__worker__username=expert)

    review.reject(submission(f"{A}:0", "e1"), curator, reason="answered without watching")
    corrected = {**answer(ANSWERS[f"{B}:1"]["e2"]), "represents_dimension": "yes"}
    review.approve(submission(f"{B}:1", "e2"), curator, edited=corrected)
    with pytest.raises(InvalidSubmission):
        review.approve(submission(f"{B}:0", "e2"), curator, edited={**corrected, "answer_correct": "no"})

    made = expert_report.report(assessed)
    assert made["left_out"] == {"pending": 0, "rejected": 1} and made["n_answers"] == 7
    # question 1 loses e1's "yes" on A:0 and gains e2's corrected "yes" on B:1: 5 of 7
    assert made["overall"]["represents_dimension"] == {"n": 7, "yes": 5, "rate": 5 / 7}
    assert made["overall"]["answer_correct"] == {"n": 7, "yes": 4, "rate": 4 / 7}
    pairs = {pair["study_item"]: pair for pair in made["pairs"]}
    assert pairs[f"{A}:0"]["experts"] == 1 and pairs[f"{A}:0"]["outcome"] == "checked"
    assert pairs[f"{B}:1"]["votes"]["represents_dimension"] == {"yes": 1, "no": 1}
    assert pairs[f"{B}:1"]["outcome"] == "kept"  # a tie on (1) fails it
    fleiss = made["agreement"]["represents_dimension"]["fleiss_kappa"]
    assert (fleiss["n_items"], fleiss["left_out"]) == (3, 1)  # only the pairs with both answers


def test_one_expert_per_pair_gives_no_agreement(pool, curator):
    study = create_expert_study(pool, curator, seed=1, size=6).study
    expert = make_user("expert", ANNOTATOR)
    expert_group.grant(expert, curator)
    claim = assignment.claim_next(study, expert)
    submissions.submit(claim, expert, GOOD)
    made = expert_report.report(study)
    assert made["agreement"] is None and made["pairs_assessed"] == 1
    assert made["overall"]["answer_correct"] == {"n": 1, "yes": 1, "rate": 1.0}
    row = next(row for row in made["dimensions"] if row["dimension"] == claim.item.payload["dimension"])
    assert row["answer_correct"]["n"] == 1
    assert all(row["answer_correct"]["rate"] is None for row in made["dimensions"]
               if row["dimension"] != claim.item.payload["dimension"])


# --- Finalising ----------------------------------------------------------------------------------

def stage_of(study, external_id) -> CurationRecord:
    return CurationRecord.objects.get(item=study.items.get(external_id=external_id).benchmark_item)


def test_nothing_moves_on_a_submission_and_finalising_sends_failing_answers_back(assessed, curator):
    assert set(CurationRecord.objects.values_list("stage", flat=True)) == {stages.FILTERED}
    summary = expert_report.finalise(assessed, curator)
    assert summary["returned"] == [f"{A}:1", f"{B}:0"] and summary["checked"] == [f"{A}:0"]
    assert summary["kept"] == [f"{B}:1"] and summary["skipped"] == {} and summary["not_assessed"] == 0

    returned = stage_of(assessed, f"{B}:0")
    assert returned.stage == stages.RETURNED == "returned_to_filtration"
    [sent] = returned.working["returned"]
    assert sent["by_id"] == curator.pk and "2 of 2 said it is wrong" in sent["reason"]
    assert "Three people, not two." in sent["reason"] and "There are three." in sent["reason"]
    assert "proposal" in returned.working["source"]  # the record's other working fields stay
    # the pair is in the filtration queue again: an item of the study of pairs sent back reviews its proposal
    again = StudyItem.objects.get(proposal_id=returned.working["source"]["proposal"])
    assert again.study.step_kind == "cvrr_filtration" and again.study.state == Study.State.OPEN
    assert returned.working["expert_assessment"]["notes"] == [
        {"expert": "e1", "note": "Three people, not two."}, {"expert": "e2", "note": "There are three."}]
    assert "1 of 2 said it is wrong" in stage_of(assessed, f"{A}:1").working["returned"][-1]["reason"]
    assert stage_of(assessed, f"{A}:0").stage == stages.EXPERT_CHECKED
    kept = stage_of(assessed, f"{B}:1")
    assert kept.stage == stages.FILTERED and kept.working["expert_assessment"]["outcome"] == "kept"

    assessed.refresh_from_db()
    assert assessed.state == Study.State.CLOSED
    final = StateChange.objects.of(Study, assessed.pk).get(to_state=expert_report.FINALISED)
    assert final.actor == curator and json.loads(final.reason)["cvrr_expert_report"]["checked"] == [f"{A}:0"]
    made = expert_report.report(assessed)
    assert made["finalised"]["by"] == "cur" and made["finalised"]["returned"] == [f"{A}:1", f"{B}:0"]

    with pytest.raises(CrowdError) as caught:
        expert_report.finalise(assessed, curator)
    assert caught.value.status == 409 and "finalised already" in caught.value.message


def test_finalising_refuses_without_answers_or_role_and_leaves_moved_pairs(pool, assessed, curator, researcher):
    empty = create_expert_study(pool, curator, seed=1, size=6).study
    for who, status, words in ((curator, 409, "nothing to finalise"), (researcher, 403, "Only curators")):
        with pytest.raises(CrowdError) as caught:
            expert_report.finalise(empty, who)
        assert caught.value.status == status and words in caught.value.message
    assert empty.state == "open" and not StateChange.objects.filter(to_state=expert_report.FINALISED).exists()

    moved = stage_of(assessed, f"{B}:0")
    moved.stage = stages.EXPERT_CHECKED  # changed elsewhere since
    moved.save()
    summary = expert_report.finalise(assessed, curator)
    assert summary["skipped"] == {f"{B}:0": "at stage expert_checked"} and summary["returned"] == [f"{A}:1"]
    assert stage_of(assessed, f"{B}:0").stage == stages.EXPERT_CHECKED


def test_a_frozen_pool_is_not_moved(assessed, curator):
    version = stage_of(assessed, f"{A}:0").item.version
    BenchmarkVersion.objects.filter(pk=version.pk).update(frozen=True, checksum="x")
    with pytest.raises(CrowdError) as caught:
        expert_report.finalise(assessed, curator)
    assert caught.value.status == 409 and "is frozen" in caught.value.message
    assert set(CurationRecord.objects.values_list("stage", flat=True)) == {stages.FILTERED}
    assert Study.objects.get(pk=assessed.pk).state == "open"


def test_freezing_the_pool_refuses_the_pairs_the_experts_sent_back_and_names_them(assessed, curator):
    """Two experts of two find the answer of B:0 wrong (and one of two that of A:1): finalising sends both back
    to filtration, and freezing the pool is refused, naming each pair and the send-back; nothing is frozen."""
    expert_report.finalise(assessed, curator)
    sent_back = {name: stage_of(assessed, name).item for name in (f"{A}:1", f"{B}:0")}
    pool = sent_back[f"{B}:0"].version

    with pytest.raises(versions.FreezeRefused) as refused:
        versions.freeze(pool)

    named = dict(refused.value.items)
    assert set(named) == {item.external_id for item in sent_back.values()}
    reason = named[sent_back[f"{B}:0"].external_id]
    assert reason.startswith("sent back to filtration in the CVRR-ES curation by cur on ")
    assert "2 of 2 said it is wrong" in reason and "Three people, not two." in reason
    assert f"item {sent_back[f'{B}:0'].external_id!r} was turned down by people: sent back" in " ".join(
        refused.value.messages)
    pool.refresh_from_db()
    assert not pool.frozen and pool.checksum == ""


def test_the_version_page_shows_the_pairs_the_experts_sent_back(assessed, curator, curator_client):
    expert_report.finalise(assessed, curator)
    item = stage_of(assessed, f"{B}:0").item

    response = curator_client.post(reverse("version-freeze", args=[item.version_id]), {"confirm": "yes"})

    assert response.status_code == 409
    page = response.content.decode()
    assert f"item &#x27;{item.external_id}&#x27; was turned down by people: sent back to filtration" in page
    assert "2 of 2 said it is wrong" in page
    assert not BenchmarkVersion.objects.get(pk=item.version_id).frozen


# --- Pages ---------------------------------------------------------------------------------------

def create_form(version, **changes) -> dict:
    return {"pool": version.pk, "sample_by": "size", "size": 8, "share": "", "seed": 4, "k": 2, "name": "",
            "open_now": "on", **changes}


def test_the_curator_page_creates_a_study_and_shows_its_report(pool, curator, curator_client):
    page = curator_client.get(reverse("cvrr-experts"))
    assert page.status_code == 200 and "qa-pool" in page.content.decode()
    response = curator_client.post(reverse("cvrr-experts-create"), create_form(pool))
    assert response.status_code == 302
    study = Study.objects.get()
    assert response["Location"] == reverse("cvrr-expert-report", args=[study.slug])
    assert study.items.count() == 8 and study.annotators_per_item == 2
    assert expert_study.recorded_sample(study)["seed"] == 4
    report = curator_client.get(response["Location"])
    html = report.content.decode()
    assert report.status_code == 200 and "8 of 16 pairs of cvrr:qa-pool (6 videos), seed 4" in html
    assert "No pair has answers from more than one expert yet." in html
    assert 'class="primary" disabled>Finalise the report' in html  # nothing answered yet
    assert study.name in curator_client.get(reverse("cvrr-experts")).content.decode()
    detail = curator_client.get(reverse("crowd-study-detail", args=[study.slug])).content.decode()
    assert reverse("cvrr-expert-report", args=[study.slug]) in detail


@pytest.mark.parametrize("changes, status, words", [
    ({"size": 3}, 400, "cannot cover the 6 videos"),
    ({"size": ""}, 400, "give the number of pairs"),
    ({"sample_by": "share", "share": "0.1"}, 400, "fewer than the 6 videos"),
    ({"sample_by": "share", "share": "2"}, 400, "less than or equal to 1"),
    ({"k": 0}, 400, "greater than or equal to 1"),
    ({"seed": "seven"}, 400, "whole number"),
    ({"pool": 987654}, 400, "Select a valid choice"),
])
def test_the_curator_page_refuses_bad_input_and_creates_nothing(pool, curator_client, changes, status, words):
    response = curator_client.post(reverse("cvrr-experts-create"), create_form(pool, **changes))
    assert response.status_code == status and words in response.content.decode()
    assert not Study.objects.exists()


def test_the_report_page_json_and_finalise_button(assessed, curator_client):
    page = curator_client.get(reverse("cvrr-expert-report", args=[assessed.slug]))
    html = page.content.decode()
    assert page.status_code == 200
    assert "62.50%" in html and "(5 of 8)" in html and "87.50%" in html and "The man holds a cup" in html
    assert 'data-pair="partial_actions:0"' in html and 'data-pair="fine_grained_action_understanding:0"' not in html
    data = curator_client.get(reverse("cvrr-expert-report-json", args=[assessed.slug])).json()
    assert data["overall"]["answerable_from_video"] == {"n": 8, "yes": 7, "rate": 0.875}

    url = reverse("cvrr-expert-finalise", args=[assessed.slug])
    assert curator_client.post(url).status_code == 302
    assert stage_of(assessed, f"{B}:0").stage == stages.RETURNED
    again = curator_client.post(url)
    assert again.status_code == 409 and "finalised already" in again.content.decode()
    assert 'id="finalised"' in curator_client.get(reverse("cvrr-expert-report", args=[assessed.slug])).content.decode()


def test_the_pages_refuse_other_roles_and_unknown_studies(assessed, pool, annotator_client, researcher_client,
                                                          curator_client):
    slug = assessed.slug
    for client in (annotator_client, researcher_client):
        assert client.get(reverse("cvrr-experts")).status_code == 403
        assert client.get(reverse("cvrr-expert-report", args=[slug])).status_code == 403
        assert client.get(reverse("cvrr-expert-report-json", args=[slug])).status_code == 403
        assert client.post(reverse("cvrr-expert-finalise", args=[slug])).status_code == 403
        assert client.post(reverse("cvrr-experts-create"), create_form(pool)).status_code == 403
        assert client.post(reverse("cvrr-experts-qualify"), {"username": "ann", "action": "grant"}).status_code == 403
    assert Study.objects.count() == 1 and not StateChange.objects.filter(to_state=expert_report.FINALISED).exists()
    other = Study.objects.create(name="Plain", slug="plain", form_schema={"fields": []})
    for name in ("cvrr-expert-report", "cvrr-expert-report-json", "cvrr-expert-finalise"):
        method = curator_client.post if name.endswith("finalise") else curator_client.get
        assert method(reverse(name, args=["no-such-study"])).status_code == 404
        assert method(reverse(name, args=[other.slug])).status_code == 404
    assert curator_client.post(reverse("cvrr-experts")).status_code == 405
    assert curator_client.get(reverse("cvrr-expert-finalise", args=[slug])).status_code == 405


def test_the_page_grants_and_takes_back_the_qualification(curator_client, annotator):
    url = reverse("cvrr-experts-qualify")
    assert curator_client.post(url, {"username": "ann", "action": "grant"}).status_code == 302
    assert [user.username for user in expert_group.members()] == ["ann"]
    page = curator_client.get(reverse("cvrr-experts")).content.decode()
    assert 'data-expert="ann"' in page
    for form, words in (({"username": "nobody", "action": "grant"}, "No user &#x27;nobody&#x27;"),
                        ({"username": "", "action": "grant"}, "Name the user"),
                        ({"username": "ann", "action": "promote"}, "grant or to take back")):
        response = curator_client.post(url, form)
        assert response.status_code == 400 and words in response.content.decode()
    assert curator_client.post(url, {"username": "ann", "action": "revoke"}).status_code == 302
    assert expert_group.members() == []


def test_the_new_study_page_makes_an_expert_study_over_the_default_sample(pool, curator, curator_client):
    form = {"name": "Experts from the page", "step_kind": expert_sample.STUDY_KIND, "form_schema": "{}",
            "annotators_per_item": 1, "count_accepted_only": "on", "lease_seconds": 1800, "estimated_minutes": 2,
            "pay_per_item": "0", "currency": "USD", "gold_share": 0, "expert_share": 0, "expert_first": 0,
            "min_accept_rate": 0, "min_reviews_for_exclusion": 3, "recruitment_platform": "none",
            "required_submissions": 1}
    response = curator_client.post(reverse("crowd-study-new"), form)
    assert response.status_code == 302, response.content.decode()[:2000]
    study = Study.objects.get(name="Experts from the page")
    # the paper's share of 16 pairs (7.47 -> 7), at least one per video, seed 0
    assert study.items.count() == 7 and len(videos_of(study.items.all())) == 6
    assert study.required_qualification.name == "cvrr-expert" and study.form_schema == expert_study.FORM

    make_pool(curator, pool.items.first().media.first().video, SMALL, label="second")
    response = curator_client.post(reverse("crowd-study-new"), {**form, "name": "Ambiguous"})
    assert response.status_code == 400 and "several CVRR-ES QA pools" in response.content.decode()
    assert not Study.objects.filter(name="Ambiguous").exists()


# --- The command ---------------------------------------------------------------------------------

def test_the_command_creates_reports_finalises_and_grants(pool, assessed, curator, capsys):
    call_command("cvrr_expert_assessment", "create", "--pool", str(pool.pk), "--size", "6", "--seed", "5",
                 "--experts", "1", "--user", curator.username, "--slug", "experts-cli")
    out = capsys.readouterr().out
    study = Study.objects.get(slug="experts-cli")
    assert study.items.count() == 6 and "experts-cli: 6 of 16 pairs of cvrr:qa-pool over 6 videos (seed 5)" in out

    call_command("cvrr_expert_assessment", "report", "--study", assessed.slug)
    out = capsys.readouterr().out
    assert "represents its dimension: 62.50% (5 of 8)" in out and "answerable from the video alone: 87.50%" in out
    assert "Fleiss' kappa 0.467" in out and f"{A}:1" in out

    call_command("cvrr_expert_assessment", "report", "--study", assessed.slug, "--json")
    assert json.loads(capsys.readouterr().out)["overall"]["answer_correct"]["yes"] == 5

    call_command("cvrr_expert_assessment", "finalise", "--study", assessed.slug, "--user", curator.username)
    assert "2 pair(s) back to filtration, 1 expert checked, 1 kept" in capsys.readouterr().out
    assert stage_of(assessed, f"{B}:0").stage == stages.RETURNED

    make_user("newbie", RESEARCHER)
    call_command("cvrr_expert_assessment", "grant", "--user", curator.username, "newbie")
    assert "newbie" in [user.username for user in expert_group.members()]

    for args, words in ((["create", "--pool", "987654", "--size", "6", "--seed", "1", "--user", curator.username],
                         "No version"),
                        (["create", "--pool", str(pool.pk), "--size", "2", "--seed", "1", "--user", curator.username],
                         "cannot cover the 6 videos"),
                        (["create", "--pool", str(pool.pk), "--size", "6", "--seed", "1", "--user", "nobody"],
                         "No user 'nobody'"),
                        (["report", "--study", "missing"], "No expert assessment study 'missing'"),
                        (["finalise", "--study", assessed.slug, "--user", curator.username], "finalised already"),
                        (["grant", "--user", curator.username, "ghost"], "No user 'ghost'")):
        with pytest.raises(CommandError, match=words):
            call_command("cvrr_expert_assessment", *args)
