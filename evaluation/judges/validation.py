"""Validating an LLM judge against several people (seeds/004 §4.2: MAIA's judge against two human
raters on 100 answers, Fleiss' kappa 0.82; SPEC "What the papers also did").

The raters are the judge model (its stored judgments of a run) and two or more people, each a set of
labels keyed like `agreement.human_key` (request id, sample[, reference]). People's labels come from
JSON-lines files (`agreement.read_human_verdicts`, one file per person) or from the verdicts people
recorded on the run's answers (`stored_raters`: each person's latest, non-withdrawn verdict on an answer
that still reads as they saw it). The figures are computed over the answers every rater labelled (the
judge's unparsed or failed verdicts do not count as labels):
- Fleiss' kappa over all raters (`annotation.crowd.agreement.fleiss_kappa`);
- Cohen's kappa and percent agreement of every pair of raters;
- how many answers each rater labelled and how many are shared by all.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from itertools import combinations

from annotation.crowd.agreement import cohens_kappa, fleiss_kappa
from evaluation.judges.agreement import human_key, run_judged
from evaluation.judges.kinds import get_kind
from evaluation.models import EvaluationRun, HumanVerdict

JUDGE = "judge"
MIN_PEOPLE = 2


class ValidationInputError(ValueError):
    """The raters cannot be compared as given."""


@dataclass
class PairAgreement:
    raters: tuple[str, str]
    n: int
    percent_agreement: float | None
    cohens_kappa: float | None
    kappa_reason: str = ""


@dataclass
class ValidationReport:
    kind: str
    raters: list[str]
    n: int  # answers every rater labelled
    fleiss_kappa: float | None
    kappa_reason: str = ""
    labelled: dict = field(default_factory=dict)  # rater → answers it labelled
    pairs: list[PairAgreement] = field(default_factory=list)

    def as_dict(self) -> dict:
        return asdict(self)


def validation_report(kind: str, judged: dict, people: dict[str, dict]) -> ValidationReport:
    """Fleiss' kappa over the judge and the people, and pairwise figures, on the answers all labelled.

    `judged`: key → the judge's verdict dict (None for a failed call); `people`: rater name → {key → label}
    in the judge kind's human labels (e.g. correct/incorrect)."""
    if len(people) < MIN_PEOPLE:
        raise ValidationInputError(f"Validating a judge needs at least {MIN_PEOPLE} human raters; "
                                   f"got {len(people)}.")
    if JUDGE in people:
        raise ValidationInputError(f"{JUDGE!r} names the judge; give the human raters other names.")
    judge_kind = get_kind(kind)
    labels: dict[str, dict] = {JUDGE: {}}
    for key, verdict in judged.items():
        label = judge_kind.label(verdict)
        if label is not None:
            labels[JUDGE][human_key(key)] = label
    for name, given in people.items():
        labels[name] = {}
        for key, value in given.items():
            try:
                labels[name][human_key(key)] = judge_kind.human_label(value)
            except ValueError as exc:
                raise ValidationInputError(f"{name}, verdict for {key!r}: {exc}") from None
    raters = [JUDGE, *people]
    shared = sorted(set.intersection(*(set(labels[r]) for r in raters)))
    fleiss = fleiss_kappa([[labels[r][key] for r in raters] for key in shared])
    pairs = []
    for first, second in combinations(raters, 2):
        both = [(labels[first][key], labels[second][key]) for key in shared]
        kappa = cohens_kappa(both)
        pairs.append(PairAgreement(
            raters=(first, second), n=len(both),
            percent_agreement=100 * sum(a == b for a, b in both) / len(both) if both else None,
            cohens_kappa=kappa.value, kappa_reason=kappa.reason))
    return ValidationReport(kind=judge_kind.name, raters=raters, n=len(shared), fleiss_kappa=fleiss.value,
                            kappa_reason=fleiss.reason, labelled={r: len(labels[r]) for r in raters}, pairs=pairs)


def stored_raters(run: EvaluationRun, kind: str) -> dict[str, dict]:
    """Each person's current verdicts on the run's answers: username → {(request id, sample) → label}."""
    latest: dict[tuple[int, int], HumanVerdict] = {}
    rows = (HumanVerdict.objects.filter(prediction__run=run, kind=kind).select_related("prediction", "given_by")
            .order_by("-given_at", "-pk"))
    for row in rows:
        latest.setdefault((row.prediction_id, row.given_by_id), row)
    people: dict[str, dict] = {}
    for row in latest.values():
        if row.label and row.answer == row.prediction.raw_output:
            people.setdefault(row.given_by.get_username(), {})[
                (row.prediction.request_id, row.prediction.sample_index)] = row.label
    return dict(sorted(people.items()))


def run_validation(run: EvaluationRun, kind: str, judge_model: str, people: dict[str, dict] | None = None
                   ) -> ValidationReport:
    """Validate the run's stored judgments of `judge_model` against `people` (default: the verdicts people
    recorded on the run's answers)."""
    people = stored_raters(run, kind) if people is None else people
    return validation_report(kind, run_judged(run, kind, judge_model), people)
