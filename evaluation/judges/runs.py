"""Judging a stored run: `judge_run` stores `Judgment` rows; `verdicts_for_run` folds them into verdicts."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from django.db import transaction

from evaluation import runner
from evaluation.judges.base import CHOICES, FAILED, FREE, OK, UNPARSED, Case, JudgeError, Reading
from evaluation.judges.judge import Answered, Judge, JudgeStats
from evaluation.judges.kinds import get_kind
from evaluation.models import EvaluationRun, Judgment, Prediction
from generation import model_text


def _requests_of(run: EvaluationRun) -> dict:
    return {planned.request.request_id: planned.request for planned in runner.plan(run)}


def judge_run(run: EvaluationRun, kind: str, spec: runner.BackendSpec, *, batch_size: int = 8, params=None,
              pool: runner.BackendPool | None = None, decoding: str = FREE,
              progress: Callable[[int, int], None] | None = None) -> JudgeStats:
    """Judge every successful prediction of a run that `kind` judges and store one `Judgment` per
    (prediction, reference key). Pairs already judged (ok or unparsed) by this judge model are skipped;
    failed calls are replaced. `progress(done, total)` is called after each batch of judge calls.
    `decoding` is `free` generation (the authors') or `choices` (`evaluation.judges.base`); a
    judgment made by `choices` records it in its `params`.
    Returns what was done."""
    judge = Judge(kind, spec, params=params, batch_size=batch_size, pool=pool, decoding=decoding)
    requests = {rid: request for rid, request in _requests_of(run).items() if judge.kind.applies(request)}
    predictions = list(Prediction.objects.filter(run=run, error="", request_id__in=list(requests))
                       .order_by("request_id", "sample_index"))
    stored = Judgment.objects.filter(prediction__run=run, kind=judge.kind.name, judge_model=spec.model_id,
                                     parse_status__in=[OK, UNPARSED])
    other = stored.exclude(params__decoding=CHOICES) if decoding == CHOICES else stored.filter(params__decoding=CHOICES)
    if other.exists():
        made = FREE if decoding == CHOICES else CHOICES
        raise JudgeError(f"Run {run.pk} already has {judge.kind.name} judgments by {spec.model_id} made with {made} "
                         f"decoding; one judge model judges a run one way.")
    done = set(stored.values_list("prediction_id", "reference_key"))
    todo: list[tuple[Prediction, Case]] = []
    stats = judge.stats
    for prediction in predictions:
        request = requests[prediction.request_id]
        stats.responses += 1
        if not prediction.raw_output.strip():
            stats.empty += 1
            continue
        if not judge.kind.selects(request, prediction.raw_output):
            stats.not_selected += 1
            continue
        for case in judge.kind.cases(request, prediction.raw_output):
            if (prediction.pk, case.reference_key) in done:
                stats.skipped += 1
            else:
                todo.append((prediction, case))
    for start in range(0, len(todo), judge.batch_size):
        batch = todo[start:start + judge.batch_size]
        answered = judge.answer([case for _, case in batch], [p.request_id for p, _ in batch])
        rows = [_judgment_row(prediction, judge, answer) for (prediction, _), answer in zip(batch, answered,
                                                                                             strict=True)]
        with transaction.atomic():
            Judgment.objects.filter(prediction__in=[p for p, _ in batch], kind=judge.kind.name,
                                    judge_model=spec.model_id, parse_status=FAILED).delete()
            Judgment.objects.bulk_create(rows, ignore_conflicts=True)
        if progress:
            progress(start + len(batch), len(todo))
    return stats


def _judgment_row(prediction: Prediction, judge: Judge, answer: Answered) -> Judgment:
    return Judgment(prediction=prediction, **call_fields(judge, answer))


def call_fields(judge: Judge, answer: Answered) -> dict:
    """The fields every stored judge call records (`evaluation.models.JudgeCall`), from one answered case; NUL
    characters removed from the verdict as from its text are counted in `params` (`generation.model_text`)."""
    outcome, reading = answer.outcome, answer.reading
    verdict, removed = model_text.json_without_nul(reading.value if reading else None)
    return {"kind": judge.kind.name, "judge_model": judge.spec.model_id, "judge_revision": judge.spec.cache_revision,
            "judge_backend": judge.spec.backend, "reference_key": answer.case.reference_key,
            "prompt": answer.chat.describe(), "params": model_text.noted(judge.recorded_params,
                                                                         outcome.removed() + removed),
            "references": [dict(reference) for reference in answer.case.references],
            "raw_verdict": outcome.text, "verdict": verdict,
            "parse_status": FAILED if reading is None else reading.status, "error": outcome.error,
            "from_cache": outcome.from_cache, "latency_s": outcome.latency_s,
            "prompt_tokens": outcome.prompt_tokens, "completion_tokens": outcome.completion_tokens}


def run_judgments(run: EvaluationRun, kind: str, judge_model: str = ""):
    """A run's stored judgments of one kind (of one judge model when given)."""
    rows = Judgment.objects.filter(prediction__run=run, kind=get_kind(kind).name).select_related("prediction")
    return rows.filter(judge_model=judge_model) if judge_model else rows


def judgment_counts(run: EvaluationRun, kind: str, judge_model: str = "") -> dict:
    """How many stored judgments are ok, unparsed and failed."""
    counts = Counter(run_judgments(run, kind, judge_model).values_list("parse_status", flat=True))
    return {status: counts.get(status, 0) for status in (OK, UNPARSED, FAILED)}


def verdicts_for_run(run: EvaluationRun, kind: str, judge_model: str) -> dict[tuple[str, int], dict]:
    """(request id, sample index) → the scorer's verdict, from a run's stored judgments by one judge model.
    A prediction is in the result when every one of its cases has an answered judgment (ok or unparsed);
    empty responses get the kind's `empty_verdict`. Predictions the kind does not select are left out."""
    judge_kind = get_kind(kind)
    requests = {rid: request for rid, request in _requests_of(run).items() if judge_kind.applies(request)}
    rows: dict[int, dict[str, Judgment]] = {}
    for row in run_judgments(run, kind, judge_model).exclude(parse_status=FAILED):
        rows.setdefault(row.prediction_id, {})[row.reference_key] = row
    out = {}
    for prediction in Prediction.objects.filter(run=run, error="", request_id__in=list(requests)):
        request = requests[prediction.request_id]
        key = (prediction.request_id, prediction.sample_index)
        if not prediction.raw_output.strip():
            out[key] = judge_kind.empty_verdict()
            continue
        if not judge_kind.selects(request, prediction.raw_output):
            continue
        found = rows.get(prediction.pk, {})
        cases = judge_kind.cases(request, prediction.raw_output)
        if not found or any(case.reference_key not in found for case in cases):
            continue
        out[key] = judge_kind.combine([(case, Reading(found[case.reference_key].parse_status,
                                                      found[case.reference_key].verdict or {})) for case in cases])
    return out
