"""MAIA statements written into a curation version's questions, only through proposals a person accepted
(seeds/004 §3 "Statement Collection"; SPEC §5 Curation 6). The proposal kinds are
`annotation.benchmarks.maia.statement_generation`; their `on_outcome` hooks are `apply_true` and
`apply_false`, run in the decision's transaction.

**True statements** (`maia_true_statements`, one proposal per question with its 8 statements): accepting
or correcting one writes `true_statements` into the item's payload and moves its `CurationRecord` from
`POOL_CHECKED` to `STATEMENTS`. Only a question at `POOL_CHECKED` whose pool passed its latest check (or
was overridden in review) takes them, and only when its question and answers are still the ones the
proposal was made from. A question holds the statements of one proposal: another one is refused until
a later decision rejects the first, which takes its statements out again (back to `POOL_CHECKED`) as
long as no false statement was accepted on them.

**False statements** (`maia_false_statements`, one proposal per true statement): the release needs
`false_statements` as a list of 8 strings, so accepted false statements wait in
`working["statements"]["false"]` (by pair index) until all 8 are there; then the list is written into
the payload. From then on the payload holds the texts (a person's edit changes it there) and the working
entries keep where each came from. A false statement accepted for a pair that has one (a regenerated
pair) replaces it, in the payload too once the list is written; the pair needs checking again. A later
decision that rejects the proposal a pair's statement came from takes that statement out: the list leaves
the payload again (the other 7 texts wait in the working fields, as the payload held them) until the
pair is accepted anew. A false statement is refused when its true statement has changed since.

`working["statements"]`: `{"true": {"source": provenance, "proposed": [the model's 8]}, "false":
{"<index>": {"text", "proposed", "source", "replaces"}}, "edits": [{"index", "text", "by", "by_id",
"at"}]}` (`generation.proposals.provenance`: the proposal, its set, model, and the decision).

**Stage** (`refresh_stage`): a question with both lists whose 8 pairs all pass their current checks
(`minimal_pairs.current_checks`: an automatic check, or a person's edit that passes the structural
check) is `READY`; otherwise it stays at (or returns to) `STATEMENTS`.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from annotation import curation_stages
from annotation.benchmarks.maia import minimal_pairs, pool_checks, stages
from annotation.benchmarks.maia.payload import N_ANSWERS
from annotation.curation_models import CurationRecord, ItemCheck
from annotation.models import BenchmarkItem
from annotation.payloads import validate_payload
from generation.models import Proposal, ProposalDecision
from generation.proposals import ProposalError, provenance

SLUG = minimal_pairs.BENCHMARK
APPROVED = (Proposal.Outcome.ACCEPTED, Proposal.Outcome.CORRECTED)
WORKING_KEY = "statements"
TRUE_FIELDS = tuple(f"statement_{n}" for n in range(1, N_ANSWERS + 1))
FALSE_FIELD = "false_statement"


def records():
    """The curation records of MAIA questions in unfrozen versions."""
    return (CurationRecord.objects.filter(item__version__benchmark__slug=SLUG, item__version__frozen=False,
                                          item__payload__kind="question")
            .select_related("item__version__benchmark"))


def record_for(item_id, *, lock: bool = False) -> CurationRecord | None:
    """The curation record of a MAIA question under curation (any version), or None."""
    if not isinstance(item_id, int) or isinstance(item_id, bool):
        return None
    found = CurationRecord.objects.filter(item_id=item_id, item__version__benchmark__slug=SLUG,
                                          item__payload__kind="question").select_related("item__version__benchmark")
    if lock:
        found = found.select_for_update(of=("self",))
    return found.first()


def state_of(record: CurationRecord) -> dict:
    """A copy of the record's statement working fields."""
    state = dict((record.working or {}).get(WORKING_KEY) or {})
    state["false"] = dict(state.get("false") or {})
    return state


def pool_passed(item: BenchmarkItem) -> bool:
    """Whether the latest check of the question's pool as it is now passes (automatic or a review override)."""
    check = pool_checks.latest_check(item)
    return check is not None and check.verdict == ItemCheck.Verdict.PASS


def ready_for_true(record: CurationRecord) -> bool:
    """A question waiting for its true statements: at `POOL_CHECKED`, its pool passed, none written yet."""
    payload = record.item.payload or {}
    return (record.stage == stages.POOL_CHECKED and not payload.get("true_statements")
            and len(payload.get("answers") or []) == N_ANSWERS and pool_passed(record.item))


def missing_false(record: CurationRecord) -> list[int]:
    """The pair indices of a question with true statements that have no accepted false statement yet."""
    payload = record.item.payload or {}
    trues = payload.get("true_statements") or []
    if record.stage not in (stages.STATEMENTS, stages.READY) or len(trues) != N_ANSWERS:
        return []
    if payload.get("false_statements"):
        return []
    accepted = state_of(record)["false"]
    return [index for index in range(N_ANSWERS) if str(index) not in accepted]


def _refuse_frozen(record: CurationRecord) -> None:
    if record.item.version.frozen:
        raise ProposalError(f"Version {record.item.version} is frozen: its statements cannot change.")


def _save(record: CurationRecord, payload: dict, state: dict, stage: str) -> None:
    item = record.item
    try:
        validate_payload(SLUG, payload)
    except ValidationError as exc:
        raise ProposalError("The statements do not fit MAIA's questions: " + "; ".join(exc.messages)) from None
    item.payload = payload
    item.save(update_fields=["payload"])
    curation_stages.move(record, stage, working={**(record.working or {}), WORKING_KEY: state})


def _locked_record(proposal: Proposal) -> CurationRecord:
    inputs = proposal.inputs if isinstance(proposal.inputs, dict) else {}
    record = record_for(inputs.get("item_id"), lock=True)
    if record is None:
        raise ProposalError(f"Proposal #{proposal.pk} names no MAIA question under curation.")
    _refuse_frozen(record)
    return record


# --- True statements ---------------------------------------------------------------------------

def true_texts(fields: dict) -> list[str]:
    return [fields[name] for name in TRUE_FIELDS]


def apply_true(proposal: Proposal, decision: ProposalDecision, outcome: str, final_fields: dict | None) -> None:
    """Write (or take back) a question's true statements; see the module docstring."""
    record = _locked_record(proposal)
    item = record.item
    state = state_of(record)
    current = (state.get("true") or {}).get("source", {}).get("proposal")
    payload = dict(item.payload)
    if outcome not in APPROVED:
        if current != proposal.pk:
            return
        if state["false"] or payload.get("false_statements"):
            raise ProposalError(f"False statements of {item.external_id} were accepted on these true statements: "
                                "they stay.")
        payload.pop("true_statements", None)
        state.pop("true", None)
        _save(record, payload, state, stages.POOL_CHECKED)
        return
    if current is not None and current != proposal.pk:
        raise ProposalError(f"{item.external_id} already has its true statements from proposal #{current}: "
                            "reject that one first.")
    inputs = proposal.inputs
    if inputs.get("question") != payload.get("question") or inputs.get("answers") != payload.get("answers"):
        raise ProposalError(f"The question or the answers of {item.external_id} changed since this proposal "
                            "was made: propose its true statements again.")
    texts = true_texts(final_fields)
    if current is None:
        if not ready_for_true(record):
            raise ProposalError(f"{item.external_id} is not waiting for its true statements: its pool must be "
                                f"checked and pass (stage {stages.LABELS.get(record.stage, record.stage)!r}).")
    elif (state["false"] or payload.get("false_statements")) and texts != payload.get("true_statements"):
        raise ProposalError(f"False statements of {item.external_id} were accepted on its true statements: "
                            "they cannot change.")
    payload["true_statements"] = texts
    state["true"] = {"source": provenance(proposal, decision, outcome),
                     "proposed": [proposal.fields.get(name) for name in TRUE_FIELDS]}
    stage = record.stage if record.stage in (stages.STATEMENTS, stages.READY) else stages.STATEMENTS
    _save(record, payload, state, stage)


# --- False statements --------------------------------------------------------------------------

def apply_false(proposal: Proposal, decision: ProposalDecision, outcome: str, final_fields: dict | None) -> None:
    """Keep (or take back) the false statement of one pair; see the module docstring."""
    record = _locked_record(proposal)
    item = record.item
    state = state_of(record)
    inputs = proposal.inputs
    index = inputs.get("index")
    if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < N_ANSWERS:
        raise ProposalError(f"Proposal #{proposal.pk} names no statement pair of {item.external_id}.")
    key = str(index)
    payload = dict(item.payload)
    falses = payload.get("false_statements")
    entry = state["false"].get(key)
    is_current = bool(entry) and entry.get("source", {}).get("proposal") == proposal.pk
    if outcome not in APPROVED:
        if not is_current:
            return
        if falses:  # the list leaves the payload; the other texts wait again, as the payload held them
            for other, text in enumerate(falses):
                if str(other) in state["false"]:
                    state["false"][str(other)] = {**state["false"][str(other)], "text": text}
            payload.pop("false_statements")
        del state["false"][key]
        _save(record, payload, state, stages.STATEMENTS)
        return
    trues = payload.get("true_statements") or []
    if record.stage not in (stages.STATEMENTS, stages.READY) or len(trues) != N_ANSWERS:
        raise ProposalError(f"{item.external_id} has no true statements to pair a false one with.")
    if inputs.get("true_statement") != trues[index]:
        raise ProposalError(f"True statement {index + 1} of {item.external_id} changed since this proposal was "
                            "made: regenerate its false statement.")
    text = final_fields[FALSE_FIELD]
    replaces = entry.get("source", {}).get("proposal") if entry and not is_current else None
    state["false"][key] = {"text": text, "proposed": proposal.fields.get(FALSE_FIELD),
                           "source": provenance(proposal, decision, outcome),
                           **({"replaces": replaces} if replaces else {})}
    if falses:
        falses = list(falses)
        falses[index] = text
        payload["false_statements"] = falses
    elif all(str(i) in state["false"] for i in range(N_ANSWERS)):
        payload["false_statements"] = [state["false"][str(i)]["text"] for i in range(N_ANSWERS)]
    _save(record, payload, state, stages.STATEMENTS)


# --- Stage after checks and edits ----------------------------------------------------------------

def all_pairs_pass(item: BenchmarkItem) -> bool:
    pairs = minimal_pairs.pairs_of(item.payload)
    if len(pairs) != N_ANSWERS:
        return False
    checks = minimal_pairs.current_checks(item)
    return all(index in checks and checks[index].verdict == ItemCheck.Verdict.PASS for index in range(N_ANSWERS))


def refresh_stage(record: CurationRecord) -> str:
    """`READY` when the question's 8 pairs all pass their current checks, else `STATEMENTS` (for a
    question that has reached its statements; other stages are left alone). The stage it ends at."""
    if record.stage not in (stages.STATEMENTS, stages.READY):
        return record.stage
    stage = stages.READY if all_pairs_pass(record.item) else stages.STATEMENTS
    if stage != record.stage:
        curation_stages.move(record, stage, reason="minimal-pair checks")
    return stage


def edit_false_statement(user, item: BenchmarkItem, index: int, text: str) -> minimal_pairs.PairCheck:
    """A person's rewrite of false statement `index` (`minimal_pairs.edit_false_statement`), noted in the
    question's curation record with who and when; the stage follows the pairs' checks."""
    with transaction.atomic():
        check = minimal_pairs.edit_false_statement(user, item, index, text)
        record = record_for(item.pk, lock=True)
        if record is not None:
            state = state_of(record)
            edit = {"index": index, "text": check.false_statement, "by": user.get_username(), "by_id": user.pk,
                    "at": timezone.now().isoformat()}
            state["edits"] = [*state.get("edits", []), edit]
            record.working = {**(record.working or {}), WORKING_KEY: state}
            record.save(update_fields=["working", "updated_at"])
            refresh_stage(record)
    return check
