"""C-VQA-Real counterfactual items (seeds/001 §3.1; SPEC §2): a source question becomes a `real` item
(query and answer = the original question and answer, `new_query`, `new_answer`, `type` direct | indirect |
boolean, the source's image attached) in an unfrozen counterfactuals version (label `DEFAULT_LABEL` unless
named; made when missing), only in two ways:

- a proposal of kind `cvqa_counterfactual` that a person accepted or corrected (`apply_proposal`, its
  `on_outcome`, in the decision's transaction): the item's `CurationRecord` is at stage `PROPOSED` with
  `working["counterfactual"]` = {source item, group, presupposition, the model's fields, and
  `generation.proposals.provenance`}. A later correction rewrites the item, a later rejection removes it,
  while it is still at `PROPOSED` (afterwards the decision is refused);
- a curator writing a numerical-indirect item by hand (`write_indirect`): stage `WRITTEN`, with who and when.

A source question has at most one counterfactual item. Both stages wait for the two-person verification
(§3.2): a version holding items at either stage cannot be frozen (`freeze_check`).
"""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from annotation import curation_stages, versions
from annotation.benchmarks.cvqa import counterfactual_groups as groups
from annotation.benchmarks.cvqa import sources
from annotation.benchmarks.cvqa.source_reading import ROLE
from annotation.curation_models import CurationRecord
from annotation.models import BenchmarkItem, BenchmarkVersion
from annotation.payloads import validate_payload
from config.roles import ADMIN, CURATOR, has_role
from generation.models import Proposal, ProposalDecision
from generation.proposals import ProposalError, provenance

SLUG = sources.SLUG
DEFAULT_LABEL = "counterfactuals"
PROPOSED, WRITTEN = "proposed", "written"  # CurationRecord stages, before verification
ADJUDICATION, VERIFIED, REMOVED = "adjudication", "verified", "removed"  # after verification (`verification`)
UNVERIFIED = (PROPOSED, WRITTEN)
curation_stages.declare({
    sources.SOURCE: set(),
    PROPOSED: {ADJUDICATION, VERIFIED, REMOVED},
    WRITTEN: {ADJUDICATION, VERIFIED, REMOVED},
    VERIFIED: {ADJUDICATION},  # the answers that count no longer agree
    ADJUDICATION: {VERIFIED, REMOVED},
    REMOVED: set(),
})
WORKING_KEY = "counterfactual"
APPROVED = (Proposal.Outcome.ACCEPTED, Proposal.Outcome.CORRECTED)
REFUSAL_PHRASE = "not verified yet"
MAX_TEXT = 500
LABEL_LENGTH = BenchmarkVersion._meta.get_field("label").max_length


class CounterfactualError(ProposalError):
    """A counterfactual item that cannot be written (the message says why); `status` for pages."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.status = status


def source_item(item_id) -> BenchmarkItem | None:
    """The C-VQA source question with this id, or None."""
    if not isinstance(item_id, int) or isinstance(item_id, bool):
        return None
    return (BenchmarkItem.objects.filter(pk=item_id, version__benchmark__slug=SLUG, payload__kind="source")
            .select_related("version").prefetch_related("media__image").first())


def items_from(source_ids) -> dict[int, BenchmarkItem]:
    """{source item id: its counterfactual item} for these source questions."""
    records = CurationRecord.objects.filter(item__version__benchmark__slug=SLUG,
                                            working__counterfactual__source_item__in=list(source_ids))
    return {record.working[WORKING_KEY]["source_item"]: record.item for record in records.select_related("item")}


def target_version(label: str, *, lock: bool = True) -> BenchmarkVersion | None:
    """The unfrozen counterfactuals version `label` (made when missing when `lock`); CounterfactualError for a
    frozen one or one holding source questions."""
    label = (label or "").strip()
    if not label:
        raise CounterfactualError("Name the counterfactuals version.")
    if len(label) > LABEL_LENGTH:
        raise CounterfactualError(f"A version label is at most {LABEL_LENGTH} characters.")
    found = BenchmarkVersion.objects.filter(benchmark__slug=SLUG, label=label)
    version = (found.select_for_update() if lock else found).first()
    if version is None:
        if not lock:
            return None
        return BenchmarkVersion.objects.create(
            benchmark=sources.benchmark(), label=label, source=BenchmarkVersion.Source.CURATION,
            description="C-VQA-Real counterfactual questions under curation (proposed or written, then verified).")
    if version.frozen:
        raise CounterfactualError(f"Version {version} is frozen: counterfactual questions go to an unfrozen "
                                  "version.", status=409)
    if version.items.filter(payload__kind="source").exists():
        raise CounterfactualError(f"Version {version} holds source questions: counterfactual questions go to "
                                  "another version.")
    return version


def _payload(source: BenchmarkItem, group: str, new_query: str, new_answer: str) -> dict:
    image = source.media.get(role=ROLE).image
    return {"kind": "real", "img_path": image.original_name, "query": source.payload["question"],
            "answer": source.payload["answer"], "new_query": new_query, "new_answer": new_answer, "type": group}


def _create(source: BenchmarkItem, label: str, group: str, new_query: str, new_answer: str, *, stage: str,
            author, working: dict) -> BenchmarkItem:
    existing = items_from([source.pk]).get(source.pk)
    if existing is not None:
        raise CounterfactualError(f"{source.external_id} already has its counterfactual question "
                                  f"({existing.external_id}).", status=409)
    version = target_version(label)
    external_id = f"{group}:{source.external_id}"[:128]
    if version.items.filter(external_id=external_id).exists():
        raise CounterfactualError(f"{version.label} already holds {external_id}.", status=409)
    try:
        item = versions.add_item(version, external_id, _payload(source, group, new_query, new_answer),
                                 {ROLE: source.media.get(role=ROLE).image})
    except ValidationError as exc:
        raise CounterfactualError("The counterfactual is not valid: " + "; ".join(exc.messages)) from None
    curation_stages.start(item=item, stage=stage, author=author, by=author, working={WORKING_KEY: {
        "source_item": source.pk, "source_version": source.version_id, "source_external_id": source.external_id,
        "group": group, **working}})
    return item


# --- Proposals accepted by a person ------------------------------------------------------------------

def _record_of_proposal(proposal: Proposal) -> CurationRecord | None:
    return (CurationRecord.objects.select_for_update(of=("self",)).select_related("item__version")
            .filter(item__version__benchmark__slug=SLUG, working__counterfactual__source__proposal=proposal.pk)
            .first())


def apply_proposal(proposal: Proposal, decision: ProposalDecision, outcome: str, final_fields: dict | None) -> None:
    """Write, rewrite or take back the counterfactual item of an accepted, corrected or rejected proposal."""
    inputs = proposal.inputs if isinstance(proposal.inputs, dict) else {}
    record = _record_of_proposal(proposal)
    if record is not None and (record.stage != PROPOSED or record.item.version.frozen):
        raise ProposalError(f"{record.item.external_id} has moved on from its proposal (stage {record.stage!r}): "
                            "it is no longer changed by decisions on the proposal.")
    if outcome not in APPROVED:
        if record is not None:
            record.item.delete()
        return
    source = source_item(inputs.get("item_id"))
    if source is None:
        raise ProposalError(f"Proposal #{proposal.pk} names no C-VQA source question.")
    group = inputs.get("group")
    if inputs.get("question") != source.payload["question"] or inputs.get("answer") != source.payload["answer"]:
        raise ProposalError(f"The question or answer of {source.external_id} changed since this proposal was made: "
                            "propose its counterfactual again.")
    try:
        new_answer = groups.check_answers(group, source.payload["answer"], final_fields["new_answer"])
    except ValueError as exc:
        raise ProposalError(f"The counterfactual is not valid: {exc}.") from None
    working = {"presupposition": final_fields["presupposition"], "source": provenance(proposal, decision, outcome),
               "proposed": dict(proposal.fields or {})}
    if record is not None:
        item = record.item
        item.payload = {**item.payload, "new_query": final_fields["new_question"], "new_answer": new_answer}
        try:
            validate_payload(SLUG, item.payload)
        except ValidationError as exc:
            raise ProposalError("The counterfactual is not valid: " + "; ".join(exc.messages)) from None
        item.save(update_fields=["payload"])
        record.working = {WORKING_KEY: {**record.working[WORKING_KEY], **working}}
        record.save(update_fields=["working", "updated_at"])
        return
    _create(source, str(inputs.get("target") or DEFAULT_LABEL), group, final_fields["new_question"], new_answer,
            stage=PROPOSED, author=decision.decided_by, working=working)


# --- Numerical-indirect items written by people ---------------------------------------------------------

def write_indirect(user, source_id, new_query: str, new_answer: str, *, presupposition: str = "",
                   label: str = DEFAULT_LABEL) -> BenchmarkItem:
    """A numerical-indirect counterfactual item written by `user` (a curator or admin) for a numerical source
    question, at stage `WRITTEN`; CounterfactualError (nothing written) for anything refused."""
    if user is None or not has_role(user, CURATOR, ADMIN):
        raise CounterfactualError("Only curators and admins write counterfactual questions.", status=403)
    source = source_item(source_id)
    if source is None:
        raise CounterfactualError(f"There is no C-VQA source question #{source_id}.", status=404)
    if source.payload.get("type") != "numerical":
        raise CounterfactualError(f"{source.external_id} is a {source.payload.get('type')} question: indirect "
                                  "counterfactuals are written for numerical questions.")
    new_query, presupposition = str(new_query or "").strip(), str(presupposition or "").strip()
    if not new_query:
        raise CounterfactualError("Write the new question.")
    if len(new_query) > MAX_TEXT or len(presupposition) > MAX_TEXT:
        raise CounterfactualError(f"The new question and the presupposition are at most {MAX_TEXT} characters.")
    try:
        answer = groups.check_answers(groups.INDIRECT, source.payload["answer"], new_answer)
    except ValueError as exc:
        raise CounterfactualError(f"The counterfactual is not valid: {exc}.") from None
    with transaction.atomic():
        return _create(source, label, groups.INDIRECT, new_query, answer, stage=WRITTEN, author=user, working={
            "presupposition": presupposition, "written": {"by": user.get_username(), "by_id": user.pk,
                                                          "at": timezone.now().isoformat()}})


def freeze_check(version) -> list[tuple[str, str]]:
    """(external id, why) for every counterfactual item of a C-VQA version not verified yet, waiting for
    adjudication, or removed (a version keeping removed items is never frozen)."""
    if version.benchmark.slug != SLUG:
        return []
    why = {PROPOSED: "two people verify each one", WRITTEN: "two people verify each one",
           ADJUDICATION: "its verifiers disagreed: a curator adjudicates it",
           REMOVED: "it was removed during verification"}
    return [(external_id, f"a counterfactual question at stage {stage!r} ({why[stage]})")
            for external_id, stage in CurationRecord.objects.filter(item__version=version, stage__in=tuple(why))
            .values_list("item__external_id", "stage")]
