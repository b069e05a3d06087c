"""NL-EYE prompt augmentation (§3 step 2, App. E.1; SPEC §3 Curation 2): a text model rewrites a
triplet's three short scenes into detailed image prompts that describe the same people, objects and
environment identically, and a person checks that the rewrite did not change the content (the
paper's "the boy is crying" may become "the curly redhead boy with the striped green t-shirt is
crying", never "the teenager is crying") and edits it.

- **Proposal kind** `nleye_prompts` (`PROMPTS`): inputs are the triplet's `item_id`, `sample_id`, its
  three scenes (`premise`, `hypothesis1`, `hypothesis2`), `plausible` (1 or 2, the item's label) and,
  optionally, the interacting `components` (a list) and the `environment` a curator names, as the
  paper's designers did. The prompt is the paper's (App. E.1, quoted in `PAPER_INSTRUCTION`), with
  its placeholders filled in (or, without names, the model asked to pick the interacting components
  and the environment itself), its worked example, and its "return in a JSON format" spelled out as
  one JSON object with the kind's fields: `components` and `environment` (the looks the model gave
  them), and the three rewritten captions `premise`, `hypothesis1`, `hypothesis2`. Parsing is the
  strict parsing of `generation.proposals`: anything but exactly that object is malformed, with
  the reason. Reviewers see each rewritten caption as a word-level diff against its scene
  (`compare_with`).
- **Approval** (`apply_outcome`, the kind's `on_outcome` hook): when a curator accepts or corrects a
  proposal (directly or through a review study), the final captions become the triplet's prompts in
  its `CurationRecord.working["prompts"]` ({"premise", "hypothesis1", "hypothesis2"}), the looks in
  `working["prompt_looks"]`, where they came from in `working["prompts_provenance"]` (proposal, set,
  decision, outcome, backend, model id, revision, who decided and when) and the stage becomes
  `prompts_approved` (approved prompts take a triplet that had gone further back to this stage:
  its images, explanation and checks were made from other prompts). A later decision that rejects
  the proposal whose prompts are in use takes them out again (stage `scenes_accepted`). Nothing is
  written before a decision, and the item's payload is never touched. A triplet that is no longer
  under curation, or whose version is frozen, refuses the approval.
- **Starting** (`start_augmentation`): one proposal set over chosen triplets under curation, for one
  model, and its generation job (`generation.proposals.start_proposals`).

A triplet's scenes are those its scene writer wrote (`working["scenes"]`, with the three slots), or
else the item's own scene descriptions.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from annotation import curation_stages
from annotation.benchmarks.nleye import stages
from annotation.curation_models import CurationRecord
from config.roles import ADMIN, CURATOR, has_role
from generation import proposals
from generation.models import Proposal, ProposalDecision, ProposalSet
from generation.proposals import ProposalError, ProposalField, ProposalTask, chat

SLUG = "nleye"
KIND = "nleye_prompts"
SLOTS = stages.SLOTS
APPROVED = (Proposal.Outcome.ACCEPTED, Proposal.Outcome.CORRECTED)
MAX_PROMPT = 2000
MAX_COMPONENTS = 6

# App. E.1, "Prompt augmentation", word for word but for the placeholders and the answer format.
PAPER_INSTRUCTION = (
    "Describe visually a specific looks of {subjects}. keep it short and concise, and avoid NSFW words. and "
    "integrate these details into every reference of them in the following captions smoothly and consistently. "
    "do not change the content of the captions besides the visual description integrations. return in a JSON "
    "format: {answer_format}\n"
    "Note: integrate the environment only if it fits the context of the caption."
)
UNNAMED_SUBJECTS = ("the interacting components of the captions (the people, animals and objects that interact "
                    "in them) and their environment")
CAPTION_NAMES = {"premise": "first image caption", "plausible": "plausible second image caption",
                 "implausible": "implausible second image caption"}
# App. E.1's worked example; its response written in this kind's JSON answer.
EXAMPLE = {
    "components": ["little child", "vaccine"], "environment": "nurse room",
    "premise": "a child gets a vaccine.",
    "plausible": "a child cries after getting a vaccine.",
    "implausible": "a child smiles after getting a vaccine.",
    "response": {
        "components": "a short curly-haired child wearing a green t-shirt; a vaccine in a silver syringe",
        "environment": "a nurse's room filled with toys",
        "premise": "a short curly-haired child wearing a green t-shirt receives a vaccine with a silver syringe in "
                   "a nurse's room filled with toys.",
        "hypothesis1": "the short curly-haired child in a green t-shirt cries after receiving a vaccine in the "
                       "toy-filled nurse room.",
        "hypothesis2": "the short curly-haired child in a green t-shirt smiles after receiving a vaccine in the "
                       "nurse's room.",
    },
}


def _subjects(components: list[str], environment: str) -> str:
    """The paper's "<interacting component1>, <interacting component2> and <environment>"."""
    names = [*components, environment] if environment else list(components)
    if not names:
        return UNNAMED_SUBJECTS
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def answer_format(plausible: int) -> str:
    """The JSON object the model answers with: the looks, then the three captions under their slots."""
    hypotheses = {1: ("plausible", "implausible"), 2: ("implausible", "plausible")}[plausible]
    shape = {"components": "<the specific looks of the interacting components>",
             "environment": "<the specific looks of the environment>",
             "premise": f"<improved {CAPTION_NAMES['premise']}>",
             "hypothesis1": f"<improved {CAPTION_NAMES[hypotheses[0]]}>",
             "hypothesis2": f"<improved {CAPTION_NAMES[hypotheses[1]]}>"}
    return json.dumps(shape, ensure_ascii=False) + ". Reply with this JSON object only."


def _described(components: list[str], environment: str, premise: str, plausible: str, implausible: str) -> str:
    """The paper's way of naming the parts of a triplet: "interacting component1: ..., first image caption: ..."."""
    parts = [f"interacting component{n}: {name}" for n, name in enumerate(components, start=1)]
    if environment:
        parts.append(f"environment: {environment}")
    parts += [f"{CAPTION_NAMES['premise']}: {premise}", f"{CAPTION_NAMES['plausible']}: {plausible}",
              f"{CAPTION_NAMES['implausible']}: {implausible}"]
    text = ", ".join(parts)
    return text if text.endswith((".", "!", "?")) else f"{text}."


def build_prompt(inputs: dict, options: dict) -> list:
    """The chat for one triplet (see the module docstring); `options` may carry a `system` message."""
    plausible = int(inputs["plausible"])
    if plausible not in (1, 2):
        raise ValueError(f"plausible must be 1 or 2, not {plausible}")
    components = [str(name).strip() for name in inputs.get("components") or [] if str(name).strip()]
    environment = str(inputs.get("environment") or "").strip()
    hypotheses = (inputs["hypothesis1"], inputs["hypothesis2"])
    example = _described(EXAMPLE["components"], EXAMPLE["environment"], EXAMPLE["premise"], EXAMPLE["plausible"],
                         EXAMPLE["implausible"])
    triplet = _described(components, environment, inputs["premise"], hypotheses[plausible - 1],
                         hypotheses[2 - plausible])
    text = "\n".join([
        PAPER_INSTRUCTION.format(subjects=_subjects(components, environment), answer_format=answer_format(plausible)),
        f"For example: {example} Response: {json.dumps(EXAMPLE['response'], ensure_ascii=False)}",
        "",
        f"{triplet} Response:",
    ])
    return chat([text], system=options.get("system", ""))


def apply_outcome(proposal: Proposal, decision: ProposalDecision, outcome: str, final_fields: dict | None) -> None:
    """Carry an approved proposal's prompts to its triplet's curation record, or take back the prompts
    of a proposal a later decision rejected (see the module docstring). Runs in `decide`'s transaction."""
    item_id = proposal.inputs.get("item_id") if isinstance(proposal.inputs, dict) else None
    record = (CurationRecord.objects.select_for_update(of=("self",)).select_related("item__version")
              .filter(item_id=item_id).first() if isinstance(item_id, int) else None)
    approved = outcome in APPROVED
    if record is None:
        if approved:
            raise ProposalError(f"Item #{item_id} is not a triplet under curation: its prompts cannot be approved.")
        return
    working = dict(record.working or {})
    in_use = (working.get("prompts_provenance") or {}).get("proposal") == proposal.pk
    if not approved and not in_use:
        return
    if record.item.version.frozen:
        raise ProposalError(f"Version {record.item.version} is frozen: the prompts of its triplets cannot change.")
    if approved:
        working["prompts"] = {slot: final_fields[slot] for slot in SLOTS}
        working["prompt_looks"] = {name: final_fields[name] for name in ("components", "environment")}
        working["prompts_provenance"] = {
            "proposal": proposal.pk, "proposal_set": proposal.proposal_set_id, "decision": decision.pk,
            "outcome": outcome, "backend": proposal.backend, "model_id": proposal.model_id,
            "revision": proposal.revision, "decided_by": decision.decided_by.get_username(),
            "decided_by_id": decision.decided_by_id, "decided_at": decision.decided_at.isoformat()}
        stage = stages.PROMPTS_APPROVED
    else:
        for key in ("prompts", "prompt_looks", "prompts_provenance"):
            working.pop(key, None)
        stage = stages.SCENES_ACCEPTED
    curation_stages.move(record, stage, by=decision.decided_by, reason=f"prompts {outcome}", working=working)


PROMPTS = proposals.register(ProposalTask(
    name=KIND, label="NL-EYE: scenes augmented into image prompts",
    fields=(ProposalField("components", label="components' looks", max_length=MAX_PROMPT),
            ProposalField("environment", label="environment's looks", max_length=MAX_PROMPT),
            *(ProposalField(slot, label=f"{slot} prompt", max_length=MAX_PROMPT) for slot in SLOTS)),
    build_prompt=build_prompt, required_inputs=("item_id", *SLOTS, "plausible"),
    review_inputs=("sample_id", *SLOTS, "plausible", "components", "environment"),
    compare_with={slot: slot for slot in SLOTS}, on_outcome=apply_outcome,
    instructions="Check that each prompt says what its scene says, with the same people, objects and environment "
                 "described the same way in all three: details may be added, nothing changed or left out "
                 "(\"the boy\" must not become \"the teenager\").",
), replace=True)


# --- Starting an augmentation ---------------------------------------------------------------------

def source_key(item_id: int) -> str:
    """The `source_key` of a triplet's prompt proposals."""
    return f"{SLUG}:{item_id}:prompts"


def scenes_of(record: CurationRecord) -> dict:
    """The triplet's three scenes: as its scene writer wrote them, else the item's scene descriptions."""
    written = (record.working or {}).get("scenes")
    if isinstance(written, dict) and all(isinstance(written.get(slot), str) and written[slot].strip()
                                         for slot in SLOTS):
        return {slot: written[slot].strip() for slot in SLOTS}
    payload = record.item.payload or {}
    return {slot: str(payload.get(slot) or "").strip() for slot in SLOTS}


def clean_components(components: Iterable[str] | str | None) -> list[str]:
    """The interacting components a curator named: a list, or one text separated by commas or lines."""
    if components is None:
        return []
    if isinstance(components, str):
        components = components.replace("\n", ",").split(",")
    names = [str(name).strip() for name in components if str(name).strip()]
    if len(names) > MAX_COMPONENTS:
        raise ProposalError(f"Name at most {MAX_COMPONENTS} interacting components.")
    if any(len(name) > 200 for name in names):
        raise ProposalError("An interacting component's name is at most 200 characters long.")
    return names


def triplet_records(item_ids: Iterable[int]):
    """The curation records of these NL-EYE items, by item id; ProposalError naming the ids that are not
    triplets under curation."""
    ids = sorted(set(item_ids))
    if not ids:
        raise ProposalError("Choose at least one triplet.")
    found = {record.item_id: record for record in CurationRecord.objects.filter(
        item_id__in=ids, item__version__benchmark__slug=SLUG).select_related("item__version")}
    missing = [str(pk) for pk in ids if pk not in found]
    if missing:
        raise ProposalError(f"No NL-EYE triplet under curation with id {', '.join(missing)}.")
    return found


def triplet_entries(item_ids: Iterable[int], *, components=None, environment: str = "") -> list[dict]:
    """Proposal entries, one per triplet under curation (in id order). ProposalError for an unknown id,
    a frozen version, a missing scene or a label that is neither 1 nor 2."""
    names = clean_components(components)
    environment = (environment or "").strip()
    if len(environment) > 200:
        raise ProposalError("The environment's name is at most 200 characters long.")
    entries = []
    for item_id, record in sorted(triplet_records(item_ids).items()):
        item = record.item
        if item.version.frozen:
            raise ProposalError(f"Triplet #{item_id} belongs to frozen version {item.version}.")
        scenes = scenes_of(record)
        empty = [slot for slot in SLOTS if not scenes[slot]]
        if empty:
            raise ProposalError(f"Triplet #{item_id} has no {', '.join(empty)} scene yet.")
        label = (item.payload or {}).get("label")
        if label not in (1, 2) or isinstance(label, bool):
            raise ProposalError(f"Triplet #{item_id} does not say which hypothesis is plausible (label 1 or 2).")
        inputs = {"item_id": item_id, "sample_id": str(item.payload.get("sample_id") or item.external_id),
                  **scenes, "plausible": label}
        if names:
            inputs["components"] = names
        if environment:
            inputs["environment"] = environment
        entries.append({"key": source_key(item_id), "inputs": inputs})
    return entries


def start_augmentation(item_ids: Iterable[int], *, user, backend: str, model_id: str, revision: str = "",
                       params: dict | None = None, batch_size: int = 8, backend_options: dict | None = None,
                       components=None, environment: str = "", name: str = "") -> ProposalSet:
    """A proposal set of kind `nleye_prompts` over these triplets and its generation job; curators and
    admins only. ProposalError says what is refused; nothing is created then."""
    if user is None or not has_role(user, CURATOR, ADMIN):
        raise ProposalError("Only curators and admins start prompt augmentations.")
    entries = triplet_entries(item_ids, components=components, environment=environment)
    count = len(entries)
    return proposals.start_proposals(
        KIND, entries, user=user, backend=backend, model_id=model_id, revision=revision, params=params,
        batch_size=batch_size, backend_options=backend_options,
        name=name or f"NL-EYE prompts of {count} triplet{'s' if count != 1 else ''} by {model_id}"[:200])
