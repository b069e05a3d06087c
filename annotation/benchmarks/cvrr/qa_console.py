"""What the CVRR-ES QA console shows (`frontend.benchmarks.cvrr.qa_views`, `manage.py cvrr_qa`): the captioned
videos with how many pairs were proposed and kept for each, the QA proposal sets, the filtration
studies with how many answers wait to be recorded, and the pairs sent back to filtration."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from django.db.models import Count

from annotation.benchmarks.cvrr import filtration, qa_generation, qa_pool
from annotation.crowd.models import Claim, Study, Submission
from annotation.curation_models import CurationRecord
from generation import selectors
from generation.models import Proposal, ProposalDecision, ProposalSet


@dataclass
class VideoRow:
    record: CurationRecord
    proposed: int  # pairs whose output parsed
    kept: int  # pairs in the QA pool


def videos() -> list[VideoRow]:
    records = list(qa_generation.captioned_videos())
    keys = [qa_generation.source_key(record.item_id) for record in records]
    proposed = Counter(dict(Proposal.objects.filter(task_kind=qa_generation.KIND, source_key__in=keys,
                                                    status=Proposal.Status.OK)
                            .values_list("source_key").annotate(n=Count("pk")).order_by()))
    kept = Counter(record.working.get("video_item") for record in qa_pool.records()
                   .filter(working__video_item__in=[r.item_id for r in records]))
    return [VideoRow(record, proposed[qa_generation.source_key(record.item_id)], kept[record.item_id])
            for record in records]


def proposal_sets():
    """The QA proposal sets, newest first, with how many outputs parsed, are undecided, and are reviewed."""
    return selectors.sets_with_counts(ProposalSet.objects.filter(task_kind=qa_generation.KIND))


def proposal_set(pk: int) -> ProposalSet | None:
    return ProposalSet.objects.filter(pk=pk, task_kind=qa_generation.KIND).first()


def set_proposals(proposal_set: ProposalSet):
    return Proposal.objects.filter(proposal_set=proposal_set).order_by("pk")


@dataclass
class StudyRow:
    study: Study
    items: int
    submitted: int
    recorded: int

    @property
    def waiting(self) -> int:
        return self.submitted - self.recorded


def studies() -> list[StudyRow]:
    found = list(filtration.studies().annotate(n_items=Count("items", distinct=True)))
    slugs = [study.slug for study in found]
    submitted = Counter(dict(Submission.objects.filter(claim__study__slug__in=slugs)
                             .exclude(claim__status=Claim.Status.REJECTED)
                             .values_list("claim__study__slug").annotate(n=Count("pk")).order_by()))
    recorded = Counter(dict(ProposalDecision.objects.filter(study_slug__in=slugs, submission_id__isnull=False)
                            .values_list("study_slug").annotate(n=Count("pk")).order_by()))
    return [StudyRow(study, study.n_items, submitted[study.slug], recorded[study.slug]) for study in found]


def study(slug: str) -> Study | None:
    return Study.objects.filter(slug=slug).first()


def kept_item(item_id: int):
    """The item of a kept pair, or None."""
    record = qa_pool.record_of_item(item_id)
    return record.item if record is not None else None


def returned() -> list[CurationRecord]:
    return list(filtration.returned_pairs())
