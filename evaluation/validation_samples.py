"""Validating a run's LLM judge in the browser (seeds/004 §4.2: MAIA's judge against two people on 100
answers, Fleiss' kappa 0.82).

A researcher draws a sample of the run's answers that one judge model judged (`create_sample`: size
and seed; the same seed draws the same answers). People who record verdicts (`human_verdicts.GIVERS`)
rate the sampled answers blind: a rater sees the question, the references and the answer, never the
judge's verdict nor another rater's, and rates each answer once (`rate`). `sample_report` compares
them with `evaluation.judges.validation.validation_report`: Fleiss' kappa over the judge and the
people and over the people only, on the answers every rater labelled, with pairwise agreement.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from django.db import IntegrityError, transaction
from django.db.models import Count

from annotation.crowd.agreement import fleiss_kappa
from evaluation import human_verdicts, judges, runner
from evaluation.judges import validation
from evaluation.judges.agreement import run_judged
from evaluation.models import EvaluationRun, Prediction, ValidationRating, ValidationSample, ValidationSampleItem

MAX_SIZE = 1000


class SampleError(ValueError):
    """A sample or a rating that cannot be made as asked; `status` is the HTTP status that says so."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.status = status


def sample_of(pk) -> ValidationSample | None:
    """The sample with its run, version and benchmark (None when there is none)."""
    return ValidationSample.objects.select_related("run__version__benchmark").filter(pk=pk).first()


def judge_models(run: EvaluationRun, kind: str) -> list[str]:
    """The judge models with stored verdicts of `kind` on the run, by name."""
    return list(dict.fromkeys(
        judges.run_judgments(run, kind).exclude(parse_status=judges.FAILED).values_list("judge_model", flat=True)
        .order_by("judge_model"))) if kind else []


def _whole(value, name: str, low: int, high: int | None = None) -> int:
    try:
        number = int(str(value).strip())
    except (TypeError, ValueError):
        raise SampleError(f"The {name} is a whole number.") from None
    if number < low or (high is not None and number > high):
        raise SampleError(f"The {name} is from {low}{f' to {high}' if high is not None else ''}.")
    return number


def create_sample(user, run: EvaluationRun, *, size, seed, judge_model: str = "") -> ValidationSample:
    """A seeded sample of `size` answers (all of them when fewer) that `judge_model` (default: the judge
    model that judged most of the run) judged with a readable verdict."""
    human_verdicts.require_giver(user)
    kind = human_verdicts.kind_for(run.version)
    if not kind:
        raise SampleError(f"{run.version.benchmark.slug} has no judge whose verdicts people can check.")
    size, seed = _whole(size, "sample size", 1, MAX_SIZE), _whole(seed, "seed", 0)
    models = judge_models(run, kind)
    judge_model = (judge_model or "").strip() or human_verdicts.run_judge(run, kind)
    if judge_model not in models:
        raise SampleError(f"Run {run.pk} has no {kind} verdicts of {judge_model or 'any judge model'}; "
                          "run the judge first.", status=409)
    kind_ = judges.get_kind(kind)
    judged = sorted(key[:2] for key, verdict in run_judged(run, kind, judge_model).items()
                    if kind_.label(verdict) is not None)
    keys = sorted(set(judged))
    if not keys:
        raise SampleError(f"No answer of run {run.pk} has a readable verdict of {judge_model}.", status=409)
    chosen = random.Random(seed).sample(keys, min(size, len(keys)))
    predictions = {(p.request_id, p.sample_index): p.pk for p in Prediction.objects.filter(
        run=run, request_id__in={key[0] for key in chosen})}
    with transaction.atomic():
        sample = ValidationSample.objects.create(run=run, kind=kind, judge_model=judge_model, size=size, seed=seed,
                                                 created_by=user)
        ValidationSampleItem.objects.bulk_create(
            ValidationSampleItem(sample=sample, prediction_id=predictions[key], position=position)
            for position, key in enumerate(chosen))
    return sample


@dataclass
class RatingRow:
    item: ValidationSampleItem
    question: str
    references: list
    answer: str
    label: str  # the rater's own label; empty until rated


def rating_rows(sample: ValidationSample, user) -> list[RatingRow]:
    """The sampled answers as a rater sees them, with the rater's own labels only."""
    items = list(sample.items.select_related("prediction"))
    own = dict(ValidationRating.objects.filter(item__sample=sample, rater=user).values_list("item_id", "label"))
    try:
        requests = {planned.request.request_id: planned.request for planned in runner.plan(sample.run)}
    except (KeyError, ImportError, ValueError):  # requests that cannot be rebuilt: the answers alone
        requests = {}
    rows = []
    for item in items:
        request = requests.get(item.prediction.request_id)
        rows.append(RatingRow(item=item, question=getattr(request, "text", ""),
                              references=list(getattr(request, "gold", None) or []),
                              answer=item.prediction.raw_output, label=own.get(item.pk, "")))
    return rows


def labels(sample: ValidationSample) -> tuple[str, ...]:
    return judges.get_kind(sample.kind).human_labels


def rate(sample: ValidationSample, user, item_id, label: str) -> ValidationRating:
    """Record the rater's label on one sampled answer; a second rating of the same answer is 409."""
    human_verdicts.require_giver(user)
    label = str(label or "").strip().lower()
    if label not in labels(sample):
        raise SampleError(f"A verdict is one of {', '.join(labels(sample))} (got {label!r}).")
    item = sample.items.filter(pk=item_id).first() if str(item_id).isdigit() else None
    if item is None:
        raise SampleError("That answer is not in this sample.", status=404)
    try:
        with transaction.atomic():
            return ValidationRating.objects.create(item=item, rater=user, label=label)
    except IntegrityError:
        raise SampleError("You have rated this answer already; each rater rates each answer once.",
                          status=409) from None


@dataclass
class SampleReport:
    sample: ValidationSample
    items: int
    raters: list[str]  # the people who rated, by username
    rated: dict  # username → answers rated
    report: validation.ValidationReport | None  # judge and people; None with fewer than two people
    humans_kappa: float | None
    humans_reason: str
    reason: str = ""  # why there is no report


def _people(sample: ValidationSample) -> dict[str, dict]:
    people: dict[str, dict] = {}
    rows = ValidationRating.objects.filter(item__sample=sample).select_related("item__prediction", "rater")
    for row in rows:
        prediction = row.item.prediction
        people.setdefault(row.rater.get_username(), {})[(prediction.request_id, prediction.sample_index)] = row.label
    return dict(sorted(people.items()))


def sample_report(sample: ValidationSample) -> SampleReport:
    people = _people(sample)
    items = sample.items.count()
    rated = {name: len(given) for name, given in people.items()}
    found = SampleReport(sample=sample, items=items, raters=list(people), rated=rated, report=None,
                         humans_kappa=None, humans_reason="")
    if len(people) < validation.MIN_PEOPLE:
        found.reason = f"{validation.MIN_PEOPLE} raters are needed; {len(people)} rated so far."
        return found
    keys = {(i.prediction.request_id, i.prediction.sample_index) for i in sample.items.select_related("prediction")}
    judged = {key: verdict for key, verdict in run_judged(sample.run, sample.kind, sample.judge_model).items()
              if key[:2] in keys}
    found.report = validation.validation_report(sample.kind, judged, people)
    shared = sorted(set.intersection(*(set(given) for given in people.values())))
    humans = fleiss_kappa([[people[name][key] for name in people] for key in shared])
    found.humans_kappa, found.humans_reason = humans.value, humans.reason
    return found


@dataclass
class RaterProgress:
    sample: ValidationSample
    items: int
    rated: int  # by this rater


def progress_of(user) -> list[RaterProgress]:
    """Every sample, newest first, with how many of its answers this rater has rated."""
    samples = (ValidationSample.objects.select_related("run__version__benchmark")
               .annotate(n_items=Count("items", distinct=True)))
    rated = dict(ValidationRating.objects.filter(rater=user).values("item__sample_id")
                 .annotate(n=Count("id")).values_list("item__sample_id", "n"))
    return [RaterProgress(sample, sample.n_items, rated.get(sample.pk, 0)) for sample in samples]


def samples_of(run: EvaluationRun) -> list[SampleReport]:
    return [sample_report(sample) for sample in run.validation_samples.all()]
