"""CVRR-ES QA generation (seeds/003 §3.2 Stage 2; SPEC §4 "Curation" 3): a text model receives a
video's chosen caption and its dimension's QA-generation instruction and proposes open-ended QA pairs
of two kinds, *reasoning* and *robustness* (misleading or confusing questions about what is not in
the video).

- **Proposal kind** `cvrr_qa` (`QA_TASK`): the answer is a JSON list of
  `{"question", "answer", "question_kind"}` objects (`many`: each record becomes its own proposal; a
  bad record is malformed on its own, with the reason; text around the JSON makes the whole output
  malformed: nothing is guessed). Its inputs: the video item (`item_id`), its `dimension` (release
  folder key) with the dimension's `dimension_name`, `dimension_description` and QA `instruction`,
  the release's `video` id, the library video (`video_id`, when the item has one under role
  `video`) and the `caption`. The prompt is built from these inputs alone (`build_prompt`), so a set
  asks every model the same.
- **The dimension's instruction** is the `CategoryDefinition` of the cvrr benchmark for the dimension
  (`instructions["qa"]`, with its name and description), or else the default below
  (`DEFAULT_DIMENSIONS`, written from the paper's dimension definitions, §3.1).
- **Flag** (`answer_in_question`): a pair whose question contains its answer is pre-marked for the
  filtration (`ProposalTask.flags`); the flag decides nothing.
- **Removal reasons** (`REASONS`): a pair removed in filtration names one; a fix may name one too
  (e.g. "answer in the question", fixed).
- **Starting** (`start_qa_generation`): one proposal set over chosen captioned videos, for one model,
  and its generation job; curators and admins only.

What people decide about the pairs is `annotation.benchmarks.cvrr.qa_pool` (the kind's `on_outcome`).
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

from annotation.benchmarks.cvrr import qa_pool, stages
from annotation.curation_models import CategoryDefinition, CurationRecord
from annotation.models import ItemMedia
from config.roles import ADMIN, CURATOR, has_role
from generation import proposals
from generation.models import ProposalSet
from generation.proposals import ProposalError, ProposalField, ProposalTask, chat

SLUG = qa_pool.SLUG
KIND = "cvrr_qa"
QUESTION_KINDS = ("reasoning", "robustness")
DEFAULT_PAIRS = 6
MAX_PAIRS = 30
MAX_QUESTION, MAX_ANSWER = 500, 1000

UNRELATED, NOT_ANSWERABLE, ANSWER_IN_QUESTION = "unrelated", "not_answerable", "answer_in_question"
REASONS = (
    (UNRELATED, "unrelated to the dimension"),
    (NOT_ANSWERABLE, "not answerable from the caption"),
    (ANSWER_IN_QUESTION, "answer in the question"),
)

KIND_GUIDE = (
    "Write two kinds of pairs:\n"
    "- reasoning: questions that go beyond describing the scene and need logical inference, contextual "
    "understanding, or reasoning about counterfactual and hypothetical situations in the video;\n"
    "- robustness: misleading or confusing questions that ask about something that is not in the video "
    "(an action, an object or a scene detail that does not appear); the answer says so and corrects the question."
)
RULES = (
    "Each answer must follow from the caption alone. Never put the answer in the question. Questions are "
    "open-ended (no yes/no questions, no multiple choice)."
)


@dataclass(frozen=True)
class Dimension:
    key: str
    name: str
    description: str
    instruction: str


def _dimension(key, name, description, instruction) -> tuple[str, Dimension]:
    return key, Dimension(key, name, description, instruction)


# The paper's eleven dimensions (§3.1), keyed by the release's folder names, with a QA-generation
# instruction each (used where the dimension has no CategoryDefinition with a "qa" instruction).
DEFAULT_DIMENSIONS: dict[str, Dimension] = dict([
    _dimension("multiple_actions_in_a_single_video", "Multiple actions in a single video",
               "Videos with 2-4 different human activities.",
               "Ask about the different actions in the video and how they relate: their order, which ones "
               "happen together, why one follows another. Robustness questions ask about an action that no one "
               "performs."),
    _dimension("fine_grained_action_understanding", "Fine-grained action understanding",
               "Fine-grained activities such as pushing, opening, closing, spreading or sitting.",
               "Ask about the exact fine-grained action performed (e.g. pushing rather than pulling, opening "
               "rather than closing) and its purpose. Robustness questions presuppose a similar action that "
               "does not happen."),
    _dimension("partial_actions", "Partial actions",
               "Actions likely to be followed by other actions that the video does not show.",
               "Ask what the video actually shows and whether the likely next action happens. Robustness "
               "questions presuppose that the likely next action (which is not shown) took place."),
    _dimension("time_order_understanding", "Time order understanding",
               "Fine-grained actions that happen in a particular temporal direction.",
               "Ask about the temporal order and direction of the actions (what happens first, whether "
               "something is put in or taken out). Robustness questions state the order the wrong way round."),
    _dimension("non_existent_actions_with_existent_scene_depictions",
               "Non-existent actions with existent scene depictions",
               "Questions that bring non-existent activities into the video without altering its scene.",
               "Keep the scene, the objects and the people exactly as the caption describes them and ask about "
               "activities that do not happen in it; the answer says that they do not happen and what happens "
               "instead. Add a few reasoning questions about the real activity."),
    _dimension("non_existent_actions_with_non_existent_scene_depictions",
               "Non-existent actions with non-existent scene depictions",
               "Questions with both non-existent activities and non-existent scene details (objects, attributes, "
               "background).",
               "Ask about activities that do not happen together with objects, attributes or background details "
               "that are not in the video; the answer corrects both. Add a few reasoning questions about what is "
               "really there."),
    _dimension("continuity_and_object_instance_count", "Continuity and object instance count",
               "Counting instances of objects or people and telling existing ones from new ones introduced later.",
               "Ask how many instances of an object or person appear, and whether one seen later is the same "
               "one or a new one. Robustness questions presuppose a wrong count or an instance that never "
               "appears."),
    _dimension("unusual_and_physically_anomalous_activities", "Unusual and physically anomalous activities",
               "Unusual actions that seemingly defy the laws of physics.",
               "Ask what is unusual or physically impossible in the video and how it could be explained. "
               "Robustness questions treat the anomalous activity as ordinary or invent another anomaly."),
    _dimension("interpretation_of_social_context", "Interpretation of social context",
               "Actions influenced by social context, such as helping an elderly person cross the road.",
               "Ask about the rationale behind the actions given the social context (the relations between "
               "people, social norms, intentions). Robustness questions presuppose a social situation that the "
               "video does not show."),
    _dimension("understanding_emotional_context", "Understanding of emotional context",
               "Actions understood through their emotional context, such as a person crying with joy.",
               "Ask about the emotions of the people and how they explain their actions. Robustness questions "
               "presuppose a wrong emotion or an emotional event that does not happen."),
    _dimension("interpretation_of_visual_context", "Interpretation of visual context",
               "Understanding actions from the overall visual cues, such as counting people from their shadows.",
               "Ask questions whose answers need visual cues of the scene (shadows, reflections, lighting, "
               "signs, surroundings). Robustness questions presuppose a visual cue that is not there."),
])
FALLBACK_INSTRUCTION = ("Ask questions that test the understanding this dimension names. Robustness questions ask "
                        "about something that is not in the video.")


def dimension(key: str) -> Dimension:
    """The dimension's name, description and QA instruction: its CategoryDefinition where it has one
    (each empty part falling back), else the default."""
    default = DEFAULT_DIMENSIONS.get(key) or Dimension(key, key.replace("_", " ").capitalize(), "",
                                                       FALLBACK_INSTRUCTION)
    row = CategoryDefinition.objects.filter(benchmark__slug=SLUG, key=key).first()
    if row is None:
        return default
    instruction = (row.instructions or {}).get("qa") if isinstance(row.instructions, dict) else None
    return Dimension(key, row.name.strip() or default.name, row.description.strip() or default.description,
                     instruction.strip() if isinstance(instruction, str) and instruction.strip()
                     else default.instruction)


# --- The prompt --------------------------------------------------------------------------------

ANSWER_FORMAT = json.dumps([{"question": "<question>", "answer": "<answer>",
                             "question_kind": "reasoning or robustness"}])


def build_prompt(inputs: dict, options: dict) -> list:
    """The chat for one video: its dimension with the dimension's instruction, the kinds of pairs,
    the caption and the answer format. `options` may carry `pairs` (how many) and a `system` message."""
    pairs = int(options.get("pairs") or DEFAULT_PAIRS)
    name = str(inputs.get("dimension_name") or inputs["dimension"]).strip()
    description = str(inputs.get("dimension_description") or "").strip()
    heading = f'The video belongs to the evaluation dimension "{name}"' + (f": {description}" if description else ".")
    text = "\n\n".join([
        "You write open-ended question-answer pairs that test how well a video model understands a video. You do "
        "not see the video: you are given a detailed caption written by people who watched it.",
        heading,
        f"Instruction for this dimension: {str(inputs['instruction']).strip()}",
        KIND_GUIDE,
        RULES,
        f"Caption of the video:\n{str(inputs['caption']).strip()}",
        f"Write {pairs} pairs, of both kinds. Reply with a JSON list only, one object per pair, in this format: "
        f"{ANSWER_FORMAT}",
    ])
    return chat([text], system=options.get("system", ""))


# --- The answer-in-question flag ------------------------------------------------------------------

# Words that carry no content of an answer: articles, forms of "be", "do" and "have", pronouns,
# prepositions, conjunctions, and "yes". Negations ("no", "not", "never", "isnt", ...) are content: a
# robustness answer ("the man is not swimming") is not contained in its question ("why is the man
# swimming?").
FUNCTION_WORDS = frozenset((
    "a", "an", "the", "yes",
    "is", "are", "was", "were", "be", "been", "being", "am", "do", "does", "did", "doing", "has", "have", "had",
    "having",
    "i", "you", "he", "she", "it", "we", "they", "me", "him", "her", "us", "them", "my", "your", "his", "its", "our",
    "their", "this", "that", "these", "those", "there", "here",
    "of", "in", "on", "at", "to", "for", "with", "by", "from", "as", "into", "onto", "about", "over", "under", "up",
    "down", "out", "off", "than", "then", "so",
    "and", "or", "but", "if", "while", "because",
))
_WORD = re.compile(r"[^\W_]+")


def words(text: str) -> list[str]:
    """The text's words: Unicode-normalised (NFKC), lower-cased, apostrophes dropped inside words
    ("doesn't" -> "doesnt"), split at anything that is not a letter or a digit ("t-shirt" -> "t", "shirt")."""
    normal = unicodedata.normalize("NFKC", text or "").casefold()
    normal = re.sub(r"(?<=\w)['’](?=\w)", "", normal)
    return _WORD.findall(normal)


def content_words(text: str) -> set[str]:
    return {word for word in words(text) if word not in FUNCTION_WORDS}


def answer_in_question(question: str, answer: str) -> bool:
    """Whether the question contains its answer: the answer has at least one content word (a word not
    in `FUNCTION_WORDS`) and every one of them is a word of the question (whole words: "car" is not in
    "cart"; no stemming: "cries" is not "crying")."""
    needed = content_words(answer)
    return bool(needed) and needed <= set(words(question))


ANSWER_IN_QUESTION_FLAG = "The question contains its answer: every content word of the answer is in the question."


def flags(fields: dict, inputs: dict) -> list[str]:
    question, answer = fields.get("question"), fields.get("answer")
    if isinstance(question, str) and isinstance(answer, str) and answer_in_question(question, answer):
        return [ANSWER_IN_QUESTION_FLAG]
    return []


INSTRUCTIONS = """Check each question-answer pair proposed from a video's caption. Watch the video, read the
caption and the dimension it belongs to, then:

- **Keep** the pair when it is right as it is;
- **Fix** it when it is nearly right: write the corrected question and/or answer (e.g. a question that
  contains its answer, rephrased); you may name what you fixed;
- **Remove** it, naming the reason: *unrelated to the dimension*, *not answerable from the caption*, or
  *answer in the question* (when it cannot be fixed).

A pair marked ⚑ was found by an automatic check to contain its answer in the question: look at it closely."""

QA_TASK = proposals.register(ProposalTask(
    name=KIND, label="CVRR-ES: QA pairs from a video caption",
    fields=(ProposalField("question", max_length=MAX_QUESTION),
            ProposalField("answer", max_length=MAX_ANSWER),
            ProposalField("question_kind", type="choice", label="question kind", choices=QUESTION_KINDS)),
    build_prompt=build_prompt, many=True,
    required_inputs=("item_id", "dimension", "instruction", "caption"),
    review_inputs=("dimension_name", "dimension_description", "video", "caption"),
    instructions=INSTRUCTIONS, on_outcome=qa_pool.apply_outcome, flags=flags, rejection_reasons=REASONS,
    verdict_labels={"accept": "Keep", "correct": "Fix", "reject": "Remove"},
), replace=True)


# --- Starting a generation ----------------------------------------------------------------------------

def source_key(item_id: int) -> str:
    """The `source_key` of a video's QA proposals."""
    return f"{SLUG}:{item_id}:qa"


def captioned_videos():
    """The curation records of CVRR-ES videos whose caption was chosen, in unfrozen versions."""
    return (CurationRecord.objects.filter(item__version__benchmark__slug=SLUG, item__version__frozen=False,
                                          item__payload__kind="video", stage=stages.CAPTIONED)
            .select_related("item__version").order_by("item__payload__dimension", "item_id"))


def library_video(item_id: int):
    """The library video of an item (role `video`), or None."""
    found = ItemMedia.objects.filter(item_id=item_id, role="video", video__isnull=False).select_related("video").first()
    return found.video if found else None


def video_entries(item_ids: Iterable[int]) -> list[dict]:
    """Proposal entries, one per captioned video (in id order). ProposalError naming the ids that are no
    captioned CVRR-ES video under curation, or a video without a caption."""
    ids = sorted(set(item_ids))
    if not ids:
        raise ProposalError("Choose at least one captioned video.")
    found = {record.item_id: record for record in captioned_videos().filter(item_id__in=ids)}
    missing = [str(pk) for pk in ids if pk not in found]
    if missing:
        raise ProposalError(f"No captioned CVRR-ES video under curation with id {', '.join(missing)}.")
    entries, dimensions = [], {}
    for item_id in ids:
        payload = found[item_id].item.payload or {}
        caption = str(payload.get("caption") or "").strip()
        if not caption:
            raise ProposalError(f"Video #{item_id} has no caption yet.")
        key = payload["dimension"]
        if key not in dimensions:
            dimensions[key] = dimension(key)
        info = dimensions[key]
        inputs = {"item_id": item_id, "dimension": key, "dimension_name": info.name,
                  "dimension_description": info.description, "instruction": info.instruction,
                  "video": payload["video_id"], "caption": caption}
        video = library_video(item_id)
        if video is not None:
            inputs["video_id"] = video.pk
        entries.append({"key": source_key(item_id), "inputs": inputs})
    return entries


def check_pairs(pairs) -> int:
    if pairs in (None, ""):
        return DEFAULT_PAIRS
    try:
        number = int(str(pairs).strip())
    except ValueError:
        raise ProposalError("The number of pairs per video is a whole number.") from None
    if not 1 <= number <= MAX_PAIRS:
        raise ProposalError(f"Ask for 1 to {MAX_PAIRS} pairs per video.")
    return number


def start_qa_generation(item_ids: Iterable[int], *, user, backend: str, model_id: str, revision: str = "",
                        params: dict | None = None, batch_size: int = 8, backend_options: dict | None = None,
                        pairs=None, name: str = "") -> ProposalSet:
    """A proposal set of kind `cvrr_qa` over these captioned videos and its generation job; curators and
    admins only. ProposalError says what is refused; nothing is created then."""
    if user is None or not has_role(user, CURATOR, ADMIN):
        raise ProposalError("Only curators and admins start QA generation.")
    count = check_pairs(pairs)
    entries = video_entries(item_ids)
    videos = len(entries)
    return proposals.start_proposals(
        KIND, entries, user=user, backend=backend, model_id=model_id, revision=revision, params=params,
        batch_size=batch_size, backend_options=backend_options, task_options={"pairs": count},
        name=name or f"CVRR-ES QA pairs of {videos} video{'s' if videos != 1 else ''} by {model_id}"[:200])
