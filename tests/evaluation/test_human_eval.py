"""Human evaluation through the crowd engine (`evaluation.human_eval`): studies built from runs and
versions with the right items and forms, only by curators and admins; results computed from work
done through the real flow (claim_next, submit, review) with every expected number worked out by
hand below; rejected submissions left out; the leaderboard page shows the people beside the models."""

import io
import json
from html import escape as html_escape
from html import unescape as html_unescape

import pytest
from django.core.cache import cache
from django.core.exceptions import PermissionDenied
from django.core.management import CommandError, call_command
from django.urls import reverse
from PIL import Image as PILImage

from annotation.crowd import assignment, review, submissions
from annotation.crowd.models import Study, StudyItem, Submission
from config.roles import ANNOTATOR
from evaluation import benchmarks, human_eval
from evaluation.benchmarks.nleye import benchmark as nleye
from evaluation.benchmarks.nleye import explanation_votes
from evaluation.models import EvaluationRun, Judgment, Prediction
from tests.conftest import create_study, cvqa_payload, ingest_path, make_user
from tests.eval_support import frozen_version

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _empty_cache():
    cache.clear()
    yield
    cache.clear()


def make_run(version, model_id: str, **fields) -> EvaluationRun:
    return EvaluationRun.objects.create(version=version, model_id=model_id, backend="openai",
                                        status=EvaluationRun.Status.SUCCEEDED, **fields)


def predict(run: EvaluationRun, answers: dict) -> dict:
    """Predictions by (request id, sample) → raw output (a plain request id means sample 0)."""
    items = {item.external_id: item for item in run.version.items.all()}
    made = {}
    for key, text in answers.items():
        request_id, sample = key if isinstance(key, tuple) else (key, 0)
        item_id, variant = request_id.split(":")[:2]
        made[(request_id, sample)] = Prediction.objects.create(
            run=run, request_id=request_id, sample_index=sample, item=items[item_id], variant=variant,
            raw_output=text, prompt=[])
    return made


@pytest.fixture
def workers(db) -> dict:
    return {name: make_user(name, ANNOTATOR) for name in ("w1", "w2", "w3")}


def work(study: Study, worker, answer_for) -> list[str]:
    """The worker claims and submits until nothing is left for them; returns the items done."""
    done = []
    while (claim := assignment.claim_next(study, worker)) is not None:
        submissions.submit(claim, worker, answer_for(claim.item))
        done.append(claim.item.external_id)
    return done


def submission_of(study: Study, worker, item: StudyItem) -> Submission:
    return Submission.objects.get(claim__study=study, claim__worker=worker, claim__item=item)


def fields_by_name(study: Study) -> dict:
    return {field["name"]: field for field in study.form_schema["fields"]}


# --- BlackSwan: rating generated responses -------------------------------------------------------------

SPLIT = {"preevent": 0.5, "event": 3.0, "postevent": 6.5, "end": 9.0}


def blackswan_video(video_id: str) -> dict:
    return {**SPLIT, "kind": "video", "id": video_id, "task1_gt": [f"{video_id} falls.", f"{video_id} waves.",
                                                                    f"{video_id} runs."],
            "task2_gt": ["", "", ""], "task2_checkboxes": ["yes", "yes", "yes"], "task3_gt": f"{video_id} slips."}


@pytest.fixture
def blackswan(video):
    version = frozen_version("blackswan", "b1", [("v1", blackswan_video("v1"), {"video": video}),
                                                 ("v2", blackswan_video("v2"), {})])
    run_a, run_b = make_run(version, "org/alpha", input_strategy="frames"), make_run(version, "org/beta",
                                                                                      input_strategy="frames")
    predict(run_a, {("v1:forecaster_gen", 0): "He slips and falls.", ("v1:forecaster_gen", 1): "He falls over.",
                    ("v1:forecaster_gen", 2): "He flies.", "v1:detective_gen": "He tripped.",
                    "v1:reporter_gen": "A man slips on ice.", "v2:forecaster_gen": "She jumps."})
    predict(run_b, {"v1:forecaster_gen": "Nothing happens.", "v1:reporter_gen": "   "})
    return version, run_a, run_b


def sources(study: Study) -> dict:
    """(run id, request id, sample) → item."""
    return {(i.answer_key["source"]["run"], i.answer_key["source"]["request_id"], i.answer_key["source"]["sample"]):
            i for i in study.items.all()}


def test_rating_study_has_one_item_per_response_with_question_references_and_video(blackswan, curator, video):
    version, run_a, run_b = blackswan
    made = human_eval.create_rating_study([run_a, run_b], curator=curator,
                                          variants=("forecaster_gen", "reporter_gen"), k=2)
    study = made.study
    items = sources(study)
    # first responses only; run B's empty Reporter answer and its missing v2 are left out
    assert sorted(items) == [(run_a.pk, "v1:forecaster_gen", 0), (run_a.pk, "v1:reporter_gen", 0),
                             (run_a.pk, "v2:forecaster_gen", 0), (run_b.pk, "v1:forecaster_gen", 0)]
    assert made.left_out == {f"run {run_b.pk} v2:forecaster_gen": "no usable response (missing, failed or empty)",
                             f"run {run_b.pk} v1:reporter_gen": "no usable response (missing, failed or empty)"}
    first = items[(run_a.pk, "v1:forecaster_gen", 0)]
    assert first.payload["question"] == "What happens next?"
    assert first.payload["references"] == ["v1 falls.", "v1 waves.", "v1 runs."]
    assert first.payload["response"] == "He slips and falls."
    assert first.payload["task"].startswith("Forecaster")
    assert "run" not in first.payload and "org/alpha" not in json.dumps(first.payload)  # raters are blind
    prediction = run_a.predictions.get(request_id="v1:forecaster_gen", sample_index=0)
    assert first.answer_key["source"] == {"run": run_a.pk, "prediction": prediction.pk,
                                          "request_id": "v1:forecaster_gen", "sample": 0,
                                          "variant": "forecaster_gen", "item": "v1"}
    assert first.video == video and first.benchmark_item.external_id == "v1"
    assert items[(run_a.pk, "v2:forecaster_gen", 0)].video is None  # v2 has no video
    assert items[(run_a.pk, "v1:reporter_gen", 0)].payload["references"] == ["v1 slips."]

    fields = fields_by_name(study)
    assert list(fields) == ["correctness", "depth", "detail", "visual_entailment"]
    for name in ("correctness", "depth", "detail"):
        assert fields[name]["type"] == "likert" and (fields[name]["min"], fields[name]["max"]) == (1, 5)
        assert set(fields[name]["labels"]) == {"1", "5"}
    assert fields["visual_entailment"]["type"] == "single_choice"
    assert [o["id"] for o in fields["visual_entailment"]["options"]] == ["1", "0"]
    assert study.annotators_per_item == 2 and study.state == Study.State.OPEN
    assert study.form_schema["human_eval"]["runs"] == [run_a.pk, run_b.pk]
    assert human_eval.studies_of(human_eval.RATING, run=run_b) == [study]


def test_rating_study_options_every_sample_and_a_drawn_sample(blackswan, curator):
    version, run_a, run_b = blackswan
    every = human_eval.create_rating_study(run_a, curator=curator, variants=("forecaster_gen",), all_samples=True)
    assert sorted((rid, sample) for _, rid, sample in sources(every.study)) == [
        ("v1:forecaster_gen", 0), ("v1:forecaster_gen", 1), ("v1:forecaster_gen", 2), ("v2:forecaster_gen", 0)]

    drawn = human_eval.create_rating_study([run_a, run_b], curator=curator, variants=("forecaster_gen",), sample=1,
                                           seed=3)
    asked = {rid for _, rid, _ in sources(drawn.study)}
    assert len(asked) == 1  # one question, the same for every run that answered it
    expected_runs = {run_a.pk, run_b.pk} if asked == {"v1:forecaster_gen"} else {run_a.pk}
    assert {run for run, _, _ in sources(drawn.study)} == expected_runs
    with pytest.raises(human_eval.HumanEvalError):
        human_eval.create_rating_study(run_a, curator=curator, variants=("detective_mcq",))


@pytest.mark.parametrize("role_fixture, allowed", [("annotator", False), ("researcher", True), ("curator", True),
                                                   ("admin_user", True)])
def test_curators_researchers_and_admins_create_studies(request, blackswan, role_fixture, allowed):
    user = request.getfixturevalue(role_fixture)
    version, run_a, _ = blackswan
    if allowed:
        assert human_eval.create_rating_study(run_a, curator=user).study.created_by == user
    else:
        with pytest.raises(PermissionDenied):
            human_eval.create_rating_study(run_a, curator=user)
        with pytest.raises(PermissionDenied):
            human_eval.create_human_baseline_study(version, ("detective_mcq",), curator=user)
        assert not Study.objects.exists()


# (correctness, depth, detail, visual entailment) per item and worker
RATINGS = {
    ("a", "v1:forecaster_gen"): {"w1": (5, 4, 3, "1"), "w2": (1, 1, 1, "0"), "w3": (3, 4, 5, "1")},  # w2 rejected
    ("a", "v2:forecaster_gen"): {"w1": (4, 2, 2, "1"), "w2": (2, 2, 4, "0")},
    ("a", "v1:reporter_gen"): {"w1": (2, 3, 4, "0"), "w2": (2, 5, 4, "0")},
    ("b", "v1:forecaster_gen"): {"w1": (1, 2, 3, "0"), "w2": (3, 2, 1, "1")},
}


@pytest.fixture
def rated(blackswan, curator, workers):
    version, run_a, run_b = blackswan
    study = human_eval.create_rating_study([run_a, run_b], curator=curator,
                                           variants=("forecaster_gen", "reporter_gen"), k=2).study
    names = {run_a.pk: "a", run_b.pk: "b"}

    def rater(name):
        def answer(item):
            source = item.answer_key["source"]
            correctness, depth, detail, entailment = RATINGS[(names[source["run"]], source["request_id"])][name]
            return {"correctness": correctness, "depth": depth, "detail": detail, "visual_entailment": entailment}
        return answer

    assert len(work(study, workers["w1"], rater("w1"))) == 4
    assert len(work(study, workers["w2"], rater("w2"))) == 4
    assert work(study, workers["w3"], rater("w3")) == []  # every item has its k = 2 ratings
    rejected_item = sources(study)[(run_a.pk, "v1:forecaster_gen", 0)]
    review.reject(submission_of(study, workers["w2"], rejected_item), curator, reason="rated without watching")
    assert work(study, workers["w3"], rater("w3")) == [rejected_item.external_id]  # the freed place
    return study, run_a, run_b


def group(found: dict, run, variant) -> dict:
    return next(g for g in (found["groups"] if variant else found["models"])
                if g["run"] == run.pk and g["variant"] == variant)


def test_rating_results_per_run_and_variant_leave_rejected_ratings_out(rated):
    study, run_a, run_b = rated
    found = human_eval.rating_results(study)
    assert found["submissions"] == {"counted": 8, "rejected": 1, "pending": 0}

    a_forecaster = group(found, run_a, "forecaster_gen")
    # v1: w1 and w3 (w2's 1/1/1/0 rejected); v2: w1 and w2; each response's mean, then the mean
    assert a_forecaster["means"] == {"correctness": ((5 + 3) / 2 + (4 + 2) / 2) / 2, "depth": (4 + 2) / 2,
                                     "detail": ((3 + 5) / 2 + (2 + 4) / 2) / 2, "visual_entailment": (1 + 0.5) / 2}
    assert a_forecaster["means"]["correctness"] == 3.5 and a_forecaster["items"] == 2
    assert a_forecaster["scales"]["correctness"]["ratings"] == 4
    # the two raters of each response agree exactly on depth (4, 4 and 2, 2): ordinal alpha 1
    assert a_forecaster["scales"]["depth"]["alpha"]["value"] == pytest.approx(1.0)
    assert group(found, run_a, "reporter_gen")["means"] == {"correctness": 2, "depth": 4, "detail": 4,
                                                            "visual_entailment": 0}
    assert group(found, run_b, "forecaster_gen")["means"] == {"correctness": 2, "depth": 2, "detail": 2,
                                                              "visual_entailment": 0.5}
    a_model = group(found, run_a, None)
    assert a_model["items"] == 3
    assert a_model["means"]["correctness"] == pytest.approx((4 + 3 + 2) / 3)
    assert a_model["means"]["detail"] == pytest.approx((4 + 3 + 4) / 3)
    assert found["overall"]["correctness"]["items"] == 4 and found["overall"]["correctness"]["ratings"] == 8

    only_a = human_eval.rating_results(run_a)
    assert {g["run"] for g in only_a["groups"]} == {run_a.pk}
    assert group(only_a, run_a, "forecaster_gen")["means"] == a_forecaster["means"]


def test_ratings_awaiting_an_expert_wait_until_approved(blackswan, curator, workers):
    version, run_a, _ = blackswan
    study = human_eval.create_rating_study(run_a, curator=curator, variants=("reporter_gen",), k=1,
                                           expert_first=1).study
    work(study, workers["w1"], lambda item: {"correctness": 4, "depth": 2, "detail": 3, "visual_entailment": "1"})
    waiting = human_eval.rating_results(study)
    assert waiting["submissions"] == {"counted": 0, "rejected": 0, "pending": 1} and waiting["groups"] == []
    review.approve(Submission.objects.get(claim__study=study), curator)
    approved = human_eval.rating_results(study)
    assert approved["submissions"] == {"counted": 1, "rejected": 0, "pending": 0}
    assert group(approved, run_a, "reporter_gen")["means"] == {"correctness": 4, "depth": 2, "detail": 3,
                                                               "visual_entailment": 1}


def test_leaderboard_page_shows_ratings_beside_clip_and_llm_match(rated, researcher_client):
    study, run_a, run_b = rated
    html = researcher_client.get(reverse("results-version", args=[run_a.version.pk])).content.decode()
    assert 'id="human-ratings"' in html
    declared = benchmarks.get(run_a.version.benchmark.slug).results_section("ratings")
    section = html.split('id="human-ratings"')[1].split("</section>")[0]
    assert f"<h2>{declared.title}</h2>" in section
    assert "<code>manage.py human_eval results --study SLUG</code>" in section  # the note's code
    assert [f"<th>{metric.label}</th>" in section for metric in declared.metrics] == [True, True]
    row = html.split(f'<tr data-run="{run_a.pk}" data-variant="forecaster_gen">')[1].split("</tr>")[0]
    assert 'data-metric="forecaster_gen.clip_score"' in row and "not computed" in row
    assert '<td data-scale="correctness">3.50</td>' in row and '<td data-scale="depth">3.00</td>' in row
    assert '<td data-scale="visual_entailment">0.75</td>' in row and "n=2 (4 ratings)" in row
    row_b = html.split(f'<tr data-run="{run_b.pk}" data-variant="forecaster_gen">')[1].split("</tr>")[0]
    assert '<td data-scale="correctness">2.00</td>' in row_b


def test_command_creates_a_rating_study_and_prints_results(blackswan, curator, annotator):
    version, run_a, run_b = blackswan
    out = io.StringIO()
    call_command("human_eval", "rating-study", "--run", str(run_a.pk), "--run", str(run_b.pk), "--user", "cur",
                 "--variants", "forecaster_gen", "--slug", "bs-rating", "--k", "1", stdout=out)
    assert out.getvalue().startswith("Study bs-rating: 3 item(s), 1 people each; 1 left out")
    study = Study.objects.get(slug="bs-rating")
    assert study.annotators_per_item == 1 and study.items.count() == 3
    printed = io.StringIO()
    call_command("human_eval", "results", "--study", "bs-rating", stdout=printed)
    body = json.loads(printed.getvalue())
    assert body["kind"] == "blackswan_rating" and body["submissions"]["counted"] == 0
    with pytest.raises(CommandError, match="curators, researchers and admins"):
        call_command("human_eval", "rating-study", "--run", str(run_a.pk), "--user", annotator.username,
                     stdout=io.StringIO())
    with pytest.raises(CommandError, match="No run 999999"):
        call_command("human_eval", "rating-study", "--run", "999999", "--user", "cur", stdout=io.StringIO())


# --- NL-EYE: human baseline, explanation votes, judge agreement --------------------------------------------

def triplet(label: int, premise: str) -> dict:
    return {"kind": "triplet", "premise": premise, "hypothesis1": "A man slips.", "hypothesis2": "A man dances.",
            "label": label, "reasoning_category": "physical", "time_direction": "forward",
            "time_duration": "short", "explanation": "Wet floors are slippery."}


@pytest.fixture
def nleye_version(skimage_data, curator):
    premise, first, second = (ingest_path(skimage_data / name, user=curator, probe=False)
                              for name in ("astronaut.png", "coffee.png", "chelsea.png"))
    images = {"premise": premise, "hypothesis1": first, "hypothesis2": second}
    return frozen_version("nleye", "n1", [("t1", triplet(1, "A wet floor."), images),
                                          ("t2", triplet(2, "Music plays."), images),
                                          ("t3", triplet(1, "Ice on the road."), {})])


# per request: worker → (choice, explanation); gold: order1 → 1, order2 → 2
BASELINE = {
    "t1:triplet:order1": {"w1": ("1", "The floor is wet."), "w2": ("1", "The floor is  wet."),
                          "w3": ("1", "He slipped on the wet floor.")},
    "t1:triplet:order2": {"w1": ("2", "w1 on t1 order 2"), "w2": ("1", "w2 picks the dancer"),
                          "w3": ("2", "w3 on t1 order 2")},
    "t2:triplet:order1": {"w1": ("1", "w1 on t2 order 1"), "w2": ("2", "w2 on t2 order 1"),
                          "w3": ("2", "w3 on t2 order 1")},  # w3's is rejected
    "t2:triplet:order2": {"w1": ("1", "w1 on t2 order 2"), "w2": ("1", "w2 on t2 order 2"),
                          "w3": ("2", "w3 on t2 order 2")},
}


def baseline_answer(name):
    def answer(item):
        choice, explanation = BASELINE[item.external_id][name]
        return {"answer": choice, "answer_explanation": explanation, "answer_certainty": "certain",
                "likelihood_1": 4, "likelihood_2": 2}
    return answer


@pytest.fixture
def baseline(nleye_version, curator, workers):
    made = human_eval.create_human_baseline_study(nleye_version, ("triplet",), curator=curator, k=3)
    study = made.study
    for name in ("w1", "w2", "w3"):
        assert sorted(work(study, workers[name], baseline_answer(name))) == sorted(BASELINE)
    item = study.items.get(external_id="t2:triplet:order1")
    review.reject(submission_of(study, workers["w3"], item), curator, reason="did not look at the images")
    return made


def test_baseline_study_asks_the_benchmarks_own_requests_with_the_images(nleye_version, curator):
    made = human_eval.create_human_baseline_study(nleye_version, ("triplet",), curator=curator, k=3)
    study = made.study
    assert sorted(study.items.values_list("external_id", flat=True)) == sorted(BASELINE)
    assert made.left_out == {"t3:triplet:order1": "the item lacks one of its media",
                             "t3:triplet:order2": "the item lacks one of its media"}
    item = study.items.get(external_id="t1:triplet:order1")
    assert item.payload == {"question": nleye.SEPARATE_TRIPLET,
                            "choices": [{"id": "1", "text": "Hypothesis 1"}, {"id": "2", "text": "Hypothesis 2"}]}
    assert "label" not in json.dumps(item.payload)  # the gold is not shown
    assert item.answer_key["source"] == {"request_id": "t1:triplet:order1", "item": "t1", "variant": "triplet",
                                         "answer_type": "choice_12"}
    # the premise and both hypotheses on one canvas, in the order the request shows them
    with item.image.file.open("rb") as handle, PILImage.open(handle) as canvas:
        width, height = canvas.size
    assert width > 3 * 200 and height > 200
    # t2's order 2 shows the same images in the same places under the same labels: one stored canvas
    assert study.items.get(external_id="t2:triplet:order2").image == item.image
    assert study.items.get(external_id="t1:triplet:order2").image != item.image
    fields = fields_by_name(study)
    assert fields["answer"]["type"] == "single_choice" and fields["answer"]["options_from"] == "choices"
    assert fields["answer"]["explanation"] == "required" and fields["answer"]["certainty"] is True
    assert [fields[name]["type"] for name in ("likelihood_1", "likelihood_2")] == ["likert", "likert"]


def test_baseline_results_score_the_majority_answer_like_a_model(baseline, workers):
    found = human_eval.human_baseline_results(baseline.study)
    assert found["submissions"] == {"counted": 11, "rejected": 1, "pending": 0}
    assert (found["requests"], found["answered"], found["annotators"]) == (4, 4, 3)
    triplets = found["metrics"]["triplet"]
    # majorities: t1 o1 → 1 ✓, t1 o2 → 2 ✓, t2 o1 → w1 "1" vs w2 "2" (w3 rejected): a tie, the first given,
    # "1" ✓; t2 o2 → 1 ✗ (gold 2). Consistent only on t1.
    assert found["ties"] == 1
    assert triplets["consistency_accuracy"] == 1 / 2 and triplets["n"] == 2
    assert (triplets["order1_accuracy"], triplets["order2_accuracy"]) == (1.0, 1 / 2)
    # per annotator: w1 3 of 4, w2 1 of 4, w3 3 of 3 (the rejected answer left out)
    per = found["per_annotator"]
    assert per["accuracy_by_annotator"] == {str(workers["w1"].pk): 3 / 4, str(workers["w2"].pk): 1 / 4,
                                            str(workers["w3"].pk): 1.0}
    assert per["mean_accuracy"] == pytest.approx((3 / 4 + 1 / 4 + 1) / 3)
    assert per["pooled_accuracy"] == pytest.approx(7 / 11)
    assert found["agreement"]["unanimous_share"]["value"] == 1 / 4  # only t1 order 1
    # likelihood 4 for the first hypothesis shown, 2 for the second: the plausible one is first in order 1
    # (3 + 2 counted answers) and second in order 2 (3 + 3)
    assert found["likelihood"]["plausible_mean"] == pytest.approx((5 * 4 + 6 * 2) / 11)
    assert found["likelihood"]["implausible_mean"] == pytest.approx((5 * 2 + 6 * 4) / 11)


def test_baseline_refuses_what_people_cannot_be_shown_or_scored(curator, video, image):
    version = frozen_version("cvqa", "c1", [("q1", cvqa_payload("two", new_answer="one"), {"image": image}),
                                            ("b1", cvqa_payload("yes", type="boolean", new_answer="no"),
                                             {"image": image})])
    with pytest.raises(human_eval.HumanEvalError, match="mix choices and written numbers"):
        human_eval.create_human_baseline_study(version, curator=curator)
    mcq = {**SPLIT, "kind": "mcq", "id": "v1", "mcq_task": 1, "mcq_label": 0,
           "mcq_options": ["He slips.", "He catches the ball.", "The dog takes the ball."]}
    blackswan_version = frozen_version("blackswan", "b1", [("v1", blackswan_video("v1"), {"video": video}),
                                                           ("m1", mcq, {"video": video})])
    with pytest.raises(human_eval.HumanEvalError, match="m1:detective_mcq: it shows parts of a video"):
        human_eval.create_human_baseline_study(blackswan_version, ("detective_mcq",), curator=curator)
    with pytest.raises(human_eval.HumanEvalError, match="v1:forecaster_gen: it shows parts of a video"):
        human_eval.create_human_baseline_study(blackswan_version, ("forecaster_gen",), curator=curator)
    assert not Study.objects.exists()


def test_cvqa_counts_are_written_and_read_by_the_counting_parser(curator, image, workers, researcher_client):
    version = frozen_version("cvqa", "c1", [("q1", cvqa_payload("two", new_answer="one"), {"image": image}),
                                            ("q2", cvqa_payload("3"), {}),
                                            ("b1", cvqa_payload("yes", type="boolean", new_answer="no"),
                                             {"image": image})])
    made = human_eval.create_human_baseline_study(version, curator=curator, answer_types=("number",), k=3)
    assert sorted(made.study.items.values_list("external_id", flat=True)) == ["q1:counterfactual", "q1:original"]
    assert set(made.left_out) == {"q2:original", "q2:counterfactual"}  # no image
    item = made.study.items.get(external_id="q1:original")
    assert item.image == image and "choices" not in item.payload
    assert fields_by_name(made.study)["answer"]["type"] == "free_text"
    answers = {"q1:original": {"w1": "2", "w2": "two", "w3": "3"},  # 2 by two votes: right
               "q1:counterfactual": {"w1": "2", "w2": "1", "w3": "none"}}  # 2, 1, 0: a tie, w1's 2 is wrong
    first = workers["w1"]
    claim = assignment.claim_next(made.study, first)
    submissions.submit(claim, first, {"answer": answers[claim.item.external_id]["w1"]})
    waiting = human_eval.human_baseline_results(made.study)  # q1 is scored once both its forms are answered
    assert (waiting["requests"], waiting["answered"], waiting["scored"], waiting["items_waiting"]) == (2, 1, 0, 1)
    assert waiting["metrics"]["predictions"]["requests"] == 0
    for name in ("w1", "w2", "w3"):
        work(made.study, workers[name], lambda item, n=name: {"answer": answers[item.external_id][n]})
    found = human_eval.human_baseline_results(made.study)
    assert (found["scored"], found["items_waiting"]) == (2, 0)
    real = found["metrics"]["real"]
    assert (real["original_accuracy"], real["counterfactual_accuracy"], real["drop"]) == (1.0, 0.0, 1.0)
    assert found["ties"] == 1 and found["per_annotator"]["pooled_accuracy"] == pytest.approx(3 / 6)

    EvaluationRun.objects.create(version=version, model_id="org/vlm", status=EvaluationRun.Status.SUCCEEDED)
    html = researcher_client.get(reverse("results-version", args=[version.pk])).content.decode()
    row = html.split('<tr class="human-row" data-human="baseline">')[1].split("</tr>")[0]
    assert "Human (crowd)" in row and "3 annotators · 2 of 2 requests answered" in row
    assert '<td class="metric" data-metric="real.original_accuracy">' in row
    original = row.split('data-metric="real.original_accuracy">')[1].split("</td>")[0]
    assert "100.0%" in original and "n=1" in original


def test_maia_statement_pairs_are_a_choice_between_the_two_statements(curator, video):
    def question(number: int) -> dict:
        return {"kind": "question", "video": "video1", "category": "Sentiment_A", "question": f"Domanda {number}?",
                "answers": [f"Risposta {i}" for i in range(8)],
                "true_statements": [f"Vero {number}.{i}" for i in range(8)],
                "false_statements": [f"Falso {number}.{i}" for i in range(8)]}

    version = frozen_version("maia", "m1", [("q1", question(1), {"video": video}),
                                            ("q2", question(2), {"video": video})])
    made = human_eval.create_human_baseline_study(version, ("vsv",), curator=curator, sample=1, seed=4)
    items = list(made.study.items.all())
    drawn = {item.external_id.split(":")[0] for item in items}
    assert len(drawn) == 1 and len(items) == 8  # one question drawn, all eight of its pairs asked
    number = drawn.pop()[1]
    for item in items:
        assert item.video == video
        texts = {choice["id"]: choice["text"].split(". ", 1)[1] for choice in item.payload["choices"]}
        index = item.external_id.rsplit(":", 1)[1]
        assert sorted(texts) == ["A", "B"]
        assert sorted(texts.values()) == [f"Falso {number}.{index}", f"Vero {number}.{index}"]


NLEYE_A = {"t1:triplet:order1": "1. The floor is wet so he slips.", "t1:triplet:order2": "2. The floor is wet.",
           "t2:triplet:order1": "1. Because dancing is odd", "t2:triplet:order2": "1",  # wrong: not a candidate
           "t3:triplet:order1": "1. Ice."}
NLEYE_B = {"t1:triplet:order1": "Hypothesis 1: wet floors are slippery.", "t1:triplet:order2": "1",  # wrong
           "t2:triplet:order1": "1.  Because dancing is odd", "t2:triplet:order2": "2. Music plays."}


@pytest.fixture
def nleye_runs(nleye_version):
    run_a, run_b = make_run(nleye_version, "org/alpha"), make_run(nleye_version, "org/beta")
    return run_a, run_b, predict(run_a, NLEYE_A), predict(run_b, NLEYE_B)


def candidate(item: StudyItem, text: str) -> str:
    return next(c["id"] for c in item.payload["candidates"] if c["text"] == text)


def test_vote_study_offers_each_distinct_correct_explanation(nleye_runs, baseline, curator):
    run_a, run_b, made_a, made_b = nleye_runs
    vote = explanation_votes.create_explanation_vote_study([run_a, run_b], curator=curator,
                                                    baseline_studies=[baseline.study])
    study = vote.study
    items = {item.external_id: item for item in study.items.all()}
    assert sorted(items) == ["t1:triplet:order1", "t1:triplet:order2", "t2:triplet:order1", "t2:triplet:order2",
                             "t3:triplet:order1"]
    assert study.annotators_per_item == 3
    first = items["t1:triplet:order1"]
    # models' correct answers, then people's who picked the gold (w1 and w2 wrote the same text)
    assert [c["text"] for c in first.payload["candidates"]] == [
        "1. The floor is wet so he slips.", "Hypothesis 1: wet floors are slippery.", "The floor is wet.",
        "He slipped on the wet floor."]
    sources = first.answer_key["source"]["candidates"]
    assert [s["kind"] for s in sources[candidate(first, "The floor is wet.")]] == ["human", "human"]
    assert sources[candidate(first, "1. The floor is wet so he slips.")] == [
        {"kind": "model", "run": run_a.pk, "prediction": made_a[("t1:triplet:order1", 0)].pk,
         "request_id": "t1:triplet:order1", "sample": 0}]
    shared = items["t2:triplet:order1"]
    assert len(shared.answer_key["source"]["candidates"][candidate(shared, "1. Because dancing is odd")]) == 2
    # t2 order 2: run A answered wrongly, run B and w3 rightly; w1 and w2 picked the wrong hypothesis
    assert [c["text"] for c in items["t2:triplet:order2"].payload["candidates"]] == ["2. Music plays.",
                                                                                    "w3 on t2 order 2"]
    assert first.payload["more_plausible"] == "Hypothesis 1"
    assert items["t1:triplet:order2"].payload["more_plausible"] == "Hypothesis 2"
    assert first.image is not None and first.image != baseline.study.items.get(external_id=first.external_id).image
    no_images = items["t3:triplet:order1"]
    assert no_images.image is None and no_images.payload["premise"] == "Ice on the road."
    assert no_images.payload["hypothesis_1"] == "A man slips."
    field = study.form_schema["fields"][0]
    assert (field["type"], field["candidates_from"], field["min_selected"]) == ("multi_select", "candidates", 0)
    assert "org/alpha" not in json.dumps([item.payload for item in items.values()])
    with pytest.raises(human_eval.HumanEvalError, match="not a human baseline study"):
        explanation_votes.create_explanation_vote_study(run_a, curator=curator, baseline_studies=[study])


# per request: voter → the candidate texts selected
VOTES = {
    "t1:triplet:order1": {"v1": ["1. The floor is wet so he slips.", "The floor is wet."],
                          "v2": ["The floor is wet."],
                          "v3": ["The floor is wet.", "He slipped on the wet floor."]},
    "t1:triplet:order2": {"v1": ["w1 on t1 order 2"], "v2": ["w1 on t1 order 2", "w3 on t1 order 2"], "v3": []},
    "t2:triplet:order1": {"v1": ["1. Because dancing is odd"], "v2": ["1. Because dancing is odd", "w1 on t2 order 1"],
                          "v3": []},  # v2's is rejected
    "t2:triplet:order2": {"v1": ["2. Music plays.", "w3 on t2 order 2"], "v2": ["2. Music plays."],
                          "v3": ["w3 on t2 order 2"]},
    "t3:triplet:order1": {"v1": [], "v2": [], "v3": []},
}


@pytest.fixture
def voted(nleye_runs, baseline, curator):
    run_a, run_b, made_a, _ = nleye_runs
    study = explanation_votes.create_explanation_vote_study([run_a, run_b], curator=curator,
                                                     baseline_studies=[baseline.study]).study
    voters = {name: make_user(name, ANNOTATOR) for name in ("v1", "v2", "v3")}
    for name, voter in voters.items():
        work(study, voter, lambda item, n=name: {"valid": [candidate(item, text)
                                                           for text in VOTES[item.external_id][n]]})
    item = study.items.get(external_id="t2:triplet:order1")
    review.reject(submission_of(study, voters["v2"], item), curator, reason="selected everything")
    # the judge's labels of run A's correct answers: 2, 2, 2, 0
    for request_id, label in (("t1:triplet:order1", 2), ("t1:triplet:order2", 2), ("t2:triplet:order1", 2),
                              ("t3:triplet:order1", 0)):
        Judgment.objects.create(prediction=made_a[(request_id, 0)], kind="nleye_explanation",
                                judge_model="judge-lm", judge_backend="causal_lm", prompt=[],
                                raw_verdict=str(label), verdict={"label": label}, parse_status="ok")
    return study, run_a, run_b


def test_explanation_validity_and_vote_distribution_per_model_and_for_people(voted):
    study, run_a, run_b = voted
    found = explanation_votes.explanation_results(study)
    assert found["submissions"] == {"counted": 14, "rejected": 1, "pending": 0}
    assert found["voters_per_item"] == {2: 1, 3: 4}
    groups = {(g["group"], g["run"]): g for g in found["groups"]}
    a, b, people = groups[("run", run_a.pk)], groups[("run", run_b.pk)], groups[("humans", None)]
    # run A: t1 o1 1 vote, t1 o2 0, t2 o1 1 (v2's vote rejected), t3 o1 0
    assert (a["explanations"], a["valid"], a["valid_rate"]) == (4, 2, 1 / 2)
    assert a["votes"] == {"0": 2, "1": 2, "2": 0, "3": 0}
    # run B: t1 o1 0, t2 o1 1 (the text it shares with run A), t2 o2 2
    assert (b["explanations"], b["valid"], b["valid_rate"]) == (3, 2, 2 / 3)
    assert b["votes"] == {"0": 1, "1": 1, "2": 1, "3": 0}
    # people: t1 o1 w1 3, w2 3, w3 1; t1 o2 w1 2, w3 1; t2 o1 w1 0 (only the rejected voter chose it); t2 o2 w3 2
    assert (people["explanations"], people["valid"], people["valid_rate"]) == (7, 6, 6 / 7)
    assert people["votes"] == {"0": 1, "1": 2, "2": 2, "3": 2}
    assert people["vote_shares"]["3"] == 2 / 7
    assert found["validated_human_explanations"] == {
        "t1": ["The floor is wet.", "He slipped on the wet floor.", "w1 on t1 order 2", "w3 on t1 order 2"],
        "t2": ["w3 on t2 order 2"]}

    # judge vs people on run A, valid or not: (T, T), (T, F), (T, T), (F, F) → agreement 3/4;
    # p_e = 3/4 · 2/4 + 1/4 · 2/4 = 1/2, so κ = (3/4 − 1/2) / (1 − 1/2) = 1/2
    (report,) = a["judge_agreement"]
    assert report["judge_model"] == "judge-lm" and report["n"] == 4
    assert report["binary"]["accuracy"] == 3 / 4
    assert report["binary"]["cohens_kappa"] == pytest.approx(0.5)
    assert b["judge_agreement"] == []  # run B has no stored judgments

    only_b = explanation_votes.explanation_results(run_b)
    assert [(g["group"], g["run"]) for g in only_b["groups"]] == [("run", run_b.pk)]


def test_leaderboard_page_shows_the_human_row_and_validity_beside_the_judge(voted, baseline, researcher_client):
    study, run_a, run_b = voted
    html = researcher_client.get(reverse("results-version", args=[run_a.version.pk])).content.decode()
    row = html.split('<tr class="human-row" data-human="baseline">')[1].split("</tr>")[0]
    assert "Human (crowd)" in row and "3 annotators · 4 of 4 requests answered" in row
    consistency = row.split('data-metric="triplet.consistency_accuracy">')[1].split("</td>")[0]
    assert "50.0%" in consistency and "n=2" in consistency
    assert "100.0%" in row.split('data-metric="triplet.order1_accuracy">')[1].split("</td>")[0]

    section = html.split('id="human-explanations"')[1].split("</section>")[0]
    declared = benchmarks.get(run_a.version.benchmark.slug).results_section("explanation_votes")
    assert f"<h2>{html_escape(declared.title)}</h2>" in section and declared.note in html_unescape(section)
    assert [f"<th>{metric.label}</th>" in section for metric in declared.metrics] == [True]
    a_row = section.split(f'<tr data-run="{run_a.pk}">')[1].split("</tr>")[0]
    assert "75.0%" in a_row.split('data-metric="triplet.explanations.valid_rate">')[1].split("</td>")[0]
    assert "<td data-human-valid>50.0%</td>" in a_row
    assert "<code>judge-lm</code>: agreement 0.750, κ 0.500 (n=4)" in a_row
    people = section.split('<tr data-human="explanations">')[1].split("</tr>")[0]
    assert "<td data-human-valid>85.7%</td>" in people

    printed = io.StringIO()
    call_command("human_eval", "results", "--study", study.slug, stdout=printed)
    assert json.loads(printed.getvalue())["groups"][0]["valid_rate"] == 1 / 2


def test_command_makes_baseline_and_vote_studies(nleye_runs, curator):
    run_a, run_b, _, _ = nleye_runs
    out = io.StringIO()
    call_command("human_eval", "baseline-study", "--benchmark", "nleye", "--version", "n1", "--variant", "triplet",
                 "--user", "cur", "--slug", "nleye-humans", stdout=out)
    assert "Study nleye-humans: 4 item(s), 3 people each; 2 left out" in out.getvalue()
    out = io.StringIO()
    call_command("human_eval", "vote-study", "--run", str(run_a.pk), "--baseline-study", "nleye-humans",
                 "--user", "cur", "--sample", "2", "--slug", "nleye-votes", stdout=out)
    assert out.getvalue().startswith("Study nleye-votes: 2 item(s), 3 people each")
    with pytest.raises(CommandError, match="No version nleye:missing"):
        call_command("human_eval", "baseline-study", "--benchmark", "nleye", "--version", "missing",
                     "--user", "cur", stdout=io.StringIO())


def test_each_kind_of_study_is_made_and_read_through_its_registration():
    """The generic code reaches a kind of study through `study_kind`: NL-EYE's explanation votes register from
    NL-EYE's package, the ratings and the baseline from `evaluation.human_eval`; anything else is refused."""
    votes = human_eval.study_kind(human_eval.VOTE)
    assert (votes.create, votes.results) == (explanation_votes.create_explanation_vote_study,
                                             explanation_votes.explanation_results)
    assert human_eval.study_kind(human_eval.RATING).create is human_eval.create_rating_study
    assert human_eval.study_kind(human_eval.BASELINE).results is human_eval.human_baseline_results
    with pytest.raises(human_eval.HumanEvalError, match="'nope' is not a kind of human-evaluation study"):
        human_eval.study_kind("nope")
    with pytest.raises(human_eval.HumanEvalError, match="plain is not a human-evaluation study"):
        human_eval.results_for(create_study("plain", form={"fields": []}))
