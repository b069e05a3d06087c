"""How noisy the proposed QA pairs were (seeds/003 §3.2 Stage 3: about 30% of the generated pairs were
noisy), per dimension and overall, from the decisions people made in filtration.

For the `cvrr_qa` proposals whose output parsed (optionally of one proposal set), per dimension:
- `proposed`: the pairs; `kept` (accepted), `fixed` (corrected), `removed` (rejected), `disputed`
  (reviewers disagree, a curator has not settled it) and `undecided`;
- `removed_by_reason` and `fixed_by_reason`: the reason the settling decision named (the latest
  decision with the outcome's verdict), `unnamed` when it named none (also as (label, n) lists in
  `REASONS`' order: `removed_reasons`, `fixed_reasons`);
- `flagged`: pairs the automatic check marked (the question contains its answer);
- `decided` = kept + fixed + removed; `removed_share` = removed / decided, `fixed_share` = fixed /
  decided and `noisy_share` = (removed + fixed) / decided, None while nothing is decided.
Outputs that did not parse are counted apart per dimension (`unparsed`): they hold no pair.
"""

from __future__ import annotations

from collections import defaultdict

from annotation.benchmarks.cvrr import qa_generation
from generation.models import Proposal, ProposalDecision

OUTCOME_COLUMNS = {Proposal.Outcome.ACCEPTED: "kept", Proposal.Outcome.CORRECTED: "fixed",
                   Proposal.Outcome.REJECTED: "removed", Proposal.Outcome.DISPUTED: "disputed",
                   Proposal.Outcome.UNDECIDED: "undecided"}
REASON_KEYS = tuple(value for value, _ in qa_generation.REASONS)
UNNAMED = "unnamed"
REASONS = (*qa_generation.REASONS, (UNNAMED, "no reason named"))
TOTAL = "all"


def _share(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def _row(key: str, name: str) -> dict:
    return {"dimension": key, "name": name, "proposed": 0, "kept": 0, "fixed": 0, "removed": 0, "disputed": 0,
            "undecided": 0, "flagged": 0, "unparsed": 0,
            "removed_by_reason": dict.fromkeys((*REASON_KEYS, UNNAMED), 0),
            "fixed_by_reason": dict.fromkeys((*REASON_KEYS, UNNAMED), 0)}


def _finish(row: dict) -> dict:
    decided = row["kept"] + row["fixed"] + row["removed"]
    labels = dict(REASONS)
    row.update(decided=decided,
               removed_reasons=[(labels[key], row["removed_by_reason"][key]) for key in labels],
               fixed_reasons=[(labels[key], row["fixed_by_reason"][key]) for key in labels],
               removed_share=_share(row["removed"], decided),
               fixed_share=_share(row["fixed"], decided),
               noisy_share=_share(row["removed"] + row["fixed"], decided))
    return row


def _settling_criteria(proposal_ids: list[int]) -> dict[int, dict[str, str]]:
    """{proposal id: {verdict: the criterion of its latest decision with that verdict}}."""
    found: dict[int, dict[str, str]] = defaultdict(dict)
    for proposal_id, verdict, criterion in (ProposalDecision.objects.filter(proposal_id__in=proposal_ids)
                                            .order_by("decided_at", "pk")
                                            .values_list("proposal_id", "verdict", "criterion")):
        found[proposal_id][verdict] = criterion
    return found


def noise_report(proposal_set=None) -> dict:
    """{"dimensions": [row per dimension, in the paper's order, then others], "total": row} (see the
    module docstring); `proposal_set` limits it to one set."""
    proposals = Proposal.objects.filter(task_kind=qa_generation.KIND).exclude(status=Proposal.Status.PENDING)
    if proposal_set is not None:
        proposals = proposals.filter(proposal_set=proposal_set)
    rows = list(proposals.values("pk", "inputs", "status", "outcome", "fields", "final_fields"))
    criteria = _settling_criteria([r["pk"] for r in rows if r["outcome"] in (Proposal.Outcome.REJECTED,
                                                                              Proposal.Outcome.CORRECTED)])
    by_dimension: dict[str, dict] = {}
    total = _row(TOTAL, "All dimensions")
    for found in rows:
        inputs = found["inputs"] if isinstance(found["inputs"], dict) else {}
        key = str(inputs.get("dimension") or "unknown")
        if key not in by_dimension:
            by_dimension[key] = _row(key, str(inputs.get("dimension_name") or key))
        targets = (by_dimension[key], total)
        if found["status"] != Proposal.Status.OK:
            for row in targets:
                row["unparsed"] += 1
            continue
        column = OUTCOME_COLUMNS.get(found["outcome"], "undecided")
        flagged = bool(qa_generation.flags(found["fields"] or {}, inputs))
        reason = None
        if column in ("removed", "fixed"):
            verdict = "reject" if column == "removed" else "correct"
            reason = criteria.get(found["pk"], {}).get(verdict) or UNNAMED
        for row in targets:
            row["proposed"] += 1
            row[column] += 1
            row["flagged"] += flagged
            if reason is not None:
                row[f"{column}_by_reason"][reason] = row[f"{column}_by_reason"].get(reason, 0) + 1
    order = list(qa_generation.DEFAULT_DIMENSIONS)
    ordered = sorted(by_dimension.values(),
                     key=lambda r: (order.index(r["dimension"]) if r["dimension"] in order else len(order),
                                    r["dimension"]))
    return {"dimensions": [_finish(row) for row in ordered], "total": _finish(total),
            "reasons": list(REASONS)}

