"""People's free-text baseline answers judged by the benchmark's LLM judge, exactly as model predictions
are (`evaluation.judges`): the same judge kind, prompt, decoding, response cache and provenance, one
stored `HumanAnswerJudgment` per (submission, judge kind, judge model, reference key).

Which answers: the counted submissions (approved or not sampled for review; see the package
docstring) of human-baseline studies whose record names a judge kind (`JUDGE_KIND`, set when a study
asks open-ended requests), read through `final_data`. Judging is resumable: an answer already judged
by this judge model (ok or unparsed) on the same text is skipped; failed calls and answers a reviewer
corrected since are judged again and their rows replaced.

`answer_verdicts(studies, kind, model)`: submission id → the scorer's verdict, for every answer whose
cases all have a current judgment; `chosen_judge(studies, kind)`: the judge model that judged most
of them (the one the Human row is scored with, as a run's row uses its most used judge model).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from django.db import transaction

from annotation.crowd.models import Study, Submission
from annotation.models import BenchmarkVersion
from evaluation import judges, runner
from evaluation.benchmarks.base import EvalRequest
from evaluation.human_eval.base import (
    ANSWER,
    BASELINE,
    HumanEvalError,
    _plan,
    _source,
    counted_submissions,
    meta_of,
    studies_of,
)
from evaluation.models import HumanAnswerJudgment

JUDGE_KIND = "judge_kind"  # a baseline study's record: the judge kind that scores its free-text answers
FREE_TYPES = ("free",)


@dataclass
class HumanAnswer:
    """One person's counted answer to one request of a baseline study."""

    submission: Submission
    study: Study
    request: EvalRequest
    text: str


def judge_kind_of(study: Study) -> str:
    return str(meta_of(study).get(JUDGE_KIND) or "")


def version_of(study: Study) -> BenchmarkVersion:
    """The frozen version a human-evaluation study was made on."""
    return BenchmarkVersion.objects.select_related("benchmark").get(pk=meta_of(study)["version"])


def judged_studies(version: BenchmarkVersion) -> list[Study]:
    """The version's human-baseline studies whose answers a judge scores."""
    return [study for study in studies_of(BASELINE, version=version) if judge_kind_of(study)]


def _one_kind(studies: list[Study], kind: str = "") -> str:
    kinds = {judge_kind_of(study) for study in studies}
    if "" in kinds:
        raise HumanEvalError("Only the answers of baseline studies with open-ended questions are judged; "
                             f"{', '.join(s.slug for s in studies if not judge_kind_of(s))} has none.")
    if kind and kinds != {kind}:
        raise HumanEvalError(f"These studies are judged by the {', '.join(sorted(kinds))} judge, not {kind}.")
    if len(kinds) != 1:
        raise HumanEvalError("Judge studies of one benchmark at a time.")
    return kinds.pop()


def answers_of(studies) -> list[HumanAnswer]:
    """The counted answers of the studies with the requests they answer, in submission order."""
    studies = list(studies)
    plans: dict[tuple, dict[str, EvalRequest]] = {}
    by_study: dict[int, dict[str, EvalRequest]] = {}
    for study in studies:
        meta = meta_of(study)
        key = (meta.get("version"), meta.get("input_strategy", "default"), int(meta.get("seed", 0)),
               tuple(meta.get("variants") or ()))
        if key not in plans:
            version = version_of(study)
            try:
                plans[key] = {r.request_id: r for _, made in _plan(version, meta) for r in made}
            except (KeyError, ImportError, ValueError) as exc:
                raise HumanEvalError(f"The requests of {version} cannot be planned: {exc}") from None
        by_study[study.pk] = plans[key]
    counted, _ = counted_submissions(studies)
    found = []
    for submission in counted:
        study = submission.claim.study
        request = by_study[study.pk].get(_source(submission.claim.item).get("request_id"))
        text = str((submission.final_data or {}).get(ANSWER) or "").strip()
        if request is not None and text:
            found.append(HumanAnswer(submission, study, request, text))
    return found


def judge_answers(studies, spec: runner.BackendSpec, *, kind: str = "", batch_size: int = 8, params=None,
                  decoding: str = judges.FREE, pool: runner.BackendPool | None = None,
                  progress: Callable[[int, int], None] | None = None) -> judges.JudgeStats:
    """Judge every counted answer of the baseline `studies` with their judge kind on `spec` and store
    the verdicts (see the module docstring). Returns what was done."""
    studies = list(studies)
    if not studies:
        raise HumanEvalError("Name at least one human-baseline study to judge.")
    name = _one_kind(studies, kind)
    judge = judges.Judge(name, spec, params=params, batch_size=batch_size, pool=pool, decoding=decoding)
    stored = HumanAnswerJudgment.objects.filter(study__in=studies, kind=name, judge_model=spec.model_id,
                                                parse_status__in=[judges.OK, judges.UNPARSED])
    other = (stored.exclude(params__decoding=judges.CHOICES) if decoding == judges.CHOICES
             else stored.filter(params__decoding=judges.CHOICES))
    if other.exists():
        made = judges.FREE if decoding == judges.CHOICES else judges.CHOICES
        raise judges.JudgeError(f"These answers already have {name} judgments by {spec.model_id} made with {made} "
                                "decoding; one judge model judges them one way.")
    done = {(row.submission_id, row.reference_key): row.answer
            for row in stored.only("submission_id", "reference_key", "answer")}
    stats = judge.stats
    todo: list[tuple[HumanAnswer, judges.Case]] = []
    for answer in answers_of(studies):
        stats.responses += 1
        if not judge.kind.applies(answer.request) or not judge.kind.selects(answer.request, answer.text):
            stats.not_selected += 1
            continue
        for case in judge.kind.cases(answer.request, answer.text):
            if done.get((answer.submission.pk, case.reference_key)) == answer.text:
                stats.skipped += 1
            else:
                todo.append((answer, case))
    for start in range(0, len(todo), judge.batch_size):
        batch = todo[start:start + judge.batch_size]
        answered = judge.answer([case for _, case in batch], [a.request.request_id for a, _ in batch])
        rows = [HumanAnswerJudgment(submission=a.submission, study=a.study, request_id=a.request.request_id,
                                    answer=a.text, **judges.call_fields(judge, found))
                for (a, _), found in zip(batch, answered, strict=True)]
        with transaction.atomic():
            for (a, case) in batch:  # failed calls and answers corrected since are replaced
                HumanAnswerJudgment.objects.filter(submission=a.submission, kind=name, judge_model=spec.model_id,
                                                   reference_key=case.reference_key).delete()
            HumanAnswerJudgment.objects.bulk_create(rows)
        if progress:
            progress(start + len(batch), len(todo))
    return stats


def judge_version(version: BenchmarkVersion, spec: runner.BackendSpec, *, kind: str = "",
                  decoding: str = judges.FREE, progress=None) -> judges.JudgeStats:
    """Judge the answers of every judged baseline study of the version (results page, `judge_human_answers` job)."""
    studies = judged_studies(version)
    if not studies:
        raise HumanEvalError(f"{version} has no human baseline with open-ended answers to judge.")
    return judge_answers(studies, spec, kind=kind, decoding=decoding, progress=progress)


def chosen_judge(studies, kind: str) -> dict | None:
    """The judge model that judged most of these studies' answers with `kind` (latest first on a tie),
    with how many judgments and which decoding; None when none is stored."""
    rows = (HumanAnswerJudgment.objects.filter(study__in=list(studies), kind=kind)
            .exclude(parse_status=judges.FAILED).values_list("judge_model", "pk", "params"))
    counts: Counter = Counter()
    last: dict[str, int] = {}
    choices: Counter = Counter()
    for model, pk, params in rows:
        counts[model] += 1
        last[model] = max(last.get(model, 0), pk)
        choices[model] += (params or {}).get("decoding") == judges.CHOICES
    if not counts:
        return None
    model = max(counts, key=lambda name: (counts[name], last[name]))
    chosen = choices[model]
    decoding = judges.FREE if not chosen else judges.CHOICES if chosen == counts[model] else "mixed"
    return {"kind": kind, "model": model, "judgments": counts[model], "decoding": decoding}


def stored_rows(studies, kind: str, judge_model: str) -> dict[int, dict[str, HumanAnswerJudgment]]:
    """submission id → reference key → its stored judgment by this judge model (failed calls left out)."""
    found: dict[int, dict[str, HumanAnswerJudgment]] = {}
    for row in (HumanAnswerJudgment.objects.filter(study__in=list(studies), kind=kind, judge_model=judge_model)
                .exclude(parse_status=judges.FAILED)):
        found.setdefault(row.submission_id, {})[row.reference_key] = row
    return found


def answer_verdicts(studies, kind: str, judge_model: str, answers: list[HumanAnswer] | None = None) -> dict[int, dict]:
    """submission id → the scorer's verdict, for the counted answers whose every case has a judgment by
    `judge_model` of their current text."""
    judge_kind = judges.get_kind(kind)
    rows = stored_rows(studies, kind, judge_model)
    out = {}
    for answer in answers if answers is not None else answers_of(studies):
        if not judge_kind.applies(answer.request) or not judge_kind.selects(answer.request, answer.text):
            continue
        found = rows.get(answer.submission.pk, {})
        cases = judge_kind.cases(answer.request, answer.text)
        if any(case.reference_key not in found or found[case.reference_key].answer != answer.text for case in cases):
            continue
        out[answer.submission.pk] = judge_kind.combine([
            (case, judges.Reading(found[case.reference_key].parse_status, found[case.reference_key].verdict or {}))
            for case in cases])
    return out
