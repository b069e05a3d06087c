"""The CVRR-ES QA pool: the pairs people kept or fixed in filtration (seeds/003 §3.2 Stage 3; SPEC §4
"Curation" 4), as `qa` items of an unfrozen pool version (`POOL_LABEL`) that is frozen into the benchmark.

- **Only through a person's decision** (`apply_outcome`, the `cvrr_qa` proposal kind's `on_outcome`
  hook, run in the decision's transaction): a pair kept (accepted) or fixed (corrected) becomes a
  `qa` item in the release importer's shape (`dimension`, `video_id`, `question`, `answer`,
  `caption`, `question_kind`) with the video item's library video under role `video`, and a
  `CurationRecord` (stage `stages.FILTERED`, the deciding person as author, `working["source"]`:
  the proposal, its set, the decision, the outcome, the named reason, the model and who decided
  when; `working["proposed"]`: the model's own pair; `working["flags"]`). A later decision that keeps
  or fixes it again rewrites the item; one that removes it (or leaves it disputed) takes the item
  out of the pool. A pool version that has been frozen refuses both: nothing is recorded then.
- **The pool version** (`pool_version`): the newest unfrozen CVRR-ES version labelled `qa-pool…`,
  made when there is none (`qa-pool`, or `qa-pool-2`, … when the earlier ones were frozen).
- **Sent back** (`mark_returned`): a kept pair that experts found wrong goes back to stage
  `stages.RETURNED` with the reason, who sent it and when (`working["returned"]`, a list); the
  filtration study makes it reviewable again (`annotation.benchmarks.cvrr.filtration.return_to_filtration`).
- **People's decisions** (`human_decisions`, the benchmark's registry hook): on the question "the pair", the
  filtration decision that kept or fixed it (`working["source"]`) and every send-back (`working["returned"]`);
  the latest counts, so a pair sent back is not frozen until the filtration keeps or fixes it again.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import IntegrityError

from annotation import curation_stages, decisions
from annotation.benchmarks import registry
from annotation.benchmarks.cvrr import stages
from annotation.curation_models import CurationRecord
from annotation.models import Benchmark, BenchmarkItem, BenchmarkVersion, FrozenError, ItemMedia
from annotation.payloads import validate_payload
from annotation.versions import add_item
from generation.models import Proposal, ProposalDecision
from generation.proposals import ProposalError, provenance, task_kind

SLUG = "cvrr"
POOL_LABEL = "qa-pool"
APPROVED = (Proposal.Outcome.ACCEPTED, Proposal.Outcome.CORRECTED)
PAIR_FIELDS = ("question", "answer", "question_kind")
QUESTION = "the pair"  # what filtration decisions and send-backs settle (`human_decisions`)
KEPT_AS = {Proposal.Outcome.ACCEPTED: "kept", Proposal.Outcome.CORRECTED: "fixed"}


def benchmark() -> Benchmark:
    definition = registry.get(SLUG)
    found, _ = Benchmark.objects.get_or_create(slug=SLUG, defaults={"name": definition.name,
                                                                    "description": definition.description})
    return found


def pool_version(user=None) -> BenchmarkVersion:
    """The unfrozen QA pool version (see the module docstring), made when missing."""
    bench = benchmark()
    found = (BenchmarkVersion.objects.filter(benchmark=bench, label__startswith=POOL_LABEL, frozen=False)
             .order_by("-created_at", "-pk").first())
    if found is not None:
        return found
    taken = set(BenchmarkVersion.objects.filter(benchmark=bench, label__startswith=POOL_LABEL)
                .values_list("label", flat=True))
    number = 1
    while (POOL_LABEL if number == 1 else f"{POOL_LABEL}-{number}") in taken:
        number += 1
    label = POOL_LABEL if number == 1 else f"{POOL_LABEL}-{number}"
    version, _ = BenchmarkVersion.objects.get_or_create(
        benchmark=bench, label=label,
        defaults={"created_by": user, "source": BenchmarkVersion.Source.CURATION,
                  "description": "QA pairs kept or fixed in the CVRR-ES filtration."})
    return version


def records():
    """The curation records of the QA pairs kept in filtration (in any version)."""
    return (CurationRecord.objects.filter(item__version__benchmark__slug=SLUG, item__payload__kind="qa",
                                          working__source__proposal__isnull=False)
            .select_related("item__version").order_by("item_id"))


def record_of(proposal_id: int, *, lock: bool = False) -> CurationRecord | None:
    """The curation record of the pool item a proposal became, if any."""
    found = records().filter(working__source__proposal=proposal_id)
    if lock:
        found = found.select_for_update(of=("self",))
    return found.order_by("-pk").first()


def record_of_item(item_id: int, *, lock: bool = False) -> CurationRecord | None:
    """The curation record of a kept pair's item, if it is one."""
    found = records().filter(item_id=item_id)
    if lock:
        found = found.select_for_update(of=("self",))
    return found.first()


def pair_payload(proposal: Proposal, fields: dict, video_item: BenchmarkItem | None) -> dict:
    """The pool item's payload (the release importer's shape)."""
    inputs = proposal.inputs if isinstance(proposal.inputs, dict) else {}
    video = (video_item.payload or {}) if video_item is not None else {}
    payload = {"kind": "qa", "dimension": video.get("dimension") or inputs.get("dimension"),
               "video_id": video.get("video_id") or inputs.get("video"),
               "question": fields["question"], "answer": fields["answer"]}
    caption = video.get("caption") or inputs.get("caption")
    if caption:
        payload["caption"] = caption
    if fields.get("question_kind"):
        payload["question_kind"] = fields["question_kind"]
    return payload


def _video_media(video_item: BenchmarkItem | None) -> dict:
    if video_item is None:
        return {}
    found = ItemMedia.objects.filter(item=video_item, role="video", video__isnull=False).select_related("video").first()
    return {"video": found.video} if found else {}


def _refuse_frozen(record: CurationRecord) -> None:
    if record.item.version.frozen:
        raise ProposalError(f"Version {record.item.version} is frozen: its QA pairs cannot change.")


def apply_outcome(proposal: Proposal, decision: ProposalDecision, outcome: str, final_fields: dict | None) -> None:
    """Carry a kept or fixed pair to the pool, or take out the item of a pair a later decision removed
    (see the module docstring). Runs in `decide`'s transaction."""
    record = record_of(proposal.pk, lock=True)
    if outcome not in APPROVED:
        if record is not None:
            _refuse_frozen(record)
            record.item.delete()
        return
    inputs = proposal.inputs if isinstance(proposal.inputs, dict) else {}
    video_item = BenchmarkItem.objects.filter(pk=inputs.get("item_id"), version__benchmark__slug=SLUG,
                                              payload__kind="video").first() \
        if isinstance(inputs.get("item_id"), int) else None
    if video_item is None and record is None:
        raise ProposalError(f"Proposal #{proposal.pk} names no CVRR-ES video under curation: its pair cannot be kept.")
    payload = pair_payload(proposal, final_fields, video_item)
    working = {"source": provenance(proposal, decision, outcome),
               "proposed": {name: proposal.fields.get(name) for name in PAIR_FIELDS},
               "flags": task_kind(proposal.task_kind).flags_for(final_fields, inputs),
               "video_item": video_item.pk if video_item is not None else None}
    if record is not None:
        _refuse_frozen(record)
        working["returned"] = (record.working or {}).get("returned", [])
        try:
            validate_payload(SLUG, payload)
            record.item.payload = payload
            record.item.save(update_fields=["payload"])
        except ValidationError as exc:
            raise ProposalError("The pair does not fit CVRR-ES's items: " + "; ".join(exc.messages)) from None
        curation_stages.move(record, stages.FILTERED, by=decision.decided_by, reason="kept in filtration",
                             working=working)
        return
    version = pool_version(decision.decided_by)
    external_id = f"{payload['dimension']}:{payload['video_id']}:p{proposal.pk}"
    try:
        item = add_item(version, external_id, payload, media=_video_media(video_item))
    except FrozenError as exc:
        raise ProposalError(" ".join(exc.messages)) from None
    except ValidationError as exc:
        raise ProposalError("The pair does not fit CVRR-ES's items: " + "; ".join(exc.messages)) from None
    except IntegrityError:
        raise ProposalError(f"Version {version} already holds an item {external_id!r}.") from None
    curation_stages.start(item=item, stage=stages.FILTERED, author=decision.decided_by, by=decision.decided_by,
                          reason="kept in filtration", working=working)


def mark_returned(record: CurationRecord, reason: str, by, when) -> CurationRecord:
    """Set a kept pair's stage to `stages.RETURNED`, with the reason, who and when (`working["returned"]`)."""
    working = dict(record.working or {})
    working["returned"] = [*working.get("returned", []),
                           {"reason": reason, "by": by.get_username(), "by_id": by.pk, "at": when.isoformat()}]
    return curation_stages.move(record, stages.RETURNED, by=by, reason=reason, working=working)


def human_decisions(version: BenchmarkVersion) -> list[decisions.Decision]:
    """The filtration decision that kept or fixed each pair of `version`, and every send-back after it (see the
    module docstring)."""
    found = []
    for record in records().filter(item__version=version):
        working = record.working or {}
        source = working.get("source") or {}
        found.append(decisions.Decision(
            record.item_id, QUESTION, decisions.ACCEPTED, "the CVRR-ES filtration",
            decisions.moment(source.get("decided_at"), record.created_at), by=source.get("decided_by", ""),
            reason=source.get("reason", ""), action=KEPT_AS.get(source.get("outcome"), "kept")))
        for sent in working.get("returned") or []:
            at = decisions.moment(sent.get("at"))
            if at is not None:
                found.append(decisions.Decision(
                    record.item_id, QUESTION, decisions.SENT_BACK, "the CVRR-ES curation", at, by=sent.get("by", ""),
                    reason=sent.get("reason", ""), action="sent back to filtration"))
    return found
