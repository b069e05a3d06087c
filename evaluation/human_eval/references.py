"""People's explanations as judge references: the candidates of a frozen version and their approval.

A candidate is an explanation written in a human-baseline study of the version (`BASELINE`) by a
person who picked the gold answer, in a submission that counts (approved in the crowd review queue,
or not sampled for review; `counted_submissions`). The same text (white space collapsed, any case)
for the same item is one candidate, whichever hypothesis order or worker wrote it. Its vote is read
from the version's explanation-vote studies (`VOTE`) that offered it: valid when at least one counted
voter selected it (seeds/002 §4.2), invalid when voters saw it and none did, else not voted.

A curator approves candidates (`approve`, in bulk; `approve_voted` takes every valid one not yet
approved): each becomes a `JudgeReference` of its item (`evaluation.judge_references`) with its
source (the baseline study and submission, the vote study, votes and voters). Candidates voted
invalid are refused; candidates not voted on may be approved on the curator's own judgement.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field

from django.db import transaction

from annotation.crowd.models import Study, StudyItem, Submission
from annotation.models import BenchmarkItem
from evaluation import judge_references
from evaluation.human_eval.base import BASELINE, VOTE, VOTE_FIELD, _source, counted_submissions, meta_of, studies_of
from evaluation.human_eval.human_baselines import _plan, baseline_groups, gold_explanations
from evaluation.models import JudgeReference

VALID, INVALID, NOT_VOTED = "valid", "invalid", "not voted"


@dataclass
class Candidate:
    item: BenchmarkItem
    text: str
    key: str  # judge_references.text_key(text)
    sources: list[dict] = field(default_factory=list)  # {study, submission, worker, request_id}, in writing order
    votes: int | None = None  # the most votes it got in one vote study
    voters: int | None = None  # the voters of that vote item
    vote_study: Study | None = None
    approved: JudgeReference | None = None

    @property
    def token(self) -> str:
        """How a page, the API and the command name this candidate: "<item id>:<text key>"."""
        return f"{self.item.pk}:{self.key}"

    @property
    def status(self) -> str:
        if self.voters:
            return VALID if self.votes else INVALID
        return NOT_VOTED

    @property
    def approvable(self) -> bool:
        return self.approved is None and self.status != INVALID

    def as_dict(self) -> dict:
        return {"token": self.token, "item": self.item.external_id, "text": self.text, "status": self.status,
                "votes": self.votes, "voters": self.voters,
                "vote_study": self.vote_study.slug if self.vote_study else None, "sources": self.sources,
                "approved": self.approved.pk if self.approved else None, "approvable": self.approvable}


@dataclass
class ItemReferences:
    item: BenchmarkItem
    references: list[JudgeReference]  # active ones, in approval order
    candidates: list[Candidate]

    def as_dict(self) -> dict:
        payload = self.item.payload or {}
        return {"item": self.item.external_id, "explanation": payload.get("explanation", ""),
                "human_explanations": list(payload.get("human_explanations") or []),
                "references": [reference_dict(ref) for ref in self.references],
                "candidates": [candidate.as_dict() for candidate in self.candidates]}


def reference_dict(reference: JudgeReference) -> dict:
    return {"id": reference.pk, "item": reference.item.external_id, "text": reference.text,
            "source": reference.source, "study": reference.study.slug if reference.study else None,
            "submission": reference.submission_id,
            "vote_study": reference.vote_study.slug if reference.vote_study else None,
            "votes": reference.votes, "voters": reference.voters,
            "approved_by": reference.approved_by.get_username(), "approved_at": reference.approved_at.isoformat(),
            "revoked_at": reference.revoked_at.isoformat() if reference.revoked_at else None}


def _baseline_explanations(version) -> list[tuple[str, str, dict]]:
    """(item external id, explanation, source) of every counted baseline answer that picked the gold."""
    found = []
    for group in baseline_groups(version):
        meta = meta_of(group[0])
        plan_meta = {**meta, "variants": sorted({v for study in group for v in meta_of(study).get("variants") or ()})
                     if all(meta_of(study).get("variants") for study in group) else []}
        requests = {r.request_id: r for _, made in _plan(version, plan_meta) for r in made}
        for request_id, given in gold_explanations(group, requests).items():
            for text, source in given:
                found.append((requests[request_id].item_id, text, {
                    "study": source["study"], "submission": source["submission"], "worker": source["worker"],
                    "request_id": request_id}))
    return found


def _votes(version) -> dict[int, tuple[int, int, Study]]:
    """baseline submission pk → (votes, voters, vote study) of the vote item where it got the most votes."""
    studies = studies_of(VOTE, version=version)
    counted, _ = counted_submissions(studies)
    voters: Counter = Counter()
    votes: dict[int, Counter] = defaultdict(Counter)
    for submission in counted:
        voters[submission.claim.item_id] += 1
        votes[submission.claim.item_id].update(str(c) for c in (submission.final_data or {}).get(VOTE_FIELD) or [])
    best: dict[int, tuple[int, int, Study]] = {}
    items = StudyItem.objects.filter(study__in=studies, role=StudyItem.Role.REGULAR).select_related("study")
    for item in items:
        if not voters[item.pk]:
            continue
        for candidate, sources in (_source(item).get("candidates") or {}).items():
            count = votes[item.pk][candidate]
            for source in sources:
                if source.get("kind") != "human" or not source.get("submission"):
                    continue
                found = (count, voters[item.pk], item.study)
                if source["submission"] not in best or found[0] > best[source["submission"]][0]:
                    best[source["submission"]] = found
    return best


def candidates(version) -> list[ItemReferences]:
    """Per item of the version (in id order), its active references and its candidates (see the module
    docstring); items with neither are left out."""
    items = {item.external_id: item for item in version.items.order_by("external_id")}
    votes = _votes(version)
    by_item: dict[str, dict[str, Candidate]] = defaultdict(dict)
    for external_id, text, source in _baseline_explanations(version):
        item = items.get(external_id)
        if item is None:
            continue
        key = judge_references.text_key(text)
        candidate = by_item[external_id].setdefault(key, Candidate(item, text, key))
        candidate.sources.append(source)
        found = votes.get(source["submission"])
        if found is not None and (candidate.voters is None or found[0] > (candidate.votes or 0)):
            candidate.votes, candidate.voters, candidate.vote_study = found
    active = judge_references.approved_by_item(item.pk for item in items.values())
    out = []
    for external_id, item in items.items():
        references = active.get(item.pk, [])
        approved = {reference.text_key: reference for reference in references}
        found = list(by_item.get(external_id, {}).values())
        for candidate in found:
            candidate.approved = approved.get(candidate.key)
        if references or found:
            out.append(ItemReferences(item, references, found))
    return out


def _by_token(version) -> dict[str, Candidate]:
    return {candidate.token: candidate for entry in candidates(version) for candidate in entry.candidates}


def approve(user, version, tokens) -> list[JudgeReference]:
    """Approve the named candidates (tokens as `Candidate.token`) as judge references, all or none; those
    approved before are skipped. ReferenceError for an unknown token or a candidate voted invalid."""
    judge_references.require_approver(user)
    tokens = list(dict.fromkeys(str(token).strip() for token in tokens if str(token).strip()))
    if not tokens:
        raise judge_references.ReferenceError("Select at least one explanation to approve.")
    if not version.frozen:
        raise judge_references.ReferenceError(f"{version} is not frozen.")
    known = _by_token(version)
    unknown = [token for token in tokens if token not in known]
    if unknown:
        raise judge_references.ReferenceError(f"No candidate explanation {', '.join(unknown[:5])} in {version}.")
    refused = [known[token] for token in tokens if known[token].status == INVALID]
    if refused:
        raise judge_references.ReferenceError(
            "Voters saw and selected none of these explanations, so they cannot be references: "
            + "; ".join(f"{c.item.external_id}: {c.text!r}" for c in refused[:5]))
    made = []
    with transaction.atomic():
        for token in tokens:
            candidate = known[token]
            if candidate.approved is not None:
                continue
            first = candidate.sources[0]
            reference, created = judge_references.approve(
                user, candidate.item, candidate.text, study=Study.objects.filter(slug=first["study"]).first(),
                submission=Submission.objects.filter(pk=first["submission"]).first(),
                vote_study=candidate.vote_study, votes=candidate.votes, voters=candidate.voters,
                details={"kind": BASELINE, "status": candidate.status, "sources": candidate.sources})
            if created:
                made.append(reference)
    return made


def approve_voted(user, version) -> list[JudgeReference]:
    """Approve every candidate voted valid that is not approved yet (none: an empty list)."""
    judge_references.require_approver(user)
    tokens = [c.token for c in _by_token(version).values() if c.status == VALID and c.approved is None]
    return approve(user, version, tokens) if tokens else []

