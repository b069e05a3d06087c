"""MAIA's 12 reasoning categories as data (seeds/004 §3.2, App. A.1; SPEC §5): one `CategoryDefinition`
row per category of the MAIA benchmark, editable by curators.

Keys: the release's category name without its `_A`/`_B` suffix, slugified (`SpazialeTotale_A` →
`spazialetotale`). Causal is one category with two sub-types (implicit, explicit; App. A.1 footnote
15) whose items come as `CausaleImplicita` / `CausaleEsplicita`: both resolve to the key `causale`
(`category_key`). The other macro-categories (implicit, spatial, temporal) are two categories each,
as in the paper's Tables 1–3.

A row holds the English `name`, the definition (`description`) and `instructions`:
`{"name_it": ..., "macro_category": ..., "release_names": [...], "subtypes": [{"name", "definition"}],
"examples": [{"situation", "question_it", "answer_it", "question_en", "answer_en"}], "question": the
guideline question writers read}`.

`ensure_categories` makes the rows that are missing from `DEFAULTS` and never touches a row that
exists, so curators' edits stay. `edit_category` saves a curator's edit (checked by `CategoryForm`;
nothing is written when it is refused) with who made it and when.
"""

from __future__ import annotations

import json

from django import forms

from annotation import category_definitions
from annotation.benchmarks import registry
from annotation.category_definitions import NAME_LENGTH
from annotation.curation_models import CategoryDefinition
from annotation.models import Benchmark
from config import json_text

SLUG = "maia"
MAX_DESCRIPTION = 5_000
MAX_GUIDELINE = 10_000
MAX_EXAMPLES = 20
MAX_EXAMPLE_FIELD = 1_000
EXAMPLE_FIELDS = ("situation", "question_it", "answer_it", "question_en", "answer_en")


class CategoryError(Exception):
    """A refused category lookup or edit; `status` is the HTTP status that describes it."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.message = message
        self.status = status


def _example(situation, question_it, answer_it, question_en, answer_en) -> dict:
    return dict(zip(EXAMPLE_FIELDS, (situation, question_it, answer_it, question_en, answer_en), strict=True))


GUIDELINE = ("Write an open-ended question in Italian about this video for the category. No yes/no questions "
             "and no questions about the audio. ")

# key → the paper's texts (App. A.1), in the order of §3.2.
DEFAULTS: dict[str, dict] = {
    "causale": {
        "name": "Causal", "name_it": "Causale", "macro_category": "causal",
        "release_names": ["CausaleImplicita", "CausaleEsplicita"],
        "description": "Questions about the cause or effect of an event depicted in the video, reasoning about both "
                       "visible and inferred causal relationships: a test of a model's ability to infer and describe "
                       "causality within events.",
        "subtypes": [
            {"name": "Implicit Causal",
             "definition": "The inferred cause of an event, object or human action visible in the video: the cause "
                           "cannot be observed directly but must be deduced from the effect shown in the scene."},
            {"name": "Explicit Causal",
             "definition": "Direct cause-and-effect relationships visible in the video: the event, object or action "
                           "(the cause) that led to another event, situation or state (the effect), or vice versa."},
        ],
        "examples": [
            _example("A person at home grabs an umbrella while going out.",
                     "Per quale motivo la persona prende l'ombrello?", "Perché potrebbe piovere fuori.",
                     "Why does the person take the umbrella?", "Because it might be raining outside."),
            _example("An angry person throws a glass on the floor, which shatters.",
                     "Perché il bicchiere si è rotto?", "Perché la persona lo ha gettato a terra.",
                     "Why did the glass break?", "Because the person threw it on the ground."),
        ],
    },
    "controfattuale": {
        "name": "Counterfactual", "name_it": "Controfattuale", "macro_category": "counterfactual",
        "release_names": ["Controfattuale"],
        "description": "Hypothetical scenarios that do not occur in the video but could take place under specific "
                       "conditions: the consequences of an event or situation if a condition were met. The "
                       "hypothetical condition must be based on entities or events visible in the video.",
        "examples": [_example("An outdoor concert.",
                              "Cosa succederebbe al concerto se arrivasse un forte temporale?",
                              "Il concerto verrebbe interrotto all'istante.",
                              "What would happen to the concert if a violent thunderstorm started?",
                              "The concert would be immediately interrupted.")],
    },
    "implicitoparziale": {
        "name": "Implicit Partial", "name_it": "Implicito parziale", "macro_category": "implicit",
        "release_names": ["ImplicitoParziale"],
        "description": "Entities or events that were visible earlier in the video but are no longer visible, because "
                       "the scene shifted or they moved out of the frame; their presence or properties can still be "
                       "reasonably inferred.",
        "examples": [_example("A man places a pen in a drawer and then closes it.",
                              "Dove si trova la penna?", "La penna è nel cassetto.",
                              "Where is the pen?", "The pen is inside the drawer.")],
    },
    "implicitotot": {
        "name": "Implicit Total", "name_it": "Implicito totale", "macro_category": "implicit",
        "release_names": ["ImplicitoTot"],
        "description": "Entities or events that are never directly visible in the video but can be inferred from "
                       "observable details; the answer gives the requested information by logical inference.",
        "examples": [_example("The front door of a house opens on a person soaking wet with a dripping closed "
                              "umbrella.",
                              "Che tempo fa fuori?", "Piove molto forte.",
                              "What's the weather like outside?", "It's raining heavily.")],
    },
    "outofscope": {
        "name": "Out-of-Scope", "name_it": "Fuori contesto", "macro_category": "out_of_scope",
        "release_names": ["OutofScope"],
        "description": "Questions about entities or events that are not present in the video at all, asking for their "
                       "properties; the expected answer is a negation stating that the entity or event is not "
                       "there. Tests multimodal hallucination and assertiveness.",
        "examples": [_example("A dog and its owner play in the park; there are no cars in the scene.",
                              "Di che colore è la macchina?", "Non ci sono auto nella scena.",
                              "What color is the car?", "There is no car in the scene.")],
    },
    "pianificazione": {
        "name": "Planning", "name_it": "Pianificazione", "macro_category": "planning",
        "release_names": ["Pianificazione"],
        "description": "Questions asking for the actions needed to reach a goal related to the video; the answer is "
                       "a sequence of actions someone should perform, based on the situation shown.",
        "examples": [_example("A dog and its owner play with a ball in a park; the owner throws the ball onto a "
                              "bench.",
                              "Cosa dovrebbe fare il cane per continuare a giocare col padrone?",
                              "Dovrebbe correre verso la palla, saltare sulla panchina, prendere la palla e riportarla "
                              "al padrone.",
                              "What should the dog do to continue playing with its owner?",
                              "The dog should run toward the ball, jump onto the bench, grab the ball, and bring it "
                              "back to the owner.")],
    },
    "sentiment": {
        "name": "Sentiment", "name_it": "Sentiment", "macro_category": "sentiment",
        "release_names": ["Sentiment"],
        "description": "The sentiment, mood, attitude or emotion shown by one or more characters (animated beings) "
                       "toward other entities or events in the scene, throughout the whole video; the answer may "
                       "describe a sentiment or a neutral stance.",
        "examples": [_example("Children who appear bored at a birthday party.",
                              "Che atteggiamento hanno i bimbi?", "Sono annoiati.",
                              "What is the attitude of the children?", "They are bored.")],
    },
    "spazialeparziale": {
        "name": "Spatial Partial", "name_it": "Spaziale parziale", "macro_category": "spatial",
        "release_names": ["SpazialeParziale"],
        "description": "The position of entities in space in relation to a time or to other events in the scene, or "
                       "relative to another entity with a temporal aspect; the answer is valid only for the "
                       "requested time range.",
        "examples": [_example("A school lesson with a teacher and students in a classroom.",
                              "Dove si trova l'insegnante all'inizio del video?",
                              "All'inizio del video, l'insegnante è di fronte alla cattedra.",
                              "Where is the teacher at the beginning of the video?",
                              "At the beginning of the video, the teacher is standing in front of the desk.")],
    },
    "spazialetotale": {
        "name": "Spatial Total", "name_it": "Spaziale totale", "macro_category": "spatial",
        "release_names": ["SpazialeTotale"],
        "description": "The position of entities in space (including relative to other entities) that stays the same "
                       "throughout the whole video, disregarding minimal movements; the answer is valid for the "
                       "video's whole duration.",
        "examples": [_example("A school lesson with a teacher and students in a classroom.",
                              "Dov'è l'insegnante?", "L'insegnante è in classe.",
                              "Where is the teacher?", "The teacher is in the classroom.")],
    },
    "temporaleparziale": {
        "name": "Temporal Partial", "name_it": "Temporale parziale", "macro_category": "temporal",
        "release_names": ["TemporaleParziale"],
        "description": "Temporal properties and relationships of events in the video other than their duration: when "
                       "something happens, or whether it happens before or after another event.",
        "examples": [_example("A rock band concert.",
                              "Che succede dopo che il chitarrista inizia a suonare?", "Il cantante inizia a cantare.",
                              "What happens after the guitarist starts playing?", "The singer starts singing.")],
    },
    "temporaledurata": {
        "name": "Temporal Duration", "name_it": "Temporale durata", "macro_category": "temporal",
        "release_names": ["TemporaleDurata"],
        "description": "The duration of events in the video; the answer gives the length of time the question asks "
                       "for.",
        "examples": [_example("A room with a light on, and a person switching it off.",
                              "Per quanto tempo la luce rimane accesa?", "Per circa 15 secondi.",
                              "How long was the light on?", "For about 15 seconds.")],
    },
    "incertezza": {
        "name": "Uncertainty", "name_it": "Incertezza", "macro_category": "uncertainty",
        "release_names": ["Incertezza"],
        "description": "Entities and events of the situation shown for which the video does not give enough "
                       "information for a precise answer: the answer gives a range, says a precise answer cannot "
                       "be given, or says it is a guess.",
        "examples": [_example("A dog.",
                              "Quanti anni ha il cane?",
                              "Difficile da dire: probabilmente è giovane, ma non si può esserne certi.",
                              "How old is the dog?", "It's hard to say: it is probably young, but it's not certain.")],
    },
}

# the lower-cased release name (without _A/_B) → key
RELEASE_KEYS = {name.lower(): key for key, texts in DEFAULTS.items() for name in texts["release_names"]}


def default_texts(key: str) -> dict:
    """The paper's `name`, `description` and `instructions` of category `key`."""
    texts = DEFAULTS[key]
    return {"name": texts["name"], "description": texts["description"], "instructions": {
        "name_it": texts["name_it"], "macro_category": texts["macro_category"],
        "release_names": list(texts["release_names"]), "subtypes": [dict(s) for s in texts.get("subtypes", [])],
        "examples": [dict(e) for e in texts["examples"]], "question": GUIDELINE + texts["description"]}}


def category_key(release_name: str) -> str:
    """The key of a release category name, with or without its suffix (`SpazialeTotale_A` →
    `spazialetotale`, `CausaleEsplicita_B` → `causale`); CategoryError 400 naming an unknown one."""
    base = str(release_name or "").split("_", 1)[0].strip().lower()
    if base in RELEASE_KEYS:
        return RELEASE_KEYS[base]
    raise CategoryError(f"{str(release_name)[:80]!r} is not a MAIA category; known: "
                        f"{', '.join(sorted({n for t in DEFAULTS.values() for n in t['release_names']}))}.")


def benchmark() -> Benchmark:
    """The MAIA benchmark row (made from the registry when missing)."""
    definition = registry.get(SLUG)
    found, _ = Benchmark.objects.get_or_create(slug=SLUG, defaults={"name": definition.name,
                                                                    "description": definition.description})
    return found


def existing_keys() -> set[str]:
    """The keys of the MAIA categories that have a row."""
    return set(CategoryDefinition.objects.filter(benchmark__slug=SLUG).values_list("key", flat=True))


def ensure_categories() -> list[CategoryDefinition]:
    """Every category's row, the missing ones made from the defaults (existing rows are left as they are;
    a row made here has no `updated_by`: nobody edited it yet)."""
    return category_definitions.ensure_rows(benchmark(), DEFAULTS, default_texts)


def category(key: str) -> CategoryDefinition:
    """The row of category `key`; CategoryError 404 for a key that is no MAIA category."""
    if not isinstance(key, str) or key not in DEFAULTS:
        raise CategoryError(f"{str(key)[:80]!r} is not a MAIA category; known: {', '.join(DEFAULTS)}.", status=404)
    return next(row for row in ensure_categories() if row.key == key)


def _clean_examples(value: str) -> list[dict]:
    try:
        examples = json_text.loads(value)
    except ValueError as exc:
        raise forms.ValidationError(f"Not valid JSON: {exc}.") from None
    if not isinstance(examples, list) or len(examples) > MAX_EXAMPLES:
        raise forms.ValidationError(f"Give a JSON list of at most {MAX_EXAMPLES} examples.")
    for number, example in enumerate(examples, 1):
        if not isinstance(example, dict) or set(example) - set(EXAMPLE_FIELDS):
            raise forms.ValidationError(f"Example {number} must be an object with only the fields "
                                        f"{', '.join(EXAMPLE_FIELDS)}.")
        for name, text in example.items():
            if not isinstance(text, str) or len(text) > MAX_EXAMPLE_FIELD:
                raise forms.ValidationError(f"Example {number}: {name} must be a text of at most "
                                            f"{MAX_EXAMPLE_FIELD} characters.")
        if not (example.get("question_it") or "").strip():
            raise forms.ValidationError(f"Example {number} has no Italian question (question_it).")
    return examples


class CategoryForm(forms.Form):
    name = forms.CharField(label="English name", max_length=NAME_LENGTH, strip=True)
    name_it = forms.CharField(label="Italian name", max_length=NAME_LENGTH, strip=True)
    description = forms.CharField(label="Definition", max_length=MAX_DESCRIPTION, widget=forms.Textarea(
        attrs={"rows": 4}))
    question = forms.CharField(label="Question-writing guideline", max_length=MAX_GUIDELINE, widget=forms.Textarea(
        attrs={"rows": 6}), help_text="What annotators read beside each video when they write the category's "
                                      "questions.")
    examples = forms.CharField(max_length=MAX_EXAMPLES * len(EXAMPLE_FIELDS) * (MAX_EXAMPLE_FIELD + 40),
                               widget=forms.Textarea(attrs={"rows": 12}),
                               help_text="A JSON list of objects with " + ", ".join(EXAMPLE_FIELDS) + ".")

    def clean_examples(self):
        return _clean_examples(self.cleaned_data["examples"])


class CategoryInvalid(CategoryError):
    """An edit the form refuses; `form` holds the errors per field."""

    def __init__(self, form: CategoryForm):
        super().__init__(f"The category was not saved: {category_definitions.problems(form)}", status=400)
        self.form = form


def initial(row: CategoryDefinition) -> dict:
    instructions = row.instructions or {}
    return {"name": row.name, "name_it": instructions.get("name_it", ""), "description": row.description,
            "question": instructions.get("question", ""),
            "examples": json.dumps(instructions.get("examples", []), ensure_ascii=False, indent=2)}


def edit_category(key: str, data, user) -> CategoryDefinition:
    """Save the edit of category `key` (names, definition, guideline, examples); 404 for an unknown key,
    400 (CategoryInvalid, nothing written) for a missing, too long or malformed field."""
    return category_definitions.save_edit(
        category(key), CategoryForm(data), user, CategoryInvalid,
        lambda clean: {"name_it": clean["name_it"], "question": clean["question"], "examples": clean["examples"]})
