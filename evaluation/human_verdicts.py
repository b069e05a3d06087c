"""People's own verdicts on judged answers, and how well the LLM judge agrees with them (seeds/003
App. E: the judge's alignment with human judgement; SPEC "What the papers also did").

What "both judged the same answer" means here: a person and the judge labelled the very same stored
answer, with the judge kind's labels (CVRR-ES and MAIA: correct / incorrect; NL-EYE: 0, 1, 2):
- a model's answer: one `Prediction` (its request and sample), judged by the run's stored judgments
  (`evaluation.judges.judge_run`) of one judge model;
- a person's answer in a human-baseline study with open-ended questions: one `Submission`, judged by
  its stored `HumanAnswerJudgment` rows (`evaluation.human_eval.answer_judgments`).
A curator or researcher records their verdict on an answer from a run's drill-down page or from the
page of people's answers (`record`, `manage.py human_eval verdicts`); the person sees the question, the
reference answer and the answer, and may also see the judge's verdict. Recording is insert-only: an
answer's current verdict is its latest `HumanVerdict` row (any person's; an empty label withdraws it),
and the earlier ones stay as history. A verdict on a submission counts only while the answer reads
as it did when the verdict was given (a reviewer's correction makes it stale).

`agreements(version)`: for every run of the version with stored judgments and for the version's judged
human baselines, the agreement of the judge model that judged most of those answers (the one the
leaderboard uses) with the current human verdicts: `judges.agreement_report` (n, accuracy, Cohen's
kappa, confusion, human-labelled answers the judge has not judged, and judged ones whose verdict has
no label). The judge's verdicts on the same answers are never changed by the people's.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import Count, Max

from annotation.crowd.models import Submission
from config.roles import ADMIN, CURATOR, RESEARCHER, has_role
from evaluation import human_eval, judges, runner
from evaluation.models import EvaluationRun, HumanVerdict, Judgment, Prediction

GIVERS = (CURATOR, RESEARCHER, ADMIN)
NOTE_LIMIT = 2000


class VerdictError(ValidationError):
    """A verdict that cannot be recorded as asked."""


def may_give(user) -> bool:
    return has_role(user, *GIVERS)


def require_giver(user) -> None:
    if not has_role(user, *GIVERS):
        raise PermissionDenied("Only curators, researchers and admins record verdicts on answers.")


def kind_for(version) -> str:
    """The judge kind whose labels people use on this version's answers ('' when its benchmark has none
    with human labels)."""
    name = judges.kind_for_benchmark(version.benchmark.slug)
    return name if name and judges.get_kind(name).human_labels else ""


def labels_for(version) -> tuple[str, ...]:
    name = kind_for(version)
    return judges.get_kind(name).human_labels if name else ()


def _label(version, label: str) -> tuple[str, str]:
    name = kind_for(version)
    if not name:
        raise VerdictError(f"{version.benchmark.slug} has no judge whose verdicts people can check.")
    label = str(label or "").strip().lower()
    allowed = judges.get_kind(name).human_labels
    if label and label not in allowed:
        raise VerdictError(f"A {name} verdict is one of {', '.join(allowed)} (got {label!r}).")
    return name, label


def _note(note: str) -> str:
    note = str(note or "").strip()
    if len(note) > NOTE_LIMIT:
        raise VerdictError(f"The note is longer than {NOTE_LIMIT} characters.")
    return note


def record_on_prediction(user, prediction: Prediction, label: str, note: str = "") -> HumanVerdict:
    """Record `label` ('' withdraws) as the person's verdict on a model's answer. The answer must be one
    the benchmark's judge judges (a successful prediction of a request the judge applies to)."""
    require_giver(user)
    version = prediction.run.version
    name, label = _label(version, label)
    note = _note(note)
    if prediction.error or not prediction.raw_output.strip():
        raise VerdictError(f"Prediction {prediction.pk} has no answer to judge.")
    request = next((planned.request for planned in runner.plan(prediction.run)
                    if planned.request.request_id == prediction.request_id), None)
    if request is None or not judges.get_kind(name).applies(request):
        raise VerdictError(f"The {name} judge does not judge the answers of {prediction.request_id}.")
    return HumanVerdict.objects.create(prediction=prediction, kind=name, label=label, answer=prediction.raw_output,
                                       note=note, given_by=user)


def human_answer(submission_pk: int) -> human_eval.HumanAnswer | None:
    """A counted answer of a judged human-baseline study (None when the submission is not one)."""
    submission = Submission.objects.select_related("claim__study").filter(pk=submission_pk).first()
    if submission is None or not human_eval.judge_kind_of(submission.claim.study):
        return None
    found = [a for a in human_eval.answers_of([submission.claim.study]) if a.submission.pk == submission.pk]
    return found[0] if found else None


def record_on_answer(user, answer: human_eval.HumanAnswer, label: str, note: str = "") -> HumanVerdict:
    """Record `label` ('' withdraws) as the person's verdict on a person's baseline answer."""
    require_giver(user)
    name, label = _label(human_eval.version_of(answer.study), label)
    return HumanVerdict.objects.create(submission=answer.submission, kind=name, label=label, answer=answer.text,
                                       note=_note(note), given_by=user)


def current_on_predictions(predictions) -> dict[int, HumanVerdict]:
    """prediction pk → its latest verdict row (a withdrawal included)."""
    found: dict[int, HumanVerdict] = {}
    rows = (HumanVerdict.objects.filter(prediction__in=list(predictions)).select_related("given_by")
            .order_by("prediction_id", "-given_at", "-pk"))
    for row in rows:
        found.setdefault(row.prediction_id, row)
    return found


def current_on_submissions(submissions) -> dict[int, HumanVerdict]:
    """submission pk → its latest verdict row (a withdrawal included)."""
    found: dict[int, HumanVerdict] = {}
    rows = (HumanVerdict.objects.filter(submission__in=list(submissions)).select_related("given_by")
            .order_by("submission_id", "-given_at", "-pk"))
    for row in rows:
        found.setdefault(row.submission_id, row)
    return found


@dataclass
class AnswerRow:
    """A person's baseline answer as the people's-answers page shows it."""

    answer: human_eval.HumanAnswer
    judge_verdict: dict | None  # by the judge model the Human row is scored with (None: not judged)
    human: HumanVerdict | None  # the current verdict row people gave (a withdrawal included)

    @property
    def current_human(self) -> HumanVerdict | None:
        """The current verdict when it was given on the answer as it reads now."""
        return self.human if self.human is not None and self.human.answer == self.answer.text else None


def answer_rows(version) -> tuple[list[AnswerRow], dict | None]:
    """Every counted answer of the version's judged human baselines (in request order), with the judge's
    verdict and the people's; and the judge model used (`human_eval.chosen_judge`)."""
    studies = human_eval.judged_studies(version)
    if not studies:
        return [], None
    answers = human_eval.answers_of(studies)
    kind = human_eval.judge_kind_of(studies[0])
    used = human_eval.chosen_judge(studies, kind)
    verdicts = human_eval.answer_verdicts(studies, kind, used["model"], answers) if used else {}
    people = current_on_submissions([answer.submission.pk for answer in answers])
    rows = [AnswerRow(answer, verdicts.get(answer.submission.pk), people.get(answer.submission.pk))
            for answer in answers]
    rows.sort(key=lambda row: (row.answer.request.request_id, row.answer.submission.pk))
    return rows, used


# --- Agreement -------------------------------------------------------------------------------------

@dataclass
class AgreementRow:
    label: str  # what was judged: a run's label, or "Human (crowd)"
    judge_model: str
    report: judges.AgreementReport
    run: EvaluationRun | None = None
    studies: tuple[str, ...] = ()


def run_verdicts(run: EvaluationRun) -> dict[tuple[str, int], str]:
    """(request id, sample) → the current human label of each of the run's labelled predictions."""
    predictions = Prediction.objects.filter(run=run, human_verdicts__isnull=False).distinct()
    return {(row.prediction.request_id, row.prediction.sample_index): row.label
            for row in current_on_predictions(predictions).values()
            if row.label and row.answer == row.prediction.raw_output}


def run_judge(run: EvaluationRun, kind: str) -> str:
    top = (Judgment.objects.filter(prediction__run=run, kind=kind).exclude(parse_status=judges.FAILED)
           .values("judge_model").annotate(n=Count("id"), last=Max("id")).order_by("-n", "-last").first())
    return top["judge_model"] if top else ""


def run_agreement(run: EvaluationRun, kind: str = "") -> AgreementRow | None:
    """The run's most used judge model against the people's verdicts on its predictions (None when
    either is missing)."""
    kind = kind or kind_for(run.version)
    model = run_judge(run, kind) if kind else ""
    human = run_verdicts(run) if model else {}
    if not human:
        return None
    return AgreementRow(f"#{run.pk} {run.model_id}", model, judges.run_agreement(run, kind, model, human), run=run)


def baseline_agreement(studies, kind: str = "") -> AgreementRow | None:
    """The judge model that judged most of the people's answers against the people's verdicts on them."""
    studies = list(studies)
    kind = kind or (human_eval.judge_kind_of(studies[0]) if studies else "")
    used = human_eval.chosen_judge(studies, kind) if kind else None
    if used is None:
        return None
    answers = human_eval.answers_of(studies)
    texts = {answer.submission.pk: answer.text for answer in answers}
    human = {f"submission:{pk}": row.label for pk, row in current_on_submissions(list(texts)).items()
             if row.label and row.answer == texts[pk]}
    if not human:
        return None
    verdicts = human_eval.answer_verdicts(studies, kind, used["model"], answers)
    judged = {f"submission:{pk}": verdict for pk, verdict in verdicts.items()}
    return AgreementRow("Human (crowd)", used["model"], judges.agreement_report(kind, judged, human),
                        studies=tuple(study.slug for study in studies))


def agreements(version) -> list[AgreementRow]:
    """The judge against people's verdicts, per run of the version and for its judged human baselines."""
    kind = kind_for(version)
    if not kind:
        return []
    rows = [row for run in version.runs.order_by("pk") if (row := run_agreement(run, kind)) is not None]
    studies = human_eval.judged_studies(version)
    found = baseline_agreement(studies, kind) if studies else None
    return rows + ([found] if found is not None else [])
