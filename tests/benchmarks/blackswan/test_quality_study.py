"""BlackSwanSuite's data quality study (annotation.benchmarks.blackswan.quality_study): sampling a frozen version
with a recorded seed, the raters' items, and the report over work done through the real crowd flow
(claim_next, submit, expert review), checked against figures worked out by hand."""

import json

import pytest
from django.core.exceptions import PermissionDenied
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotation import versions
from annotation.benchmarks.blackswan import quality_study
from annotation.benchmarks.blackswan.quality_study import create_quality_study, quality_report, recorded_sample
from annotation.crowd import assignment, review, submissions
from annotation.crowd.errors import CrowdError
from annotation.crowd.models import Study, StudyItem, Submission
from annotation.models import Benchmark, BenchmarkVersion
from config.models import StateChange
from config.roles import ANNOTATOR
from tests.conftest import logged_in_client, make_user

pytestmark = pytest.mark.django_db

COMPLETE = ["v1", "v2", "v3", "v4", "v5", "v6"]
SEED_7_SAMPLE = ["v3", "v2", "v4", "v6"]  # random.Random(7).sample over the six complete videos, by id


def record(video_id: str, **changes) -> dict:
    """A release record with all three tasks: forecast 1 kept, 2 and 3 replaced; hypothesis 1 invalidated."""
    data = {
        "id": video_id, "preevent": 0, "event": 3.0, "postevent": 6.0,
        "task1_gt": [f"{video_id}: the rider lands", f"{video_id}: the rider stops", f"{video_id}: he waves"],
        "task2_checkboxes": ["yes", "no", "no"],
        "task2_gt": ["", f"{video_id}: the bike slips on wet grass", f"{video_id}: a dog runs across"],
        "task3_checkboxes": ["no", "yes", "no"],
        "task3_gt": f"{video_id}: a rider loses grip on wet grass and falls.",
    }
    data.update(changes)
    return data


@pytest.fixture
def version(video, curator) -> BenchmarkVersion:
    """A frozen BlackSwanSuite version: six complete videos, one without its step-3 marks (it can still be
    evaluated, so the version freezes, but it lacks a task the study rates), and an MCQ row."""
    version = BenchmarkVersion.objects.create(benchmark=Benchmark.objects.get(slug="blackswan"), label="q1",
                                              created_by=curator)
    for video_id in COMPLETE:
        versions.add_item(version, video_id, {"kind": "video", **record(video_id)}, {"video": video})
    incomplete = record("v7")
    del incomplete["task3_checkboxes"]
    versions.add_item(version, "v7", {"kind": "video", **incomplete}, {"video": video})
    versions.add_item(version, "v1:mcq:0", {"kind": "mcq", "id": "v1", "mcq_task": 1, "mcq_label": 0,
                                            "mcq_options": ["a", "b", "c"]}, {"video": video})
    return versions.freeze(version)


# --- Sampling ---------------------------------------------------------------------------------

def test_the_sample_is_drawn_with_a_recorded_seed_from_the_complete_videos(version, video, curator):
    made = create_quality_study(version, 4, 7, curator, k=2)
    study = made.study
    assert [item.external_id for item in made.items] == SEED_7_SAMPLE
    assert list(study.items.values_list("external_id", flat=True)) == SEED_7_SAMPLE
    assert set(made.excluded) == {"v7"} and "'task3_checkboxes'" in made.excluded["v7"]
    assert made.sample == recorded_sample(study) == {
        "source": "blackswan:q1", "version_id": version.pk, "version_checksum": version.checksum, "seed": 7,
        "sample_size": 4, "population": 6, "excluded": 1, "raters_per_video": 2, "sampled": SEED_7_SAMPLE,
        "method": "random.Random(seed).sample over the population ordered by video id"}
    entry = StateChange.objects.of(Study, study.pk).get()
    assert (entry.to_state, entry.actor) == ("open", curator)
    assert json.loads(entry.reason)["blackswan_quality_study"]["seed"] == 7

    assert (study.step_kind, study.state, study.annotators_per_item) == ("form", "open", 2)
    assert (study.expert_share, study.expert_first, study.created_by) == (0.0, 0, curator)
    assert study.form_schema == quality_study.FORM
    likert = [field for field in study.form_schema["fields"] if field["type"] == "likert"]
    assert [(f["name"], f["min"], f["max"], sorted(f["labels"])) for f in likert] == [
        ("correctness", 0, 10, ["0", "10"]), ("depth", 0, 10, ["0", "10"])]

    v3 = made.items[0]
    assert v3.video == video and v3.benchmark_item == version.items.get(external_id="v3")
    assert v3.open_slots == 2 and v3.role == StudyItem.Role.REGULAR
    assert v3.payload == {
        "video_id": "v3",
        "forecaster_scenarios": ["1. v3: the rider lands", "2. v3: the rider stops", "3. v3: he waves"],
        "detective_marks": ["Scenario 1: valid", "Scenario 2: invalid", "Scenario 3: invalid"],
        "detective_hypotheses": ["1. v3: the rider lands (scenario 1 kept)",
                                 "2. v3: the bike slips on wet grass (new, in place of scenario 2)",
                                 "3. v3: a dog runs across (new, in place of scenario 3)"],
        "reporter_marks": ["Hypothesis 1: invalid", "Hypothesis 2: valid", "Hypothesis 3: invalid"],
        "reporter_caption": "v3: a rider loses grip on wet grass and falls.",
    }


def test_the_same_seed_draws_the_same_videos_and_another_seed_others(version, curator):
    first = create_quality_study(version, 4, 7, curator)
    again = create_quality_study(version, 4, 7, curator)
    other = create_quality_study(version, 4, 8, curator)
    assert again.study.slug != first.study.slug
    assert again.sample["sampled"] == first.sample["sampled"] == SEED_7_SAMPLE
    assert other.sample["sampled"] == ["v2", "v3", "v4", "v1"]


def test_items_or_record_video_pairs_can_be_sampled_too(version, video, curator):
    items = list(version.items.filter(external_id__in=["v1", "v2", "v7"]))
    made = create_quality_study(items, 2, 1, curator, k=1)
    assert sorted(item.external_id for item in made.items) == ["v1", "v2"]
    assert made.sample["source"] == "blackswan:q1" and set(made.excluded) == {"v7"}

    pairs = [(record("r1"), video), (record("r2"), video), (record("r3"), None)]
    made = create_quality_study(pairs, 2, 1, curator, k=1)
    assert sorted(item.external_id for item in made.items) == ["r1", "r2"]
    assert made.items[0].benchmark_item is None and made.items[0].video == video
    assert made.sample["source"] == "records"
    assert "no library video" in made.excluded["r3"]


def test_bad_requests_create_nothing(version, video, curator, researcher):
    draft = BenchmarkVersion.objects.create(benchmark=Benchmark.objects.get(slug="blackswan"), label="draft")
    other = BenchmarkVersion.objects.create(benchmark=Benchmark.objects.get(slug="cvqa"), label="c1")
    cases = [
        (lambda: create_quality_study(version, 7, 1, curator), CrowdError,
         "larger than the population: 6 video(s) of blackswan:q1 have all their tasks (1 left out)"),
        (lambda: create_quality_study(version, 0, 1, curator), CrowdError, "sample size must be a whole number"),
        (lambda: create_quality_study(version, 2, "seven", curator), CrowdError, "seed must be a whole number"),
        (lambda: create_quality_study(version, 2, 1, curator, k=0), CrowdError, "raters per video (k)"),
        (lambda: create_quality_study(draft, 1, 1, curator), CrowdError, "is not frozen yet"),
        (lambda: create_quality_study(other, 1, 1, curator), CrowdError, "not a BlackSwanSuite version"),
        (lambda: create_quality_study(["v1"], 1, 1, curator), CrowdError, "neither a BenchmarkItem nor"),
        (lambda: create_quality_study(version, 2, 1, researcher), PermissionDenied, "Only curators and admins"),
    ]
    for call, error, words in cases:
        with pytest.raises(error) as caught:
            call()
        assert words in str(caught.value)
    assert Study.objects.count() == 0 and StudyItem.objects.count() == 0


def test_a_rater_sees_the_video_and_every_task(version, video, curator):
    study = create_quality_study(version, 1, 7, curator, k=1).study
    rater = make_user("rater", ANNOTATOR)
    client = logged_in_client(rater)
    page = client.post(reverse("crowd-work", kwargs={"slug": study.slug}), follow=True)
    assert page.status_code == 200
    html = page.content.decode()
    video_url = reverse("media-video-file", kwargs={"pk": video.pk})
    assert f'src="{video_url}"' in html
    for text in ("Forecaster scenarios", "1. v3: the rider lands", "Scenario 2: invalid",
                 "2. v3: the bike slips on wet grass (new, in place of scenario 2)", "Hypothesis 1: invalid",
                 "v3: a rider loses grip on wet grass and falls.", "Entirely correct", "Deep, thoughtful reasoning"):
        assert text in html, text
    streamed = client.get(video_url)
    assert streamed.status_code == 200
    b"".join(streamed.streaming_content)


# --- The report --------------------------------------------------------------------------------------

# (correctness, depth, grammar) per item position (in hand-out order) and rater
ANSWERS = {
    0: {"w1": (9, 9, "yes"), "w2": (2, 1, "no"), "w3": (0, 0, "no")},  # w1 corrected to 10; w2 rejected; w3 pending
    1: {"w1": (10, 9, "yes"), "w2": (9, 9, "yes")},
    2: {"w1": (8, 7, "yes"), "w2": (8, 8, "no")},
    3: {"w1": (10, 10, "no"), "w2": (10, 9, "no")},
}


def answer(values) -> dict:
    correctness, depth, grammar = values
    return {"correctness": correctness, "depth": depth, "grammar": grammar, "comments": ""}


@pytest.fixture
def rated_study(version, curator):
    """Four videos, two raters each; every rater's first submission goes to an expert."""
    study = create_quality_study(version, 4, 7, curator, k=2, expert_first=1).study
    position = {item.pk: index for index, item in enumerate(study.items.order_by("id"))}
    workers = {name: make_user(name, ANNOTATOR) for name in ("w1", "w2", "w3")}

    def work(name):
        done = []
        while (claim := assignment.claim_next(study, workers[name])) is not None:
            submission, created, _ = submissions.submit(claim, workers[name],
                                                        answer(ANSWERS[position[claim.item_id]][name]))
            assert created
            done.append((position[claim.item_id], submission))
        return done

    w1, w2 = work("w1"), work("w2")
    assert [p for p, _ in w1] == [p for p, _ in w2] == [0, 1, 2, 3]
    assert [s.review_state for _, s in w1] == ["pending", "not_sampled", "not_sampled", "not_sampled"]
    review.approve(w1[0][1], curator, edited=answer((10, 9, "yes")))
    review.reject(w2[0][1], curator, reason="rated another video")
    w3 = work("w3")  # the rejected answer freed a place on video 0, and only there
    assert [(p, s.review_state) for p, s in w3] == [(0, "pending")]
    return study


def test_the_report_over_approved_and_unsampled_ratings(rated_study):
    report = quality_report(rated_study)
    # counted: video 0 w1 (as corrected); videos 1-3 w1 and w2; w2's rejected and w3's pending answers are not
    assert (report["n_submissions"], report["n_raters"], report["n_videos_rated"], report["videos_in_study"]) == (
        7, 2, 4, 4)
    assert report["left_out"] == {"pending": 1, "rejected": 1}
    correctness, depth, grammar = report["correctness"], report["depth"], report["grammar"]
    assert correctness["mean"] == pytest.approx(65 / 7)  # 10 + 10 + 9 + 8 + 8 + 10 + 10
    assert depth["mean"] == pytest.approx(61 / 7)  # 9 + 9 + 9 + 7 + 8 + 10 + 9
    assert (correctness["n"], depth["n"], correctness["out_of"]) == (7, 7, 10)
    assert (grammar["acceptable"], grammar["n"]) == (4, 7)
    assert grammar["acceptable_share"] == pytest.approx(4 / 7)

    # Krippendorff's alpha over the videos with two ratings: (10, 9), (8, 8), (10, 10) for correctness.
    # Ordinal: values 8 ×2, 9 ×1, 10 ×3 (n = 6); delta(9,10) = ((1 + 3) / 2)^2 = 4, delta(8,9) = 2.25,
    # delta(8,10) = (6 - 2.5)^2 = 12.25; observed: 2 × 4 = 8; expected: 2 × (2·1·2.25 + 2·3·12.25 + 1·3·4) = 180;
    # alpha = 1 - (n - 1) · 8 / 180 = 7/9.
    assert correctness["alpha_ordinal"]["value"] == pytest.approx(7 / 9)
    assert (correctness["alpha_ordinal"]["n_items"], correctness["alpha_ordinal"]["left_out"]) == (3, 1)
    # Depth (9, 9), (7, 8), (10, 9): values 7, 8, 10 once, 9 ×3; observed 2·1 + 2·4 = 10; expected
    # 2 × (1 + 3·9 + 25 + 3·4 + 16 + 3·4) = 186; alpha = 1 - 5 · 10 / 186 = 68/93.
    assert depth["alpha_ordinal"]["value"] == pytest.approx(68 / 93)
    # Grammar (yes, yes), (yes, no), (no, no): 3 yes, 3 no; 2 disagreeing pairs; alpha = 1 - 5 · 2 / (2·3·3) = 4/9.
    assert grammar["alpha_nominal"]["value"] == pytest.approx(4 / 9)

    sampled = report["sample"]["sampled"]
    by_video = {row["video_id"]: row for row in report["per_video"]}
    assert list(by_video) == sorted(sampled)
    order = rated_study.items.order_by("id").values_list("external_id", flat=True)
    rows = [by_video[external_id] for external_id in order]
    assert [(row["n"], row["correctness"], row["depth"], row["grammar_acceptable_share"]) for row in rows] == [
        (1, 10.0, 9.0, 1.0), (2, 9.5, 9.0, 1.0), (2, 8.0, 7.5, 0.5), (2, 10.0, 9.5, 0.0)]
    assert report["paper"] == {"videos": 60, "correctness": 9.6, "depth": 9.3, "grammar_percent": 92.3}


def test_a_report_before_any_rating_has_no_figures(version, curator):
    report = quality_report(create_quality_study(version, 2, 3, curator).study)
    assert report["n_submissions"] == 0
    assert report["correctness"]["mean"] is None and report["grammar"]["acceptable_share"] is None
    assert report["correctness"]["alpha_ordinal"]["value"] is None
    assert report["correctness"]["alpha_ordinal"]["reason"]
    assert Submission.objects.count() == 0


# --- The command ------------------------------------------------------------------------------------

def test_the_command_creates_the_study_and_prints_the_report(version, curator, rated_study, capsys):
    call_command("blackswan_quality_study", "create", "--version", "q1", "--sample", "3", "--seed", "5",
                 "--raters", "2", "--user", curator.username, "--slug", "quality-q1")
    out = capsys.readouterr().out
    study = Study.objects.get(slug="quality-q1")
    assert study.items.count() == 3 and study.annotators_per_item == 2
    assert recorded_sample(study)["seed"] == 5
    assert "quality-q1: 3 of 6 videos of blackswan:q1 (seed 5), 2 raters each" in out
    assert "v7:" in out  # the video left out, with its reason

    call_command("blackswan_quality_study", "report", "--study", rated_study.slug)
    out = capsys.readouterr().out
    assert "correctness 9.29/10" in out and "depth 8.71/10" in out and "grammar acceptable 57.1%" in out
    assert "7 ratings of 4 videos by 2 raters" in out and "alpha ordinal 0.778" in out

    call_command("blackswan_quality_study", "report", "--study", rated_study.slug, "--json")
    assert json.loads(capsys.readouterr().out)["correctness"]["mean"] == pytest.approx(65 / 7)

    for args, words in ((["create", "--version", "nope", "--sample", "1", "--seed", "1", "--user", curator.username],
                         "No frozen BlackSwanSuite version 'nope'"),
                        (["create", "--version", "q1", "--sample", "9", "--seed", "1", "--user", curator.username],
                         "larger than the population"),
                        (["create", "--version", "q1", "--sample", "1", "--seed", "1", "--user", "nobody"],
                         "No user 'nobody'"),
                        (["report", "--study", "missing"], "No study 'missing'")):
        with pytest.raises(CommandError, match=words):
            call_command("blackswan_quality_study", *args)
