"""What the MAIA statement console shows (`frontend.benchmarks.maia.statement_views`): a curation version's questions
with their stage, pool check, true statements, accepted false statements, pair checks and proposals
waiting for a decision; how many questions and pairs a generation would ask about; and the version's
statement proposal sets."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from annotation.benchmarks.maia import minimal_pairs, pool_checks, stages, statement_generation, statements
from annotation.benchmarks.maia.payload import N_ANSWERS
from annotation.curation_models import CurationRecord, ItemCheck
from annotation.models import BenchmarkVersion
from generation import selectors
from generation.models import Proposal, ProposalSet

KINDS = (statement_generation.TRUE_KIND, statement_generation.FALSE_KIND)


@dataclass
class QuestionRow:
    record: CurationRecord
    stage_label: str
    pool: str  # "pass", "fail" or "" (not checked)
    has_true: bool
    false_accepted: int
    pairs_pass: int
    pairs_fail: int
    waiting: int  # proposals waiting for a decision


def _pool(record: CurationRecord) -> str:
    check = pool_checks.latest_check(record.item)
    return check.verdict if check is not None else ""


def questions(version: BenchmarkVersion) -> list[QuestionRow]:
    records = list(statements.records().filter(item__version=version).order_by("item__external_id", "item_id"))
    ids = [record.item_id for record in records]
    waiting = Counter()
    for inputs in (Proposal.objects.filter(task_kind__in=KINDS, inputs__item_id__in=ids).filter(selectors.WAITING)
                   .values_list("inputs", flat=True)):
        waiting[inputs.get("item_id")] += 1
    rows = []
    for record in records:
        payload = record.item.payload or {}
        falses = payload.get("false_statements")
        accepted = N_ANSWERS if falses else len(statements.state_of(record)["false"])
        checks = minimal_pairs.current_checks(record.item) if falses else {}
        passed = sum(check.verdict == ItemCheck.Verdict.PASS for check in checks.values())
        rows.append(QuestionRow(record, stages.LABELS.get(record.stage, record.stage), _pool(record),
                                bool(payload.get("true_statements")), accepted, passed, len(checks) - passed,
                                waiting[record.item_id]))
    return rows


def proposal_sets(version: BenchmarkVersion):
    """The version's statement proposal sets, newest first, with how many outputs parsed, did not parse, and
    wait for a decision."""
    ids = (Proposal.objects.filter(task_kind__in=KINDS, inputs__version_id=version.pk)
           .values_list("proposal_set_id", flat=True).distinct())
    return selectors.sets_with_counts(ProposalSet.objects.filter(pk__in=list(ids)))


def counts(version: BenchmarkVersion) -> dict:
    """How many questions a true-statement generation and how many pairs a false-statement generation would
    ask about now."""
    return {"true": len(statement_generation.true_entries(version)),
            "false": len(statement_generation.false_entries(version))}
