"""CVRR-ES human baseline (seeds/003 Table 2, the human column; App. E, the judge against people):
people answer the open-ended questions in free text from the video, the benchmark's own judge scores
their answers exactly as it scores a model's (stored verdicts with provenance; here the tiny causal LM
with `choices` decoding, so every verdict reads), the leaderboard's Human row carries the judged
metrics, and people's own verdicts on answers give the judge's agreement with them."""

import json
from collections import Counter, defaultdict
from io import StringIO

import pytest
from django.core.cache import cache
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotation.crowd import assignment, submissions
from annotation.crowd.errors import InvalidSubmission
from annotation.crowd.models import Study, Submission
from config.roles import ANNOTATOR
from evaluation import human_eval, human_verdicts, judges
from evaluation.human_eval.human_baselines import FREE_INSTRUCTIONS
from evaluation.models import EvaluationRun, HumanAnswerJudgment, HumanVerdict, Prediction
from evaluation.result_actions import HUMAN_JUDGE_JOB
from generation import jobs
from generation.models import Job
from tests.conftest import logged_in_api, logged_in_client, make_user
from tests.eval_support import frozen_version

pytestmark = pytest.mark.django_db

PARTIAL, SOCIAL = "partial_actions", "interpretation_of_social_context"
QUESTIONS = {  # item → (dimension, question, reference answer)
    "q1": (PARTIAL, "Does the cyclist land the jump?", "No, the video ends while the cyclist is in the air."),
    "q2": (PARTIAL, "What does the cyclist do first?", "The cyclist rides towards the ramp."),
    "q3": (SOCIAL, "Why do the people clap?", "They applaud the cyclist's jump."),
}
ANSWERS = {  # worker → item → answer
    "w1": {"q1": "No, it stops mid-air.", "q2": "Rides to the ramp.", "q3": "They cheer for the jump."},
    "w2": {"q1": "Yes, he lands safely.", "q2": "He rides towards the ramp.", "q3": "Because of the jump."},
    "w3": {"q1": "We never see a landing.", "q2": "He falls over.", "q3": "They are cold."},
}


@pytest.fixture(autouse=True)
def _empty_cache():
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def version(video):
    items = [(qid, {"kind": "qa", "dimension": dimension, "video_id": f"v-{qid}", "question": question,
                    "answer": answer}, {"video": video}) for qid, (dimension, question, answer) in QUESTIONS.items()]
    return frozen_version("cvrr", "h1", items)


@pytest.fixture
def workers(db) -> dict:
    return {name: make_user(name, ANNOTATOR) for name in ANSWERS}


@pytest.fixture
def judge_model(tiny_models_dir, tiny_registry) -> str:
    return str(tiny_models_dir / "causal-lm")


def answer_all(study: Study, workers: dict) -> None:
    for name, worker in workers.items():
        while (claim := assignment.claim_next(study, worker)) is not None:
            item_id = claim.item.external_id.split(":")[0]
            submissions.submit(claim, worker, {"answer": ANSWERS[name][item_id]})


@pytest.fixture
def answered(version, curator, workers):
    made = human_eval.create_human_baseline_study(version, curator=curator, k=3)
    answer_all(made.study, workers)
    return made.study


def expected_metrics(study: Study, judge_model: str) -> dict:
    """The Human row's figures computed here from the stored verdicts: each request's majority label
    over its three annotators (no tie is possible), then correct / judged per dimension and its mean."""
    labels: dict[str, list] = defaultdict(list)
    scores: dict[str, dict] = {}
    for row in (HumanAnswerJudgment.objects.filter(study=study, judge_model=judge_model)
                .order_by("submission__submitted_at", "submission_id")):
        labels[row.request_id].append(row.verdict["pred"])
        scores.setdefault(row.request_id, {}).setdefault(row.verdict["pred"], row.verdict["score"])
    by_dimension: dict[str, list] = defaultdict(list)
    for request_id, given in labels.items():
        majority = Counter(given).most_common(1)[0][0]
        by_dimension[QUESTIONS[request_id.split(":")[0]][0]].append((majority, scores[request_id][majority]))
    accuracy = {name: sum(label == "correct" for label, _ in found) / len(found)
                for name, found in by_dimension.items()}
    mean_score = {name: sum(score for _, score in found) / len(found) for name, found in by_dimension.items()}
    return {"dimensions": accuracy, "accuracy": sum(accuracy.values()) / len(accuracy),
            "mean_score": sum(mean_score.values()) / len(mean_score), "dimension_scores": mean_score}


# --- The study: free-text answers from the video ---------------------------------------------------

def test_a_baseline_of_open_ended_questions_asks_for_free_text_with_the_video(version, curator, workers, video):
    made = human_eval.create_human_baseline_study(version, curator=curator, k=3)
    study = made.study
    assert human_eval.judge_kind_of(study) == "cvrr" and human_eval.judged_studies(version) == [study]
    assert study.instructions == FREE_INSTRUCTIONS
    (field,) = study.form_schema["fields"]
    assert (field["name"], field["type"], field["min_length"], field["max_length"]) == ("answer", "free_text", 2, 1000)
    items = {item.external_id: item for item in study.items.all()}
    assert sorted(items) == ["q1:qa", "q2:qa", "q3:qa"]
    for external_id, item in items.items():
        assert item.video == video and "choices" not in item.payload
        assert item.payload["question"] == QUESTIONS[external_id.split(":")[0]][1]
        assert QUESTIONS[external_id.split(":")[0]][2] not in json.dumps(item.payload)  # the reference stays hidden

    # the task page shows the video, the question and a text answer with its limit
    page = logged_in_client(workers["w1"]).post(reverse("crowd-work", kwargs={"slug": study.slug}),
                                                follow=True).content.decode()
    assert "<video" in page and 'maxlength="1000"' in page and "at least 2" in page
    assert any(question in page for _, question, _ in QUESTIONS.values())

    # answers are checked on the server: empty, too short, too long are refused with the reason
    api = logged_in_api(workers["w2"])
    claim = api.post(f"/api/studies/{study.slug}/claim/").json()
    for text, reason in (("  ", "write at least 2 characters"), ("x", "write at least 2 characters"),
                         ("a" * 1001, "write at most 1000 characters")):
        response = api.post(f"/api/claims/{claim['id']}/submit/", {"data": {"answer": text}}, format="json")
        assert response.status_code == 400 and reason in json.dumps(response.json()), response.json()
    assert not Submission.objects.exists()
    good = api.post(f"/api/claims/{claim['id']}/submit/", {"data": {"answer": "  No, it stops mid-air. "}},
                    format="json")
    assert good.status_code in (200, 201)
    assert Submission.objects.get().data == {"answer": "No, it stops mid-air."}
    with pytest.raises(InvalidSubmission):
        submissions.submit(assignment.claim_next(study, workers["w3"]), workers["w3"], {"answer": ""})


def test_open_ended_requests_are_not_mixed_with_choices(curator, video):
    def question(number: int) -> dict:
        return {"kind": "question", "video": "video1", "category": "Sentiment_A", "question": f"Domanda {number}?",
                "answers": [f"Risposta {i}" for i in range(8)],
                "true_statements": [f"Vero {number}.{i}" for i in range(8)],
                "false_statements": [f"Falso {number}.{i}" for i in range(8)]}

    maia = frozen_version("maia", "m1", [("q1", question(1), {"video": video})])
    with pytest.raises(human_eval.HumanEvalError, match="mix choices and free-text answers"):
        human_eval.create_human_baseline_study(maia, curator=curator)
    # MAIA's open answers alone are judged by its own judge
    made = human_eval.create_human_baseline_study(maia, ("oevqa",), curator=curator)
    assert human_eval.judge_kind_of(made.study) == "maia"
    assert made.study.form_schema["fields"][0]["type"] == "free_text"
    assert Study.objects.count() == 1


# --- Judged like a model's answers, and the Human row ----------------------------------------------

def test_people_s_answers_are_judged_with_provenance_and_fill_the_human_row(answered, version, judge_model,
                                                                            researcher_client):
    waiting = human_eval.human_baseline_results(answered)
    assert waiting["judge"] is None and waiting["unjudged_answers"] == 9
    not_computed = waiting["metrics"]["accuracy"]  # no verdict yet: not computed, never 0
    assert not_computed["computed"] is False and "3 of 3 answered responses have no" in not_computed["reason"]

    spec = judges.judge_spec(judge_model)
    stats = human_eval.judge_answers([answered], spec, decoding=judges.CHOICES, batch_size=4)
    assert (stats.responses, stats.calls, stats.ok, stats.unparsed, stats.failed) == (9, 9, 9, 0, 0)
    rows = list(HumanAnswerJudgment.objects.filter(study=answered).select_related("submission__claim__item"))
    assert len(rows) == 9
    allowed = judges.KINDS["cvrr"].answer_choices
    for row in rows:
        assert (row.kind, row.judge_model, row.judge_backend) == ("cvrr", judge_model, "causal_lm")
        assert row.judge_revision and row.params["decoding"] == "choices"
        assert row.raw_verdict in allowed and row.parse_status == "ok"
        assert row.answer == row.submission.data["answer"]
        assert row.request_id == row.submission.claim.item.external_id
        user_text = row.prompt[1]["content"][0]["text"]
        assert row.answer in user_text and QUESTIONS[row.request_id.split(":")[0]][2] in user_text
        assert row.verdict["pred"] in ("correct", "incorrect") and 0 <= row.verdict["score"] <= 5

    again = human_eval.judge_answers([answered], spec, decoding=judges.CHOICES)
    assert (again.calls, again.skipped) == (0, 9)  # resumable: judged answers are skipped
    with pytest.raises(judges.JudgeError, match="choices decoding"):
        human_eval.judge_answers([answered], spec, decoding=judges.FREE)

    found = human_eval.human_baseline_results(answered)
    expected = expected_metrics(answered, judge_model)
    metrics = found["metrics"]
    assert found["judge"] == {"kind": "cvrr", "model": judge_model, "judgments": 9, "decoding": "choices",
                              "verdicts": 9}
    assert found["unjudged_answers"] == 0 and found["scored"] == 3
    for dimension, accuracy in expected["dimensions"].items():
        assert metrics["dimensions"][dimension]["accuracy"] == pytest.approx(accuracy)
        assert metrics["dimensions"][dimension]["mean_score"] == pytest.approx(expected["dimension_scores"][dimension])
    assert metrics["accuracy"] == pytest.approx(expected["accuracy"])
    assert metrics["mean_score"] == pytest.approx(expected["mean_score"])
    pooled = [row.verdict["pred"] == "correct" for row in rows]
    assert found["per_annotator"]["pooled_accuracy"] == pytest.approx(sum(pooled) / len(pooled))
    assert found["per_annotator"]["annotators"] == 3

    EvaluationRun.objects.create(version=version, model_id="org/vlm", status=EvaluationRun.Status.SUCCEEDED)
    html = researcher_client.get(reverse("results-version", args=[version.pk])).content.decode()
    row = html.split('<tr class="human-row" data-human="baseline">')[1].split("</tr>")[0]
    assert "Human (crowd)" in row and "3 annotators · 3 of 3 requests answered" in row
    assert "majority verdict of the cvrr judge" in row
    shown = row.split('data-metric="accuracy">')[1].split("</td>")[0]
    assert f"{100 * expected['accuracy']:.1f}%" in shown
    score = row.split('data-metric="mean_score">')[1].split("</td>")[0]
    assert f"{expected['mean_score']:.3f}" in score
    for dimension, accuracy in expected["dimensions"].items():  # people's accuracy per dimension
        shown = html.split(f'data-metric="dimensions.{dimension}.accuracy">')[1].split("</td>")[0]
        assert f"{100 * accuracy:.1f}%" in shown
    assert "data-human-judge" in html and reverse("results-human-answers", args=[version.pk]) in html


def test_the_judge_of_people_s_answers_starts_from_the_results_page_and_the_cli(answered, version, judge_model,
                                                                              researcher_client):
    url = reverse("results-version-human-judge", args=[version.pk])
    page = researcher_client.get(reverse("results-version", args=[version.pk])).content.decode()
    assert 'id="human-judge-form"' in page and url in page
    refused = researcher_client.post(url, {"kind": "maia", "model": judge_model})
    assert refused.status_code == 400 and "does not support the judge of people" in refused.content.decode()
    assert researcher_client.post(url, {"kind": "cvrr", "model": judge_model, "decoding": "beam"}).status_code == 400
    assert not Job.objects.filter(kind=HUMAN_JUDGE_JOB).exists()

    response = researcher_client.post(url, {"kind": "cvrr", "model": judge_model, "decoding": "choices"})
    assert response.status_code == 302
    job = jobs.run_job(Job.objects.get(kind=HUMAN_JUDGE_JOB).pk)
    assert job.status == Job.Status.SUCCEEDED and job.progress == 100, job.message
    assert HumanAnswerJudgment.objects.filter(study=answered, judge_model=judge_model).count() == 9

    out = StringIO()
    call_command("human_eval", "judge", "--study", answered.slug, "--judge-model", judge_model,
                 "--decoding", "choices", stdout=out)
    assert "9 answers, 0 judge calls" in out.getvalue() and "9 judged before" in out.getvalue()
    with pytest.raises(CommandError, match="No study"):
        call_command("human_eval", "judge", "--study", "no-such-study", "--judge-model", judge_model)
    assert HumanAnswerJudgment.objects.count() == 9


def test_an_answer_corrected_by_a_reviewer_is_judged_again(answered, judge_model, curator):
    spec = judges.judge_spec(judge_model)
    human_eval.judge_answers([answered], spec, decoding=judges.CHOICES)
    submission = Submission.objects.filter(claim__study=answered).order_by("pk").first()
    submission.reviewed_data = {"answer": "It is cut off before any landing."}
    submission.save(update_fields=["reviewed_data"])
    found = human_eval.human_baseline_results(answered)
    assert found["unjudged_answers"] == 1 and found["judge"]["verdicts"] == 8  # the stale verdict does not count
    stats = human_eval.judge_answers([answered], spec, decoding=judges.CHOICES)
    assert (stats.calls, stats.skipped) == (1, 8)
    row = HumanAnswerJudgment.objects.get(submission=submission)
    assert row.answer == "It is cut off before any landing." and HumanAnswerJudgment.objects.count() == 9


# --- People's own verdicts and the judge's agreement with them ---------------------------------------

def judge_label(submission_pk: int) -> str:
    return HumanAnswerJudgment.objects.get(submission_id=submission_pk).verdict["pred"]


def opposite(label: str) -> str:
    return "incorrect" if label == "correct" else "correct"


def test_people_s_verdicts_on_human_and_model_answers_give_the_judge_s_agreement(
        answered, version, judge_model, researcher_client, curator, annotator):
    spec = judges.judge_spec(judge_model)
    human_eval.judge_answers([answered], spec, decoding=judges.CHOICES)
    run = EvaluationRun.objects.create(version=version, model_id="org/vlm", status=EvaluationRun.Status.SUCCEEDED)
    items = {item.external_id: item for item in version.items.all()}
    predictions = {qid: Prediction.objects.create(run=run, request_id=f"{qid}:qa", item=items[qid], variant="qa",
                                                  prompt=[], raw_output=text)
                   for qid, text in (("q1", "It lands."), ("q2", "He rides to the ramp."), ("q3", "Applause."))}
    empty = Prediction.objects.create(run=run, request_id="q3:qa", sample_index=1, item=items["q3"], variant="qa",
                                      prompt=[], raw_output=" ")
    judges.judge_run(run, "cvrr", spec, decoding=judges.CHOICES)

    # the people's answers page: every answer with the judge's verdict and a verdict form
    answers_url = reverse("results-human-answers", args=[version.pk])
    curator_client = logged_in_client(curator)
    page = curator_client.get(answers_url).content.decode()
    assert page.count('data-verdict-for="submission-') == 9 and page.count("data-judge-verdict") == 9
    assert logged_in_client(annotator).get(answers_url).status_code == 403

    subs = list(Submission.objects.filter(claim__study=answered).order_by("pk"))
    agree, disagree, withdrawn = subs[0], subs[1], subs[2]
    verdict_url = reverse("human-answer-verdict", args=[agree.pk])
    response = curator_client.post(verdict_url, {"label": judge_label(agree.pk), "next": answers_url})
    assert response.status_code == 302 and response["Location"] == answers_url
    curator_client.post(reverse("human-answer-verdict", args=[disagree.pk]),
                        {"label": opposite(judge_label(disagree.pk))})
    curator_client.post(reverse("human-answer-verdict", args=[withdrawn.pk]), {"label": "correct"})
    curator_client.post(reverse("human-answer-verdict", args=[withdrawn.pk]), {"label": ""})  # withdrawn again
    bad = curator_client.post(reverse("human-answer-verdict", args=[agree.pk]), {"label": "partially correct"})
    assert bad.status_code == 400 and "one of correct, incorrect" in bad.content.decode()
    assert logged_in_client(annotator).post(verdict_url, {"label": "correct"}).status_code == 403
    assert HumanVerdict.objects.filter(submission__isnull=False).count() == 4  # insert-only history

    # model answers: verdicts from the run's drill-down
    drill = researcher_client.get(reverse("results-drill", args=[run.pk, "accuracy"])).content.decode()
    assert f'data-verdict-for="prediction-{predictions["q1"].pk}"' in drill
    assert f'data-verdict-for="prediction-{empty.pk}"' not in drill  # an empty answer has nothing to judge
    judged = {qid: p.judgments.get().verdict["pred"] for qid, p in predictions.items()}
    for qid, label in (("q1", judged["q1"]), ("q2", judged["q2"]), ("q3", opposite(judged["q3"]))):
        researcher_client.post(reverse("prediction-human-verdict", args=[predictions[qid].pk]), {"label": label})
    refused = researcher_client.post(reverse("prediction-human-verdict", args=[empty.pk]), {"label": "correct"})
    assert refused.status_code == 400 and "has no answer to judge" in refused.content.decode()

    found = {row.label: row for row in human_verdicts.agreements(version)}
    people = found["Human (crowd)"].report
    assert (people.n, people.accuracy, people.human_items, people.not_judged) == (2, 0.5, 2, 0)
    model = found[f"#{run.pk} org/vlm"].report
    assert (model.n, model.accuracy) == (3, pytest.approx(2 / 3))
    assert found[f"#{run.pk} org/vlm"].judge_model == judge_model

    page = researcher_client.get(reverse("results-version", args=[version.pk])).content.decode()
    table = page.split('id="judge-agreement"')[1].split("</section>")[0]
    people_row = table.split('data-agreement="people"')[1].split("</tr>")[0]
    assert "<td data-n>2</td>" in people_row and "<td data-accuracy>0.500</td>" in people_row
    run_row = table.split(f'data-agreement-run="{run.pk}"')[1].split("</tr>")[0]
    assert "<td data-n>3</td>" in run_row and "<td data-accuracy>0.667</td>" in run_row

    out = StringIO()
    call_command("human_eval", "agreement", "--benchmark", "cvrr", "--version", "h1", stdout=out)
    reported = {row["answers"]: row for row in json.loads(out.getvalue())}
    assert reported["Human (crowd)"]["n"] == 2 and reported["Human (crowd)"]["accuracy"] == 0.5


def test_verdicts_recorded_from_a_file_all_or_nothing(answered, version, judge_model, curator, tmp_path):
    human_eval.judge_answers([answered], judges.judge_spec(judge_model), decoding=judges.CHOICES)
    first, second = Submission.objects.filter(claim__study=answered).order_by("pk")[:2]
    path = tmp_path / "verdicts.jsonl"
    path.write_text(json.dumps({"submission": first.pk, "label": "correct"}) + "\n"
                    + json.dumps({"submission": second.pk, "label": "maybe"}) + "\n")
    with pytest.raises(CommandError, match="line 2: A cvrr verdict is one of correct, incorrect"):
        call_command("human_eval", "verdicts", "--file", str(path), "--user", curator.username)
    assert not HumanVerdict.objects.exists()
    path.write_text(json.dumps({"submission": first.pk, "label": judge_label(first.pk)}) + "\n"
                    + json.dumps({"submission": second.pk, "label": judge_label(second.pk), "note": "ok"}) + "\n")
    out = StringIO()
    call_command("human_eval", "verdicts", "--file", str(path), "--user", curator.username, stdout=out)
    assert "Recorded 2 verdict(s)." in out.getvalue()
    report = human_verdicts.baseline_agreement([answered]).report
    assert (report.n, report.accuracy) == (2, 1.0)
