"""People's decisions on benchmark items, and the freeze check that keeps what people turned down out of a
frozen version.

Each workflow keeps its decisions where it records them: a crowd review of a claim in the transition
history (`config.models.StateChange`), a verifier's answer in its `Submission`, a proposal's review in
`generation.models.ProposalDecision` (carried to the item's `CurationRecord` as its provenance), a validation
verdict in an insert-only `ItemCheck`, an expert report's send-back in the record's working fields. A
benchmark reads its own into `Decision`s through its registry hook,
`annotation.benchmarks.registry.BenchmarkDefinition.human_decisions(version)`; the readers of the shared
records are here (`from_check`, `claim_reviews`).

A decision settles one `question` about an item (an aspect of a triplet, a QA pair's fate through filtration
and expert assessment): a later decision on the same question supersedes an earlier one, so an item has one
latest decision per question (`latest`, `latest_of`). `freeze_check` (registered with `annotation.versions`
when the app is ready) refuses every item whose latest decision on any question is a rejection or a
send-back, and names it with that decision: what was decided, in which step, by whom, when and why.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from django.utils import timezone
from django.utils.dateparse import parse_datetime

from annotation.benchmarks import registry
from annotation.crowd.models import Claim
from annotation.curation_models import ItemCheck
from annotation.models import BenchmarkVersion
from config.models import StateChange

ACCEPTED, REJECTED, SENT_BACK = "accepted", "rejected", "sent back"
VERDICTS = (ACCEPTED, REJECTED, SENT_BACK)
TURNED_DOWN = (REJECTED, SENT_BACK)
REFUSAL_PHRASE = "was turned down by people"


@dataclass(frozen=True)
class Decision:
    """One person's decision on one item. `action` words it when the verdict alone does not ("sent back to
    filtration"); `step` says where it was taken ("the CVRR-ES expert assessment")."""

    item_id: int
    question: str
    verdict: str
    step: str
    at: datetime
    by: str = ""
    reason: str = ""
    action: str = ""

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ValueError(f"a decision is {', '.join(VERDICTS)}, not {self.verdict!r}")

    @property
    def turned_down(self) -> bool:
        return self.verdict in TURNED_DOWN

    def describe(self) -> str:
        """E.g. "sent back to filtration in the CVRR-ES expert assessment by cur on 2025-03-01 14:05 UTC: …"."""
        text = f"{self.action or self.verdict} in {self.step}"
        if self.by:
            text += f" by {self.by}"
        text += f" on {when(self.at)}"
        reason = " ".join((self.reason or "").split())
        return f"{text}: {reason}" if reason else text


def when(moment: datetime) -> str:
    """A decision's time as messages write it: `2025-03-01 14:05 UTC` (in `TIME_ZONE`)."""
    return timezone.localtime(moment).strftime("%Y-%m-%d %H:%M %Z") if timezone.is_aware(moment) \
        else moment.strftime("%Y-%m-%d %H:%M")


def moment(value, default: datetime | None = None) -> datetime | None:
    """A time kept as ISO text in a record's working fields (or a datetime), else `default`."""
    if isinstance(value, datetime):
        return value
    parsed = parse_datetime(value) if isinstance(value, str) else None
    return parsed or default


def from_check(check: ItemCheck, question: str, step: str, *, action: str = "") -> Decision:
    """A person's validation verdict as a decision: pass accepts, fail rejects."""
    verdict = ACCEPTED if check.verdict == ItemCheck.Verdict.PASS else REJECTED
    return Decision(check.item_id, question, verdict, step, check.checked_at, by=check.checked_by.get_username(),
                    reason=check.note, action=action)


def claim_reviews(item_claims: dict[int, int], question: str) -> list[Decision]:
    """A reviewer's approval or rejection of the crowd claims items were built from, read from the claims'
    transition history: `item_claims` maps an item's id to its claim's id."""
    by_claim: dict[int, list[int]] = {}
    for item_id, claim_id in item_claims.items():
        by_claim.setdefault(claim_id, []).append(item_id)
    if not by_claim:
        return []
    changes = (StateChange.objects.about(Claim).filter(object_id__in=list(by_claim), actor__isnull=False,
                                                        to_state__in=(Claim.Status.APPROVED, Claim.Status.REJECTED))
               .select_related("actor").order_by("created_at", "id"))
    found = []
    for change in changes:
        verdict = ACCEPTED if change.to_state == Claim.Status.APPROVED else REJECTED
        for item_id in by_claim[change.object_id]:
            found.append(Decision(item_id, question, verdict, f"the review of claim #{change.object_id}",
                                  change.created_at, by=change.actor.get_username(), reason=change.reason))
    return found


def decisions_of(version: BenchmarkVersion) -> list[Decision]:
    """What people decided on the items of `version`, as its benchmark reads it (none for an unknown one)."""
    try:
        definition = registry.get(version.benchmark.slug)
    except registry.UnknownBenchmark:
        return []
    return list(definition.human_decisions(version))


def latest_of(decisions: Iterable[Decision]) -> dict[int, list[Decision]]:
    """Each item's latest decision per question (the later in the list wins a tie in time), by item id."""
    newest: dict[tuple[int, str], tuple[datetime, int, Decision]] = {}
    for order, decision in enumerate(decisions):
        key = (decision.item_id, decision.question)
        if key not in newest or (decision.at, order) >= newest[key][:2]:
            newest[key] = (decision.at, order, decision)
    found: dict[int, list[Decision]] = {}
    for (item_id, _question), (_at, _order, decision) in sorted(newest.items(), key=lambda entry: entry[0]):
        found.setdefault(item_id, []).append(decision)
    return found


def latest(version: BenchmarkVersion) -> dict[int, list[Decision]]:
    """Each item's latest decision per question, by item id."""
    return latest_of(decisions_of(version))


def turned_down(version: BenchmarkVersion) -> list[tuple[str, Decision]]:
    """(external id, decision) for every latest decision that rejects an item or sends it back, by external id."""
    found = {item_id: [decision for decision in decisions if decision.turned_down]
             for item_id, decisions in latest(version).items()}
    found = {item_id: decisions for item_id, decisions in found.items() if decisions}
    if not found:
        return []
    names = dict(version.items.filter(pk__in=list(found)).values_list("pk", "external_id"))
    return sorted(((names[item_id], decision) for item_id, decisions in found.items() if item_id in names
                   for decision in decisions), key=lambda entry: (entry[0], entry[1].at))


def freeze_check(version: BenchmarkVersion) -> list[tuple[str, str]]:
    """(external id, the decision in words) for every item whose latest decision on a question turns it down."""
    return [(external_id, decision.describe()) for external_id, decision in turned_down(version)]
