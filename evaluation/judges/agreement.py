"""Agreement with people: judge-vs-human Cohen's kappa and accuracy, and reading human verdicts."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from annotation.crowd.agreement import cohens_kappa
from evaluation import jsonl
from evaluation.benchmarks.nleye.judge import NLEYE_VALID, NleyeExplanationJudge
from evaluation.judges.base import OK
from evaluation.judges.kinds import get_kind
from evaluation.judges.runs import run_judgments
from evaluation.models import EvaluationRun


def human_key(key) -> tuple[str, int, str]:
    """A human verdict's key: "request id" (sample 0), (request id, sample), or (request id, sample,
    reference index) for LLM-Match's per-reference ratings."""
    if isinstance(key, str):
        return key, 0, ""
    if isinstance(key, list | tuple) and 2 <= len(key) <= 3 and isinstance(key[0], str):
        sample = int(key[1])
        reference = f"ref:{int(key[2])}" if len(key) == 3 and key[2] is not None else ""
        return key[0], sample, reference
    raise ValueError(f"A human verdict is keyed by a request id, (request id, sample) or "
                     f"(request id, sample, reference index); got {key!r}.")


@dataclass
class AgreementReport:
    kind: str
    n: int  # items both the judge and a person labelled
    accuracy: float | None  # share of those where the labels are equal
    cohens_kappa: float | None
    kappa_reason: str = ""
    human_items: int = 0
    not_judged: int = 0  # human-labelled items the judge has no judgment for
    judge_unusable: int = 0  # judged, but the verdict has no label (unparsed, failed, other verdict)
    confusion: dict = field(default_factory=dict)  # "judge|human" → count
    binary: dict | None = None  # NL-EYE: the same over valid (label 2) vs not valid

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def agreement_report(kind: str, judged: dict, human: dict) -> AgreementReport:
    """Cohen's kappa (`annotation.crowd.agreement`) and accuracy of the judge's labels against people's.

    `judged`: key → the judge's verdict dict (None for a failed call); `human`: key → a person's label
    (cvrr: correct/incorrect; maia: correct/incorrect or a boolean; nleye_explanation: 0/1/2;
    llm_match: 1–5). Keys as `human_key` reads them."""
    judge_kind = get_kind(kind)
    judged = {human_key(key): verdict for key, verdict in judged.items()}
    people = {}
    for key, value in human.items():
        try:
            people[human_key(key)] = judge_kind.human_label(value)
        except ValueError as exc:
            raise ValueError(f"Human verdict for {key!r}: {exc}") from None
    pairs, not_judged, unusable = [], 0, 0
    for key, person in people.items():
        if key not in judged:
            not_judged += 1
            continue
        label = judge_kind.label(judged[key])
        if label is None:
            unusable += 1
            continue
        pairs.append((label, person))
    return _report(judge_kind, pairs, len(people), not_judged, unusable, cohens_kappa)


def _report(judge_kind, pairs, human_items, not_judged, unusable, cohens_kappa) -> AgreementReport:
    kappa = cohens_kappa(pairs)
    agree = sum(a == b for a, b in pairs)
    report = AgreementReport(
        kind=judge_kind.name, n=len(pairs), accuracy=agree / len(pairs) if pairs else None,
        cohens_kappa=kappa.value, kappa_reason=kappa.reason, human_items=human_items, not_judged=not_judged,
        judge_unusable=unusable, confusion=dict(sorted(Counter(f"{a}|{b}" for a, b in pairs).items())))
    if judge_kind.name == NleyeExplanationJudge.name:
        valid = [(a == NLEYE_VALID, b == NLEYE_VALID) for a, b in pairs]
        binary = cohens_kappa(valid)
        report.binary = {"accuracy": sum(a == b for a, b in valid) / len(valid) if valid else None,
                         "cohens_kappa": binary.value, "kappa_reason": binary.reason}
    return report


def run_agreement(run: EvaluationRun, kind: str, judge_model: str, human: dict) -> AgreementReport:
    """Agreement of a run's stored judgments (per prediction and reference key) with human verdicts."""
    return agreement_report(kind, run_judged(run, kind, judge_model), human)


def run_judged(run: EvaluationRun, kind: str, judge_model: str) -> dict:
    """A run's stored verdicts of one judge model, keyed (request id, sample[, reference index]); None for
    a verdict that did not parse."""
    judged = {}
    for row in run_judgments(run, kind, judge_model).order_by("created_at", "pk"):  # the latest counts
        index = row.reference_key.split(":", 1)[1] if row.reference_key.startswith("ref:") else ""
        key = (row.prediction.request_id, row.prediction.sample_index, int(index) if index.isdigit() else None)
        verdict = row.verdict if row.parse_status == OK else None
        judged[key if key[2] is not None else key[:2]] = verdict
    return judged


def read_human_verdicts(lines: Iterable[str], source: str = "human verdicts") -> dict:
    """Human verdicts from JSON lines `{"request_id", "label", ["sample"], ["reference"]}` (reference:
    the index of an LLM-Match reference)."""
    verdicts = {}
    for where, record in jsonl.records(lines, source):
        if not isinstance(record, dict) or not isinstance(record.get("request_id"), str) or "label" not in record:
            raise ValueError(f"{where}: needs `request_id` (a string) and `label`.")
        key = (record["request_id"], int(record.get("sample", 0)), record.get("reference"))
        verdicts[key if key[2] is not None else key[:2]] = record["label"]
    return verdicts
