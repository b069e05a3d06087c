"""Validating a judge against several human raters: Fleiss' kappa over judge and people, pairwise
Cohen's kappa and percent agreement, from files or from verdicts people recorded."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from evaluation.judges import validation
from evaluation.models import EvaluationRun, HumanVerdict, Judgment, Prediction
from tests.eval_support import frozen_version

# judge, h1, h2 on a..d (True: correct):  a T T T | b T T F | c F F F | d F T F
JUDGED = {"a": {"correct": True}, "b": {"correct": True}, "c": {"correct": False}, "d": {"correct": False},
          "e": {"unparsed": True}}
H1 = {"a": "correct", "b": "correct", "c": "incorrect", "d": "correct", "e": "correct", "f": "correct"}
H2 = {"a": True, "b": "incorrect", "c": "incorrect", "d": "incorrect", "e": "incorrect"}


def check_hand_computed(report):
    # per answer (correct, incorrect) counts: (3,0) (2,1) (0,3) (1,2); P_i = 1, 1/3, 1, 1/3 → P̄ = 2/3;
    # p(correct) = 6/12 → P_e = 1/2; kappa = (2/3 − 1/2) / (1 − 1/2) = 1/3
    assert report.n == 4
    assert report.fleiss_kappa == pytest.approx(1 / 3)
    pairs = {tuple(p.raters): p for p in report.pairs}
    # judge–h1: 3/4 agree; p_e = 1/2·3/4 + 1/2·1/4 = 1/2 → kappa 1/2
    assert pairs[("judge", "h1")].percent_agreement == 75
    assert pairs[("judge", "h1")].cohens_kappa == pytest.approx(0.5)
    # judge–h2: 3/4 agree; p_e = 1/2·1/4 + 1/2·3/4 = 1/2 → kappa 1/2
    assert pairs[("judge", "h2")].cohens_kappa == pytest.approx(0.5)
    # h1–h2: 2/4 agree; p_e = 3/4·1/4 + 1/4·3/4 = 3/8 → kappa (1/2 − 3/8) / (5/8) = 1/5
    assert pairs[("h1", "h2")].percent_agreement == 50
    assert pairs[("h1", "h2")].cohens_kappa == pytest.approx(0.2)


def test_fleiss_and_pairwise_kappa_against_hand_computed_values():
    report = validation.validation_report("maia", JUDGED, {"h1": H1, "h2": H2})
    check_hand_computed(report)
    assert report.raters == ["judge", "h1", "h2"]
    assert report.labelled == {"judge": 4, "h1": 6, "h2": 5}  # the unparsed verdict is no label


def test_bad_rater_input_is_refused():
    with pytest.raises(validation.ValidationInputError, match="at least 2 human raters"):
        validation.validation_report("maia", JUDGED, {"h1": H1})
    with pytest.raises(validation.ValidationInputError, match="h2, verdict for 'a'"):
        validation.validation_report("maia", JUDGED, {"h1": H1, "h2": {"a": "maybe"}})
    with pytest.raises(validation.ValidationInputError, match="names the judge"):
        validation.validation_report("maia", JUDGED, {"h1": H1, "judge": H2})


def test_no_shared_answers_leaves_kappa_undefined_with_a_reason():
    report = validation.validation_report("maia", JUDGED, {"h1": {"x": "correct"}, "h2": H2})
    assert report.n == 0 and report.fleiss_kappa is None and report.kappa_reason


def maia_run(label="jv-1"):
    payload = {"kind": "question", "video": "video1", "category": "Sentiment_A", "question": "Che cosa fa?",
               "answers": [f"Taglia pomodori {n}." for n in range(8)]}
    version = frozen_version("maia", label, [("q1", payload, {})])
    run = EvaluationRun.objects.create(version=version, model_id="org/vlm", backend="openai", variants=["oeqa"],
                                       input_strategy="text_only")
    item = version.items.get()
    predictions = {}
    for key in "abcde":
        predictions[key] = Prediction.objects.create(run=run, request_id=key, item=item, variant="oeqa", prompt=[],
                                                     raw_output=f"answer {key}")
        verdict = JUDGED[key]
        Judgment.objects.create(prediction=predictions[key], kind="maia", judge_model="judge-test",
                                judge_backend="openai", prompt=[], raw_verdict="v", verdict=verdict,
                                parse_status="unparsed" if "unparsed" in verdict else "ok")
    return run, predictions


@pytest.mark.django_db
def test_stored_verdicts_of_two_people_validate_the_judge(django_user_model):
    run, predictions = maia_run()
    h1 = django_user_model.objects.create_user("h1")
    h2 = django_user_model.objects.create_user("h2")
    # earlier verdicts the people replaced: h2 first called b correct; h1 withdrew a verdict on c, then gave one
    HumanVerdict.objects.create(prediction=predictions["b"], kind="maia", label="correct", answer="answer b",
                                given_by=h2)
    HumanVerdict.objects.create(prediction=predictions["c"], kind="maia", label="", answer="answer c", given_by=h1)
    for user, given in ((h1, H1), (h2, H2)):
        for key, label in given.items():
            if key in predictions:
                label = label if isinstance(label, str) else "correct"
                HumanVerdict.objects.create(prediction=predictions[key], kind="maia", label=label,
                                            answer=predictions[key].raw_output, given_by=user)
    # a third person's verdict on an answer that read differently when they gave it does not count
    other = django_user_model.objects.create_user("h3")
    HumanVerdict.objects.create(prediction=predictions["a"], kind="maia", label="correct", answer="older text",
                                given_by=other)
    report = validation.run_validation(run, "maia", "judge-test")
    check_hand_computed(report)


@pytest.mark.django_db
def test_judge_validation_command_reads_one_file_per_rater(tmp_path):
    run, _ = maia_run("jv-2")
    files = []
    for name, given in (("h1", H1), ("h2", H2)):
        path = tmp_path / f"{name}.jsonl"
        path.write_text("".join(json.dumps({"request_id": k, "label": v}) + "\n" for k, v in given.items()))
        files.append(str(path))
    out = StringIO()
    call_command("judge_validation", run=run.pk, kind="maia", judge_model="judge-test", human=files, stdout=out)
    lines = out.getvalue().splitlines()
    assert "on 4 answers all labelled: Fleiss' kappa 0.333" in lines[0]
    assert json.loads(lines[1])["fleiss_kappa"] == pytest.approx(1 / 3)
    with pytest.raises(CommandError, match="at least 2 human raters"):
        call_command("judge_validation", run=run.pk, kind="maia", judge_model="judge-test", human=files[:1])
    with pytest.raises(CommandError, match="rater 'h1'"):
        call_command("judge_validation", run=run.pk, kind="maia", judge_model="judge-test",
                     human=[files[0], files[0]])
    with pytest.raises(CommandError, match="Cannot read"):
        call_command("judge_validation", run=run.pk, kind="maia", judge_model="judge-test",
                     human=[files[0], str(tmp_path / "missing.jsonl")])
    with pytest.raises(CommandError, match="no run"):
        call_command("judge_validation", run=run.pk + 100, kind="maia", judge_model="judge-test", human=files)
