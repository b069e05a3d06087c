"""C-VQA-Real counterfactual proposals (seeds/001 §3.1; SPEC §2 "Generation"): a text model, prompted with
a group's instruction, its in-context examples and the step-by-step decomposition
(`counterfactual_groups`), proposes the counterfactual of one source question; people decide in the
proposals queue, and what they accept becomes an item through `counterfactuals.apply_proposal`.

- Kind `cvqa_counterfactual` (`TASK`), one proposal per source question. Group: a numerical question is
  `direct` unless the curator asks for `indirect`; a boolean one is `boolean`. The set's `task_options`
  hold the groups' texts as they were when it was made (`max_examples` examples each, in the curators'
  order), so its prompts do not change when curators edit the groups.
- Output (`read_output`, strict, never guessed): numerical, exactly the lines `Presupposition: …`,
  `New question: …`, `New answer: <whole number>`; boolean, `Flipped answer: yes|no`, `Presupposition: …`,
  `New question: …`, whose flipped answer must differ from the original. Anything else — a missing or
  extra line, a line out of order, a non-integer number, a word other than yes/no, an answer that was not
  flipped — is malformed, with the reason.
- Starting (`start_counterfactuals`): over a sources version, for its questions without a counterfactual
  item and without a proposal still being made or waiting for a decision. Curators and admins only.
"""

from __future__ import annotations

import re

from annotation.benchmarks.cvqa import counterfactual_groups as groups
from annotation.benchmarks.cvqa import counterfactuals, sources
from annotation.benchmarks.cvqa.source_reading import ROLE
from annotation.models import BenchmarkVersion
from config.roles import ADMIN, CURATOR, has_role
from generation import proposals, selectors
from generation.models import ProposalSet
from generation.proposals import ProposalError, ProposalField, ProposalTask, chat

KIND = "cvqa_counterfactual"
DEFAULT_EXAMPLES = 20
NUMERICAL_LINES = ("Presupposition", "New question", "New answer")
BOOLEAN_LINES = ("Flipped answer", "Presupposition", "New question")
FIELD_OF_LINE = {"Presupposition": "presupposition", "New question": "new_question", "New answer": "new_answer",
                 "Flipped answer": "new_answer"}
MAX_FIELD = counterfactuals.MAX_TEXT


def lines_of(group: str) -> tuple[str, ...]:
    return BOOLEAN_LINES if group == groups.BOOLEAN else NUMERICAL_LINES


def group_of(source_type: str, numerical_group: str = groups.DIRECT) -> str:
    return groups.BOOLEAN if source_type == "boolean" else numerical_group


# --- The prompt ------------------------------------------------------------------------------------

def _example_text(group: str, example: dict) -> str:
    values = {"Presupposition": example["presupposition"], "New question": example["new_question"],
              "New answer": example["new_answer"], "Flipped answer": example["new_answer"]}
    return "\n".join([f"Question: {example['question']}", f"Answer: {example['answer']}",
                      *(f"{line}: {values[line]}" for line in lines_of(group))])


def _format_text(group: str) -> str:
    hints = {"Presupposition": "<the counterfactual presupposition>", "New question": "<the new question>",
             "New answer": "<the new answer, a whole number>", "Flipped answer": "<yes or no, the flipped answer>"}
    return ("Reply with exactly these lines, in this order, and nothing else:\n"
            + "\n".join(f"{line}: {hints[line]}" for line in lines_of(group)))


def build_prompt(inputs: dict, options: dict) -> list:
    """Instruction, decomposition, the group's examples in the decomposition's form, the question, the format."""
    group = inputs["group"]
    texts = (options.get("groups") or {}).get(group)
    if not isinstance(texts, dict):
        raise ValueError(f"the set holds no texts for group {group!r}")
    parts = [texts["instruction"], texts["decomposition"]]
    parts += [_example_text(group, example) for example in texts["examples"]]
    parts += [f"Question: {str(inputs['question']).strip()}\nAnswer: {str(inputs['answer']).strip()}",
              _format_text(group)]
    return chat(["\n\n".join(part for part in parts if part)], system=options.get("system", ""))


# --- The strict reader -----------------------------------------------------------------------------

_LINE = re.compile(r"([A-Za-z ]+?)\s*:\s*(.*)")


def read_output(text: str, inputs: dict) -> dict:
    """The fields of an output in the group's line format; ValueError says what is wrong."""
    group = inputs.get("group")
    if group not in groups.KEYS:
        raise ValueError(f"the proposal names no counterfactual group ({group!r})")
    expected = lines_of(group)
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    values = {}
    for number, line in enumerate(lines, 1):
        if number > len(expected):
            raise ValueError(f"expected {len(expected)} lines ({', '.join(expected)}), got {len(lines)}")
        match = _LINE.fullmatch(line)
        label = expected[number - 1]
        if match is None or match.group(1).strip().lower() != label.lower():
            raise ValueError(f"line {number} must start with '{label}:', not {line[:80]!r}")
        value = match.group(2).strip()
        if not value:
            raise ValueError(f"'{label}' is empty")
        values[label] = value
    missing = [label for label in expected if label not in values]
    if missing:
        named = ", ".join(repr(label + ":") for label in missing)
        raise ValueError(f"missing the line{'s' if len(missing) > 1 else ''} {named}")
    answer_line = "Flipped answer" if group == groups.BOOLEAN else "New answer"
    values[answer_line] = groups.check_answers(group, inputs.get("answer", ""), values[answer_line])
    return {FIELD_OF_LINE[label]: value for label, value in values.items()}


def flags(fields: dict, inputs: dict) -> list[str]:
    """A numerical answer that did not change, a new question that is the original one or no question."""
    found = []
    question, new_question = str(inputs.get("question") or ""), str(fields.get("new_question") or "")
    if new_question.strip().lower() == question.strip().lower():
        found.append("The new question is the original question.")
    elif not new_question.rstrip().endswith("?"):
        found.append("The new question does not end with a question mark.")
    if inputs.get("group") != groups.BOOLEAN and str(fields.get("new_answer")) == str(inputs.get("answer")):
        found.append("The new answer is the original answer: the presupposition changes nothing.")
    return found


INSTRUCTIONS = """Check the counterfactual proposed for a source question (text only: the model did not see the
image). The new question must be the original one with a counterfactual presupposition, still about the
image; the new answer must follow (numerical: the computed whole number; boolean: the flipped yes/no).
**Accept** it, **correct** it, or **reject** it with the reason. Accepted ones become C-VQA-Real items
(stage "proposed"), which two people then verify."""

TASK = proposals.register(ProposalTask(
    name=KIND, label="C-VQA: a counterfactual question and answer",
    fields=(ProposalField("presupposition", max_length=MAX_FIELD, single_line=True),
            ProposalField("new_question", label="new question", max_length=MAX_FIELD, single_line=True),
            ProposalField("new_answer", label="new answer", max_length=20, single_line=True)),
    build_prompt=build_prompt, reader=read_output, reads_inputs=True,
    required_inputs=("item_id", "group", "question", "answer"),
    review_inputs=("external_id", "group", "question", "answer", "answers"),
    instructions=INSTRUCTIONS, on_outcome=counterfactuals.apply_proposal, flags=flags,
    compare_with={"new_question": "question"},
), replace=True)


# --- Entries and starting -----------------------------------------------------------------------------

def source_key(item_id: int) -> str:
    return f"{sources.SLUG}:{item_id}:counterfactual"


def waiting_keys(keys) -> set[str]:
    """The keys whose proposal is still being made or waits for a decision."""
    return selectors.waiting_keys(KIND, keys)


def sources_version(version_id: int) -> BenchmarkVersion:
    found = sources.source_versions().filter(pk=version_id).first()
    if found is None:
        raise ProposalError(f"There is no C-VQA sources version #{version_id}.")
    return found


def open_sources(version: BenchmarkVersion) -> list:
    """The version's source questions with no counterfactual item and no proposal waiting, in id order."""
    items = list(version.items.filter(payload__kind="source").prefetch_related("media__image").order_by("external_id"))
    done = counterfactuals.items_from([item.pk for item in items])
    waiting = waiting_keys(source_key(item.pk) for item in items)
    return [item for item in items if item.pk not in done and source_key(item.pk) not in waiting]


def entries(version: BenchmarkVersion, numerical_group: str = groups.DIRECT,
            target: str = counterfactuals.DEFAULT_LABEL) -> list[dict]:
    if numerical_group not in groups.NUMERICAL_GROUPS:
        raise ProposalError(f"Numerical questions go to group direct or indirect, not {numerical_group!r}.")
    found = []
    for item in open_sources(version):
        payload = item.payload
        image = next((use.image for use in item.media.all() if use.role == ROLE), None)
        found.append({"key": source_key(item.pk), "inputs": {
            "item_id": item.pk, "version_id": version.pk, "external_id": item.external_id,
            "image_id": image.pk if image else None, "group": group_of(payload["type"], numerical_group),
            "question": payload["question"], "answer": payload["answer"], "answers": list(payload["answers"]),
            "target": target}})
    return found


def task_options(max_examples: int = DEFAULT_EXAMPLES) -> dict:
    """The groups' texts as they are now, with at most `max_examples` examples each."""
    if not isinstance(max_examples, int) or max_examples < 0:
        raise ProposalError("The number of examples is a whole number, 0 or more.")
    chosen = {}
    for group in groups.KEYS:
        texts = groups.group_texts(group)
        chosen[group] = {**texts, "examples": texts["examples"][:max_examples]}
    return {"groups": chosen}


def start_counterfactuals(version: BenchmarkVersion, *, user, numerical_group: str = groups.DIRECT,
                          target: str = counterfactuals.DEFAULT_LABEL, max_examples: int = DEFAULT_EXAMPLES,
                          name: str = "", **model) -> ProposalSet:
    """A `cvqa_counterfactual` set over the sources version's open questions, and its job."""
    if user is None or not has_role(user, CURATOR, ADMIN):
        raise ProposalError("Only curators and admins start counterfactual generation.")
    version = sources_version(version.pk)
    target = (target or "").strip() or counterfactuals.DEFAULT_LABEL
    counterfactuals.target_version(target, lock=False)  # refuses a frozen or sources version early
    found = entries(version, numerical_group, target)
    if not found:
        raise ProposalError(f"No source question of {version.label} waits for a counterfactual (each has one, or "
                            "its proposal still waits for a decision).")
    name = name or f"C-VQA counterfactuals ({numerical_group} numerical) of {len(found)} question(s) of {version.label}"
    return proposals.start_proposals(KIND, found, user=user, name=name[:200], task_options=task_options(max_examples),
                                     **model)
