"""The C-VQA-Real grammar pass (SPEC §2 "C-VQA-Real Verification": a final LLM pass polishes grammar, kept as a
suggestion a person accepts): a text model proposes the new question of a counterfactual item with its grammar
and spelling corrected; a person accepts, corrects or rejects the suggestion in the proposals queue.

- Kind `cvqa_grammar` (`TASK`), one proposal per counterfactual item (a `real` item with a `CurationRecord`).
  Its inputs: `item_id`, `version_id`, `external_id`, the item's `new_query` as it was when the proposal was
  made, and, for reviewers, the original `query` and the `new_answer`. Reviewers see a word diff of the
  suggestion against `new_query` (`compare_with`).
- Output (`read_output`, strict, never guessed): exactly one line `Question: <the corrected question>`.
  Anything else (more lines, another label, nothing after the label) is malformed, with the reason.
- Flags (`flags`): the suggestion changes a number (its digits or number words differ), is the current
  wording (no change needed), or does not end with a question mark.
- Outcome (`apply_grammar`, the kind's `on_outcome`, in the decision's transaction): an accepted or corrected
  suggestion becomes the item's `new_query`; `working["counterfactual"]["grammar"]` keeps
  {before, after, source: `generation.proposals.provenance`}. A later rejection of the suggestion that was
  applied puts the wording before it back; a rejection of one that was never applied changes nothing.
  Refused (ProposalError, nothing recorded) when the item's version is frozen, the item was removed
  (stage `REMOVED`), or its new question changed since the proposal was made.
- Starting (`start_grammar`): over a C-VQA counterfactuals version (unfrozen, holding `real` items with
  curation records), for its items not removed, without a grammar proposal being made or waiting for a
  decision, and whose wording is not already the outcome of an accepted grammar pass. Curators and admins only.
"""

from __future__ import annotations

import re

from django.core.exceptions import ValidationError

from annotation.benchmarks.cvqa import counterfactuals
from annotation.curation_models import CurationRecord
from annotation.models import BenchmarkItem, BenchmarkVersion
from annotation.payloads import validate_payload
from config.roles import ADMIN, CURATOR, has_role
from generation import proposals, selectors
from generation.models import Proposal, ProposalDecision, ProposalSet
from generation.proposals import ProposalError, ProposalField, ProposalTask, chat, provenance

KIND = "cvqa_grammar"
SLUG = counterfactuals.SLUG
LABEL = "Question"
GRAMMAR_KEY = "grammar"  # under record.working["counterfactual"]
REAL = "real"

INSTRUCTION = ("Correct only the grammar and spelling of the question below. Do not change its meaning, any of "
               "its numbers or what it asks: its answer must stay the same. If it needs no correction, repeat it "
               "as it is.")
FORMAT = f"Reply with exactly one line, and nothing else:\n{LABEL}: <the corrected question>"


# --- The prompt -----------------------------------------------------------------------------------------

def build_prompt(inputs: dict, options: dict) -> list:
    """The instruction, the question (with its answer, which must stay right), the one-line format."""
    question = f"{LABEL}: {str(inputs['new_query']).strip()}"
    answer = str(inputs.get("new_answer") or "").strip()
    if answer:
        question += f"\nIts answer: {answer}"
    parts = [options.get("instruction") or INSTRUCTION, question, FORMAT]
    return chat(["\n\n".join(parts)], system=options.get("system", ""))


# --- The strict reader -----------------------------------------------------------------------------------

_LINE = re.compile(r"([A-Za-z ]+?)\s*:\s*(.*)")


def read_output(text: str, inputs: dict) -> dict:
    """{"question": …} from exactly one line `Question: …`; ValueError says what is wrong."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if len(lines) != 1:
        raise ValueError(f"expected exactly one line ('{LABEL}: …'), got {len(lines)}")
    match = _LINE.fullmatch(lines[0])
    if match is None or match.group(1).strip().lower() != LABEL.lower():
        raise ValueError(f"the line must start with '{LABEL}:', not {lines[0][:80]!r}")
    value = match.group(2).strip()
    if not value:
        raise ValueError(f"'{LABEL}' is empty")
    return {"question": value}


# --- Flags ---------------------------------------------------------------------------------------------------

NUMBER_WORDS = {word: value for value, word in enumerate((
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
    "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty"))}
_NUMBER = re.compile(r"\d+|[A-Za-z]+")


def numbers(text: str) -> list[int]:
    """The numbers a text names, in digits or as words up to twenty, sorted."""
    found = []
    for token in _NUMBER.findall(text or ""):
        if token.isdigit():
            found.append(int(token))
        elif token.lower() in NUMBER_WORDS:
            found.append(NUMBER_WORDS[token.lower()])
    return sorted(found)


def flags(fields: dict, inputs: dict) -> list[str]:
    """A suggestion that changes a number, that is the current wording, or that is no question."""
    found = []
    current, suggested = str(inputs.get("new_query") or "").strip(), str(fields.get("question") or "").strip()
    before, after = numbers(current), numbers(suggested)
    if before != after:
        named = ", ".join(map(str, before)) or "none", ", ".join(map(str, after)) or "none"
        found.append(f"The suggestion changes a number ({named[0]} → {named[1]}).")
    if suggested == current:
        found.append("No change needed: the suggestion is the current wording.")
    if not suggested.endswith("?"):
        found.append("The suggestion does not end with a question mark.")
    return found


# --- The outcome ------------------------------------------------------------------------------------------------

def _record(item_id) -> CurationRecord | None:
    if not isinstance(item_id, int) or isinstance(item_id, bool):
        return None
    return (CurationRecord.objects.select_for_update(of=("self",)).select_related("item__version")
            .filter(item_id=item_id, item__version__benchmark__slug=SLUG, item__payload__kind=REAL).first())


def applied_grammar(record: CurationRecord) -> dict | None:
    """The grammar pass recorded on a counterfactual item's curation record, if any."""
    working = record.working.get(counterfactuals.WORKING_KEY) if isinstance(record.working, dict) else None
    found = working.get(GRAMMAR_KEY) if isinstance(working, dict) else None
    return found if isinstance(found, dict) else None


def _applied_by(record: CurationRecord, proposal: Proposal) -> dict | None:
    found = applied_grammar(record)
    source = found.get("source") if found else None
    return found if isinstance(source, dict) and source.get("proposal") == proposal.pk else None


def _write(record: CurationRecord, new_query: str, grammar: dict | None) -> None:
    item = record.item
    payload = {**item.payload, "new_query": new_query}
    try:
        validate_payload(SLUG, payload)
    except ValidationError as exc:
        raise ProposalError("The new question is not valid: " + "; ".join(exc.messages)) from None
    item.payload = payload
    item.save(update_fields=["payload"])
    working = dict(record.working.get(counterfactuals.WORKING_KEY) or {})
    if grammar is None:
        working.pop(GRAMMAR_KEY, None)
    else:
        working[GRAMMAR_KEY] = grammar
    record.working = {**record.working, counterfactuals.WORKING_KEY: working}
    record.save(update_fields=["working", "updated_at"])


def apply_grammar(proposal: Proposal, decision: ProposalDecision, outcome: str, final_fields: dict | None) -> None:
    """Carry an accepted or corrected suggestion to the item's new question (or take back a rejected one that
    was applied); ProposalError refuses the decision."""
    inputs = proposal.inputs if isinstance(proposal.inputs, dict) else {}
    record = _record(inputs.get("item_id"))
    if record is None:
        raise ProposalError(f"Proposal #{proposal.pk} names no C-VQA counterfactual question.")
    applied = _applied_by(record, proposal)
    approved = outcome in counterfactuals.APPROVED
    if not approved and applied is None:
        return  # a suggestion never applied: its rejection changes nothing
    item = record.item
    if item.version.frozen:
        raise ProposalError(f"Version {item.version} is frozen: the wording of {item.external_id} no longer "
                            "changes.")
    if record.stage == counterfactuals.REMOVED:
        raise ProposalError(f"{item.external_id} was removed (stage {record.stage!r}): its wording no longer "
                            "changes.")
    current = item.payload.get("new_query")
    if current != (applied["after"] if applied else inputs.get("new_query")):
        raise ProposalError(f"The new question of {item.external_id} changed since this suggestion was made: "
                            "start a grammar pass for it again.")
    before = applied["before"] if applied else current
    if not approved:
        _write(record, before, None)
        return
    after = final_fields["question"]
    _write(record, after, {"before": before, "after": after, "source": provenance(proposal, decision, outcome)})


INSTRUCTIONS = """Check the grammar and spelling suggested for a counterfactual question (the word diff shows what
changed). It must keep the question's meaning, its numbers and its answer. **Accept** it, **correct** it (your
wording is applied), or **reject** it with the reason (the question stays as it is)."""

TASK = proposals.register(ProposalTask(
    name=KIND, label="C-VQA: grammar of a counterfactual question",
    fields=(ProposalField("question", label="corrected question", max_length=counterfactuals.MAX_TEXT,
                          single_line=True),),
    build_prompt=build_prompt, reader=read_output, reads_inputs=True,
    required_inputs=("item_id", "version_id", "external_id", "new_query"),
    review_inputs=("external_id", "query", "new_query", "new_answer"),
    instructions=INSTRUCTIONS, on_outcome=apply_grammar, flags=flags,
    compare_with={"question": "new_query"},
), replace=True)


# --- Versions, entries and starting ----------------------------------------------------------------------------

def source_key(item_id: int) -> str:
    return f"{SLUG}:{item_id}:grammar"


def waiting_keys(keys) -> set[str]:
    """The keys whose grammar proposal is still being made or waits for a decision."""
    return selectors.waiting_keys(KIND, keys)


def counterfactual_items(version: BenchmarkVersion):
    """The version's counterfactual items (kind `real` with a curation record), in external id order."""
    return (version.items.filter(payload__kind=REAL, curation__isnull=False).select_related("curation")
            .order_by("external_id"))


def holds_counterfactuals(version: BenchmarkVersion) -> bool:
    return counterfactual_items(version).exists()


def counterfactual_version(version_id: int) -> BenchmarkVersion:
    """The C-VQA version #version_id holding counterfactual items (frozen or not); ProposalError otherwise."""
    found = BenchmarkVersion.objects.filter(pk=version_id, benchmark__slug=SLUG).select_related("benchmark").first()
    if found is None or not holds_counterfactuals(found):
        raise ProposalError(f"There is no C-VQA counterfactuals version #{version_id}.")
    return found


def polished(item: BenchmarkItem) -> bool:
    """Whether the item's wording is the outcome of an accepted grammar pass."""
    grammar = applied_grammar(item.curation)
    return grammar is not None and grammar.get("after") == item.payload.get("new_query")


def open_items(version: BenchmarkVersion) -> list[BenchmarkItem]:
    """The items a grammar pass is for: not removed, without a proposal waiting, not already polished."""
    items = [item for item in counterfactual_items(version) if item.curation.stage != counterfactuals.REMOVED]
    waiting = waiting_keys(source_key(item.pk) for item in items)
    return [item for item in items if source_key(item.pk) not in waiting and not polished(item)]


def entries(version: BenchmarkVersion) -> list[dict]:
    return [{"key": source_key(item.pk), "inputs": {
        "item_id": item.pk, "version_id": version.pk, "external_id": item.external_id,
        "new_query": item.payload["new_query"], "query": item.payload["query"],
        "new_answer": item.payload["new_answer"]}} for item in open_items(version)]


def start_grammar(version: BenchmarkVersion, *, user, name: str = "", **model) -> ProposalSet:
    """A `cvqa_grammar` set over the version's open counterfactual questions, and its job."""
    if user is None or not has_role(user, CURATOR, ADMIN):
        raise ProposalError("Only curators and admins start a grammar pass.")
    version = counterfactual_version(version.pk)
    if version.frozen:
        raise counterfactuals.CounterfactualError(f"Version {version} is frozen: its questions no longer change.",
                                                  status=409)
    found = entries(version)
    if not found:
        raise ProposalError(f"No counterfactual question of {version.label} waits for a grammar pass (each was "
                            "removed, already polished, or its suggestion still waits for a decision).")
    name = name or f"C-VQA grammar pass of {len(found)} question(s) of {version.label}"
    return proposals.start_proposals(KIND, found, user=user, name=name[:200],
                                     task_options={"instruction": INSTRUCTION}, **model)
