"""What the C-VQA grammar console shows (`frontend.benchmarks.cvqa.grammar_views`): a counterfactuals version's
questions with their current wording, the grammar pass accepted for them (before → after) or the suggestion
waiting for a decision, and the version's grammar proposal sets."""

from __future__ import annotations

from dataclasses import dataclass

from annotation.benchmarks.cvqa import counterfactuals, grammar
from annotation.models import BenchmarkItem, BenchmarkVersion
from generation import selectors
from generation.models import Proposal, ProposalSet


@dataclass
class GrammarRow:
    item: BenchmarkItem
    stage: str
    grammar: dict | None  # {before, after, source} of the accepted pass
    waiting: bool  # a suggestion is being made or waits for a decision

    @property
    def removed(self) -> bool:
        return self.stage == counterfactuals.REMOVED

    @property
    def polished(self) -> bool:
        return self.grammar is not None and self.grammar.get("after") == self.item.payload.get("new_query")


def rows(version: BenchmarkVersion) -> list[GrammarRow]:
    items = list(grammar.counterfactual_items(version))
    waiting = grammar.waiting_keys(grammar.source_key(item.pk) for item in items)
    return [GrammarRow(item, item.curation.stage, grammar.applied_grammar(item.curation),
                       grammar.source_key(item.pk) in waiting) for item in items]


def open_count(found: list[GrammarRow]) -> int:
    """How many of the rows a new grammar pass would be for (as `grammar.open_items`)."""
    return sum(1 for row in found if not row.removed and not row.waiting and not row.polished)


def proposal_sets(version: BenchmarkVersion):
    """The version's grammar proposal sets, newest first, with their counts."""
    ids = (Proposal.objects.filter(task_kind=grammar.KIND, inputs__version_id=version.pk)
           .values_list("proposal_set_id", flat=True).distinct())
    return selectors.sets_with_counts(ProposalSet.objects.filter(pk__in=list(ids)))
