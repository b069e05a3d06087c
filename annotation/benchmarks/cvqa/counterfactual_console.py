"""What the C-VQA counterfactual console shows (`frontend.benchmarks.cvqa.counterfactual_views`): a sources
version's questions with their counterfactual item or the proposal waiting for one, and the version's proposal
sets."""

from __future__ import annotations

from dataclasses import dataclass

from annotation.benchmarks.cvqa import counterfactual_generation as generation
from annotation.benchmarks.cvqa import counterfactuals
from annotation.models import BenchmarkItem, BenchmarkVersion
from generation import selectors
from generation.models import Proposal, ProposalSet


@dataclass
class SourceRow:
    item: BenchmarkItem
    counterfactual: BenchmarkItem | None
    waiting: bool  # a proposal is being made or waits for a decision


def rows(version: BenchmarkVersion) -> list[SourceRow]:
    items = list(version.items.filter(payload__kind="source").order_by("external_id"))
    made = counterfactuals.items_from([item.pk for item in items])
    waiting = generation.waiting_keys(generation.source_key(item.pk) for item in items)
    return [SourceRow(item, made.get(item.pk), generation.source_key(item.pk) in waiting) for item in items]


def proposal_sets(version: BenchmarkVersion):
    """The version's counterfactual proposal sets, newest first, with their counts."""
    ids = (Proposal.objects.filter(task_kind=generation.KIND, inputs__version_id=version.pk)
           .values_list("proposal_set_id", flat=True).distinct())
    return selectors.sets_with_counts(ProposalSet.objects.filter(pk__in=list(ids)))
