"""C-VQA-Real's counterfactual groups as data (seeds/001 §3.1; SPEC §2): numerical direct, numerical
indirect and boolean, one `CategoryDefinition` row each (key `numerical_direct`, `numerical_indirect`,
`boolean`) that curators edit on `/cvqa/groups/<key>/`.

A row's `instructions`: `instruction` (what the text model is asked), `decomposition` (the step-by-step
decomposition of §3.1: numerical, presupposition → new question → computed answer; boolean, flip the
answer first, then the presupposition) and `examples`, the in-context examples (at most
`MAX_EXAMPLES`), each `{question, answer, presupposition, new_question, new_answer}`: numerical
answers are whole numbers; boolean answers are yes/no and the new answer is the flipped one.

`ensure_groups` makes missing rows from the defaults below and never touches an existing one;
`edit_group` checks a curator's edit (`GroupForm`, nothing written when refused) and saves it with who.
"""

from __future__ import annotations

import json
import re

from django import forms

from annotation import category_definitions
from annotation.benchmarks.cvqa import sources
from annotation.category_definitions import NAME_LENGTH
from annotation.curation_models import CategoryDefinition
from config import json_text

DIRECT, INDIRECT, BOOLEAN = "direct", "indirect", "boolean"  # the release's `type` of each group's items
KEYS = {DIRECT: "numerical_direct", INDIRECT: "numerical_indirect", BOOLEAN: "boolean"}
NUMERICAL_GROUPS = (DIRECT, INDIRECT)
EXAMPLE_FIELDS = ("question", "answer", "presupposition", "new_question", "new_answer")
MAX_EXAMPLES = 250
MAX_EXAMPLE_FIELD = 500
MAX_TEXT = 5_000
YES_NO = ("yes", "no")
_WHOLE = re.compile(r"\d+")

NUMERICAL_DECOMPOSITION = (
    "Work step by step: (1) read the original question and its answer; (2) choose a counterfactual "
    "presupposition, something that did not happen but could have; (3) work out how the answer changes under "
    "it; (4) write the new question, the original question with the presupposition, and compute its new answer.")
BOOLEAN_DECOMPOSITION = (
    "Work step by step: (1) read the original question and its answer; (2) flip the answer first (yes becomes "
    "no, no becomes yes); (3) write a counterfactual presupposition that makes the flipped answer the right "
    "one; (4) write the new question, the original question with the presupposition.")


def _example(question, answer, presupposition, new_question, new_answer) -> dict:
    return dict(zip(EXAMPLE_FIELDS, (question, answer, presupposition, new_question, new_answer), strict=True))


DEFAULTS = {
    "numerical_direct": {
        "name": "Numerical direct",
        "description": "The presupposition changes the count directly: how many X would there be if two X were "
                       "added or removed?",
        "instruction": "You are given a question about an image that is answered with a number, and its answer. "
                       "Add a counterfactual presupposition that adds or removes some of the counted objects, so "
                       "that the new answer follows from the original answer by arithmetic.",
        "decomposition": NUMERICAL_DECOMPOSITION,
        "examples": [
            _example("How many plates are there?", "1", "if 2 plates were added",
                     "How many plates would there be if 2 plates were added?", "3"),
            _example("How many people are in the picture?", "4", "if one person left",
                     "How many people would be in the picture if one person left?", "3"),
            _example("How many birds are on the wire?", "5", "if 3 birds flew away",
                     "How many birds would be on the wire if 3 birds flew away?", "2"),
            _example("How many cars are parked on the street?", "2", "if 4 more cars parked there",
                     "How many cars would be parked on the street if 4 more cars parked there?", "6"),
            _example("How many slices of pizza are there?", "8", "if someone ate half of the slices",
                     "How many slices of pizza would there be if someone ate half of the slices?", "4"),
        ],
    },
    "numerical_indirect": {
        "name": "Numerical indirect",
        "description": "The presupposition changes the count only through more reasoning: how many cats would "
                       "there be if the TV was off?",
        "instruction": "You are given a question about an image that is answered with a number, and its answer. "
                       "Add a counterfactual presupposition that does not name the counted objects' number but "
                       "changes it through a consequence that needs reasoning to work out.",
        "decomposition": NUMERICAL_DECOMPOSITION,
        "examples": [
            _example("How many cats are in the image?", "2", "if the TV was off",
                     "How many cats would be in the image if the TV was off?", "1"),
            _example("How many wheels can you see?", "4", "if the bicycle was replaced by a tricycle",
                     "How many wheels would you see if the bicycle was replaced by a tricycle?", "3"),
            _example("How many people are wearing hats?", "3", "if it started to rain and everyone put on a hat",
                     "How many people would be wearing hats if it started to rain and everyone put on a hat?",
                     "5"),
            _example("How many candles are lit?", "6", "if a gust of wind blew out the candles on the left half",
                     "How many candles would be lit if a gust of wind blew out the candles on the left half?",
                     "3"),
            _example("How many players are on the field?", "11", "if the referee sent off one player of each team",
                     "How many players would be on the field if the referee sent off one player of each team?",
                     "9"),
        ],
    },
    "boolean": {
        "name": "Boolean",
        "description": "The presupposition reverses the fact, and with it the yes/no answer: would the cat be "
                       "asleep if it was woken up?",
        "instruction": "You are given a question about an image that is answered with yes or no, and its answer. "
                       "Flip the answer, then add a counterfactual presupposition under which the flipped answer "
                       "is the right one.",
        "decomposition": BOOLEAN_DECOMPOSITION,
        "examples": [
            _example("Is the cat asleep?", "yes", "if it was woken up", "Would the cat be asleep if it was woken up?",
                     "no"),
            _example("Does this animal have claws?", "no", "if the animals were cats",
                     "Would this animal have claws if the animals were cats?", "yes"),
            _example("Is the light on?", "yes", "if the power went out", "Would the light be on if the power went out?",
                     "no"),
            _example("Is the road wet?", "no", "if it had just rained", "Would the road be wet if it had just rained?",
                     "yes"),
            _example("Is the man holding an umbrella?", "yes", "if he dropped it on the ground",
                     "Would the man be holding an umbrella if he dropped it on the ground?", "no"),
        ],
    },
}


def group_key(group: str) -> str:
    return KEYS[group]


def default_texts(key: str) -> dict:
    texts = DEFAULTS[key]
    return {"name": texts["name"], "description": texts["description"], "instructions": {
        "instruction": texts["instruction"], "decomposition": texts["decomposition"],
        "examples": [dict(example) for example in texts["examples"]]}}


def ensure_groups() -> list[CategoryDefinition]:
    """The three groups' rows, in order, the missing ones made from the defaults."""
    return category_definitions.ensure_rows(sources.benchmark(), DEFAULTS, default_texts)


class GroupError(Exception):
    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.message, self.status = message, status


def group_row(key: str) -> CategoryDefinition:
    """The row of group `key`; GroupError 404 for a key that is no group."""
    if not isinstance(key, str) or key not in DEFAULTS:
        raise GroupError(f"{str(key)[:80]!r} is not a C-VQA counterfactual group; known: {', '.join(DEFAULTS)}.",
                         status=404)
    return next(row for row in ensure_groups() if row.key == key)


def group_texts(group: str) -> dict:
    """{instruction, decomposition, examples} of a group (`direct`, `indirect`, `boolean`) as last saved."""
    info = group_row(group_key(group)).instructions or {}
    return {"instruction": str(info.get("instruction") or ""), "decomposition": str(info.get("decomposition") or ""),
            "examples": list(info.get("examples") or [])}


def check_answers(group: str, answer: str, new_answer: str) -> str:
    """The new answer as stored, checked for the group: a whole number (numerical) or the flip of a yes/no
    answer (boolean). ValueError says what is wrong; nothing is guessed."""
    new_answer = str(new_answer).strip()
    if group == BOOLEAN:
        word = new_answer.lower()
        if word not in YES_NO:
            raise ValueError(f"the new answer must be yes or no, not {new_answer!r}")
        if word == str(answer).strip().lower():
            raise ValueError(f"the flipped answer {word!r} is the original answer: the answer was not flipped")
        return word
    if group not in NUMERICAL_GROUPS:
        raise ValueError(f"unknown group {group!r}")
    if not _WHOLE.fullmatch(new_answer):
        raise ValueError(f"the new answer must be a whole number, not {new_answer!r}")
    return str(int(new_answer))


def _clean_examples(group: str, value: str) -> list[dict]:
    try:
        examples = json_text.loads(value)
    except ValueError as exc:
        raise forms.ValidationError(f"Not valid JSON: {exc}.") from None
    if not isinstance(examples, list) or len(examples) > MAX_EXAMPLES:
        raise forms.ValidationError(f"Give a JSON list of at most {MAX_EXAMPLES} examples.")
    problems = []
    for number, example in enumerate(examples, 1):
        if not isinstance(example, dict) or set(example) != set(EXAMPLE_FIELDS):
            problems.append(f"Example {number} must be an object with exactly {', '.join(EXAMPLE_FIELDS)}.")
            continue
        if any(not isinstance(text, str) or not text.strip() or len(text) > MAX_EXAMPLE_FIELD
               for text in example.values()):
            problems.append(f"Example {number}: every field is a non-empty text of at most {MAX_EXAMPLE_FIELD} "
                            "characters.")
            continue
        answer = example["answer"].strip()
        if group == BOOLEAN and answer.lower() not in YES_NO:
            problems.append(f"Example {number}: the answer must be yes or no, not {answer!r}.")
            continue
        if group != BOOLEAN and not _WHOLE.fullmatch(answer):
            problems.append(f"Example {number}: the answer must be a whole number, not {answer!r}.")
            continue
        try:
            check_answers(group, answer, example["new_answer"])
        except ValueError as exc:
            problems.append(f"Example {number}: {exc}.")
    if problems:
        raise forms.ValidationError(problems[:20])
    return [{name: example[name].strip() for name in EXAMPLE_FIELDS} for example in examples]


class GroupForm(forms.Form):
    name = forms.CharField(max_length=NAME_LENGTH, strip=True)
    description = forms.CharField(max_length=MAX_TEXT, required=False, widget=forms.Textarea(attrs={"rows": 3}))
    instruction = forms.CharField(max_length=MAX_TEXT, widget=forms.Textarea(attrs={"rows": 4}),
                                  help_text="What the text model is asked, before the examples.")
    decomposition = forms.CharField(label="Step-by-step decomposition", max_length=MAX_TEXT,
                                    widget=forms.Textarea(attrs={"rows": 4}))
    examples = forms.CharField(max_length=MAX_EXAMPLES * len(EXAMPLE_FIELDS) * (MAX_EXAMPLE_FIELD + 40),
                               widget=forms.Textarea(attrs={"rows": 16}),
                               help_text=f"A JSON list of at most {MAX_EXAMPLES} objects with "
                                         + ", ".join(EXAMPLE_FIELDS) + ".")

    def __init__(self, *args, group: str, **kwargs):
        super().__init__(*args, **kwargs)
        self.group = group

    def clean_examples(self):
        return _clean_examples(self.group, self.cleaned_data["examples"])


GROUP_OF_KEY = {key: group for group, key in KEYS.items()}


class GroupInvalid(GroupError):
    def __init__(self, form: GroupForm):
        super().__init__(f"The group was not saved: {category_definitions.problems(form)}", status=400)
        self.form = form


def initial(row: CategoryDefinition) -> dict:
    info = row.instructions or {}
    return {"name": row.name, "description": row.description, "instruction": info.get("instruction", ""),
            "decomposition": info.get("decomposition", ""),
            "examples": json.dumps(info.get("examples", []), ensure_ascii=False, indent=2)}


def form_for(row: CategoryDefinition, data=None) -> GroupForm:
    group = GROUP_OF_KEY[row.key]
    return GroupForm(data, group=group) if data is not None else GroupForm(initial=initial(row), group=group)


def edit_group(key: str, data, user) -> CategoryDefinition:
    """Save the edit of group `key`; 404 for an unknown key, 400 (GroupInvalid, nothing written) otherwise."""
    row = group_row(key)
    return category_definitions.save_edit(
        row, form_for(row, data), user, GroupInvalid,
        lambda clean: {"instruction": clean["instruction"], "decomposition": clean["decomposition"],
                       "examples": clean["examples"]})
