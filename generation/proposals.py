"""Model proposals for curation: a model proposes, people decide.

- **Task kinds** (`ProposalTask`, `register`, `task_kind`): for each kind of proposal, the fields it
  yields, how the chat prompt is built from one input (and the set's `task_options`), and a strict
  parser of the raw output. Benchmark modules register their own kinds; two generic ones live
  here: `caption` (describe an image or a video) and `statement` (a question and its answer as one
  declarative sentence).
- **Sets** (`create_proposal_set`): one pending proposal per input, for one model and one set of
  generation parameters.
- **Generation** (`start_generation`, job kinds `make_proposals` on the `gpu` queue for local models
  and `make_proposals_api` on the `generation` queue for API backends): runs the backend over the
  set's pending inputs in batches; every batch is saved before the job reports its progress, so a
  cancelled or failed job is resumed by starting it again.
- **Imported sets** (backend `imported`, `generation.proposal_import`): outputs made elsewhere, parsed
  like generated ones; no model is loaded or run for them (`start_generation` refuses such a set).
- **Decisions** (`decide`): a person accepts, corrects or rejects a proposal. Decisions are
  insert-only; a correction keeps the person's fields beside the model's, which never change. The
  proposal's outcome follows from its decisions (`resolve_outcome`). A kind that writes accepted
  fields somewhere does it in its `on_outcome` hook, called in the decision's transaction.
- **Comparisons** (`ProposalTask.compare_with`): a kind that rewrites inputs names, per field, the
  input it rewrites; reviewers see a word-level diff (`generation.text_diff`) of one against the other.

Parsing never guesses. An output is `empty` when it holds no text (or, for a kind that lists
records, an empty list), `malformed` when it does not follow the kind's format exactly, with the
reason, and `ok` otherwise. The only unwrapping done is a single Markdown code fence around the whole
output (```json ... ```); JSON with text around it, missing or unknown keys, values of the wrong
type or choices outside the allowed ones are all malformed. A kind with its own output format (e.g. a
numbered list) names a `reader` that turns the output into its fields, as strictly. A model call that
fails is `failed`.

Provenance (`provenance`): what a kind's `on_outcome` records beside the fields it carries to an item:
the proposal, its set, model and revision, and the decision that settled it (who, when, how).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from django.db import transaction
from django.db.models import Count
from django.utils import timezone

from config import json_text, state
from config.roles import ADMIN, CURATOR, has_role
from generation import frames, jobs, model_text
from generation.backends._hf import check_params
from generation.backends.base import (
    BackendError,
    ChatRequest,
    ChatResult,
    GenerationParams,
    ImagePart,
    Message,
    TextPart,
)
from generation.backends.registry import LOADERS, close_backend, load_backend
from generation.models import Job, Proposal, ProposalDecision, ProposalSet
from generation.text_diff import WordDiff, word_diff

MAKE_PROPOSALS = "make_proposals"
MAKE_PROPOSALS_API = "make_proposals_api"
API_BACKENDS = {"openai"}  # backends that call a server: no GPU needed on the worker
SCORING_BACKENDS = {"nli", "clip"}  # backends that score text or images; they cannot answer a chat
# the backend name of sets whose outputs were made elsewhere and imported (`generation.proposal_import`):
# no model is loaded or run for them
IMPORTED_BACKEND = "imported"
IMPORTED_REFUSAL = ("Set #{pk} holds imported outputs ({model}): there is no model here to generate with. "
                    "Import more outputs, or start a new set with a model.")


class ProposalError(ValueError):
    """A request about proposals that the rules refuse (the message says why)."""


# --- Fields and parsing -----------------------------------------------------------------------

FIELD_TYPES = ("text", "choice", "integer", "boolean")
_INTEGER = re.compile(r"[+-]?\d+")
_TRUE_WORDS, _FALSE_WORDS = {"true", "yes"}, {"false", "no"}
_FENCE = re.compile(r"\A```(?:json|JSON)?[ \t]*\n(.*?)\n?```\Z", re.S)


@dataclass(frozen=True)
class ProposalField:
    """One field a proposal carries. `choice` values match their choices case-insensitively and are
    stored in the spelling of `choices`; `integer` and `boolean` must be JSON numbers and booleans."""

    name: str
    type: str = "text"
    label: str = ""
    choices: tuple[str, ...] = ()
    max_length: int = 2000
    single_line: bool = False

    def __post_init__(self):
        if self.type not in FIELD_TYPES:
            raise ValueError(f"Field {self.name!r}: unknown type {self.type!r}; use one of {', '.join(FIELD_TYPES)}.")
        if self.type == "choice" and not self.choices:
            raise ValueError(f"Field {self.name!r}: a choice field needs its choices.")

    @property
    def title(self) -> str:
        return self.label or self.name.replace("_", " ")

    def clean(self, value):
        """The value as stored, from a parsed JSON value; ValueError says what is wrong."""
        if self.type in ("text", "choice"):
            if not isinstance(value, str):
                raise ValueError(f"'{self.name}' must be a string, not {_json_type(value)}")
            text = value.strip()
            if not text:
                raise ValueError(f"'{self.name}' is empty")
            if self.type == "choice":
                canonical = {choice.lower(): choice for choice in self.choices}
                if text.lower() not in canonical:
                    raise ValueError(f"'{self.name}' must be one of {', '.join(self.choices)}, not {text!r}")
                return canonical[text.lower()]
            if len(text) > self.max_length:
                raise ValueError(f"'{self.name}' is longer than {self.max_length} characters")
            if self.single_line and "\n" in text:
                raise ValueError(f"'{self.name}' must be a single line")
            return text
        if self.type == "integer":
            if isinstance(value, bool) or not isinstance(value, int):
                raise ValueError(f"'{self.name}' must be an integer, not {_json_type(value)}")
            return value
        if not isinstance(value, bool):
            raise ValueError(f"'{self.name}' must be true or false, not {_json_type(value)}")
        return value

    def from_text(self, text: str):
        """The value as stored, from what a person typed (a correction in a review form)."""
        text = str(text).strip()
        if self.type == "integer":
            if not _INTEGER.fullmatch(text):
                raise ValueError(f"'{self.name}' must be a whole number, not {text!r}")
            return int(text)
        if self.type == "boolean":
            word = text.lower()
            if word not in _TRUE_WORDS | _FALSE_WORDS:
                raise ValueError(f"'{self.name}' must be true or false, not {text!r}")
            return word in _TRUE_WORDS
        return self.clean(text)


def _json_type(value) -> str:
    if value is None:
        return "null"
    return {bool: "a boolean", int: "a number", float: "a number", str: "a string", list: "a list",
            dict: "an object"}.get(type(value), type(value).__name__)


@dataclass(frozen=True)
class Parsed:
    """What one record of a raw output parsed into."""

    status: str  # Proposal.Status: ok | malformed | empty
    fields: dict
    error: str = ""


def _ok(fields: dict) -> Parsed:
    return Parsed(Proposal.Status.OK, fields)


def _malformed(reason: str) -> Parsed:
    return Parsed(Proposal.Status.MALFORMED, {}, reason)


def _empty(reason: str) -> Parsed:
    return Parsed(Proposal.Status.EMPTY, {}, reason)


# --- Task kinds ---------------------------------------------------------------------------------

PromptBuilder = Callable[[dict, dict], list[Message]]
OutcomeHook = Callable[[Proposal, ProposalDecision, str, dict | None], None]
FlagHook = Callable[[dict, dict], list[str]]
Reader = Callable[[str], dict]


@dataclass(frozen=True)
class ProposalTask:
    """A kind of proposal.

    output "json": the raw output must be one JSON object with exactly the kind's fields (or, with
    `many`, a JSON array of such objects: each becomes its own proposal, and a bad record is
    malformed on its own without spoiling the others). output "text": the whole output, stripped,
    is the value of the kind's single field.
    `build_prompt(inputs, options)` returns the chat messages; `required_inputs` are checked when a
    set is created. Reviewers see the inputs named in `review_inputs` (default: every input whose
    value is plain text, a number or a list of those; never media specs or other objects).
    `compare_with` ({field: input name}) names, for a kind that rewrites its inputs, the input each
    field rewrites: reviewers see a word-level diff of the field against it (`comparisons`).
    `on_outcome(proposal, decision, outcome, final_fields)` is called by `decide` after every
    decision, in its transaction, with the outcome it settled: the place where a kind carries
    accepted or corrected fields to what they were proposed for (and takes them back when a later
    decision rejects them). A ProposalError it raises refuses the decision; nothing is recorded.
    `flags(fields, inputs)` names what an automatic check found suspect in a proposal (e.g. "the
    question contains its answer"); reviewers see the flags beside it, and they decide nothing.
    `rejection_reasons` ((value, label) pairs) are the reasons a rejection must name one of (a
    correction may name one too: what it fixed); `verdict_labels` ({verdict: label}) words the three
    verdicts for the kind's reviewers (e.g. keep, fix, remove).
    `reader(text)`, for a kind whose output is neither one JSON value nor one text (e.g. a numbered
    list), turns the stripped output (its code fence unwrapped) into the kind's fields; a ValueError
    makes the output malformed with its message as the reason. The fields are then checked as JSON
    fields are. With `reads_inputs`, the reader is called as `reader(text, inputs)`, for a format
    that depends on the proposal's inputs or is checked against them.
    """

    name: str
    label: str
    fields: tuple[ProposalField, ...]
    build_prompt: PromptBuilder
    output: str = "json"
    many: bool = False
    required_inputs: tuple[str, ...] = ()
    review_inputs: tuple[str, ...] | None = None
    instructions: str = ""
    compare_with: Mapping[str, str] | None = None
    on_outcome: OutcomeHook | None = None
    flags: FlagHook | None = None
    rejection_reasons: tuple[tuple[str, str], ...] = ()
    verdict_labels: Mapping[str, str] | None = None
    reader: Reader | None = None
    reads_inputs: bool = False

    def __post_init__(self):
        if self.output not in ("json", "text"):
            raise ValueError(f"Task {self.name!r}: output must be 'json' or 'text'.")
        if self.reader is not None and (self.output != "json" or self.many):
            raise ValueError(f"Task {self.name!r}: a reader fills the fields of one record from the whole output.")
        if self.reads_inputs and self.reader is None:
            raise ValueError(f"Task {self.name!r}: reads_inputs names how its reader is called; it has none.")
        if not self.fields:
            raise ValueError(f"Task {self.name!r} declares no fields.")
        if self.output == "text" and (len(self.fields) != 1 or self.many):
            raise ValueError(f"Task {self.name!r}: a text output fills exactly one field, once.")
        names = [field.name for field in self.fields]
        if len(set(names)) != len(names):
            raise ValueError(f"Task {self.name!r}: field names repeat.")
        unknown = sorted(set(self.compare_with or {}) - set(names))
        if unknown:
            raise ValueError(f"Task {self.name!r}: compare_with names fields it does not have: {', '.join(unknown)}.")

    def flags_for(self, fields: dict | None, inputs: dict | None) -> list[str]:
        """What the kind's automatic check flags in these fields (none for a kind without a check, or
        for a proposal without fields)."""
        if self.flags is None or not fields:
            return []
        return list(self.flags(fields, inputs if isinstance(inputs, dict) else {}))

    def reason_label(self, value: str) -> str:
        return dict(self.rejection_reasons).get(value, value)

    def verdict_label(self, verdict: str) -> str:
        return (self.verdict_labels or {}).get(verdict) or ProposalDecision.Verdict(verdict).label

    def check_criterion(self, verdict: str, criterion: str) -> str:
        """The reason a decision names, checked against the kind's `rejection_reasons` (ProposalError)."""
        criterion = (criterion or "").strip()
        if not self.rejection_reasons:
            if criterion:
                raise ProposalError(f"{self.label} names no reasons: give the reason in words.")
            return ""
        if criterion and criterion not in dict(self.rejection_reasons):
            raise ProposalError(f"Unknown reason {criterion!r}; use one of "
                                f"{', '.join(value for value, _ in self.rejection_reasons)}.")
        if verdict == ProposalDecision.Verdict.REJECT and not criterion:
            raise ProposalError("A removal names its reason: "
                                f"{'; '.join(label for _, label in self.rejection_reasons)}.")
        if verdict == ProposalDecision.Verdict.ACCEPT and criterion:
            raise ProposalError("A proposal kept as it is names no reason.")
        return criterion

    @property
    def field_names(self) -> list[str]:
        return [field.name for field in self.fields]

    def field(self, name: str) -> ProposalField:
        for field in self.fields:
            if field.name == name:
                return field
        raise KeyError(name)

    def check_inputs(self, inputs) -> None:
        if not isinstance(inputs, dict):
            raise ProposalError(f"{self.name}: inputs must be an object, not {_json_type(inputs)}.")
        missing = [key for key in self.required_inputs if inputs.get(key) in (None, "")]
        if missing:
            raise ProposalError(f"{self.name}: inputs lack {', '.join(missing)}.")

    def messages(self, inputs: dict, options: dict | None = None) -> list[Message]:
        return self.build_prompt(inputs, options or {})

    def validate_fields(self, data) -> dict:
        """The fields, cleaned, when `data` has exactly this kind's fields with valid values."""
        if not isinstance(data, dict):
            raise ValueError(f"expected a JSON object with {', '.join(self.field_names)}, got {_json_type(data)}")
        problems = []
        missing = [name for name in self.field_names if name not in data]
        unknown = sorted(str(key) for key in data if key not in self.field_names)
        if missing:
            problems.append(f"missing {', '.join(missing)}")
        if unknown:
            problems.append(f"unexpected {', '.join(unknown)}")
        clean = {}
        for field in self.fields:
            if field.name in data:
                try:
                    clean[field.name] = field.clean(data[field.name])
                except ValueError as exc:
                    problems.append(str(exc))
        if problems:
            raise ValueError("; ".join(problems))
        return clean

    def parse(self, raw: str, inputs: dict | None = None) -> list[Parsed]:
        """The records of one raw output (one for a kind without `many`), each ok, malformed or empty;
        `inputs` are the proposal's (read by a reader with `reads_inputs`)."""
        text = (raw or "").strip()
        if not text:
            return [_empty("the model returned no text")]
        if self.output == "text":
            try:
                return [_ok({self.fields[0].name: self.fields[0].clean(text)})]
            except ValueError as exc:
                return [_malformed(str(exc))]
        fenced = _FENCE.match(text)
        if fenced:
            text = fenced.group(1).strip()
            if not text:
                return [_empty("the model returned an empty code block")]
        if self.reader is not None:
            try:
                read = self.reader(text, inputs if isinstance(inputs, dict) else {}) if self.reads_inputs \
                    else self.reader(text)
                return [_ok(self.validate_fields(read))]
            except ValueError as exc:
                return [_malformed(str(exc))]
        try:
            value = json_text.loads(text, keep_nul=True)  # model output: cleaned where it is stored
        except json.JSONDecodeError as exc:
            return [_malformed(f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}")]
        if not self.many:
            try:
                return [_ok(self.validate_fields(value))]
            except ValueError as exc:
                return [_malformed(str(exc))]
        if not isinstance(value, list):
            return [_malformed(f"expected a JSON list of objects, got {_json_type(value)}")]
        if not value:
            return [_empty("the model proposed an empty list")]
        records = []
        for index, entry in enumerate(value, start=1):
            try:
                records.append(_ok(self.validate_fields(entry)))
            except ValueError as exc:
                records.append(_malformed(f"record {index} of {len(value)}: {exc}"))
        return records

    def comparisons(self, inputs: dict, fields: dict) -> list[Comparison]:
        """For each field of `compare_with` that has a value, a word-level diff against its input."""
        found = []
        inputs = inputs if isinstance(inputs, dict) else {}
        for name, source in (self.compare_with or {}).items():
            value, original = (fields or {}).get(name), inputs.get(source)
            if isinstance(value, str) and isinstance(original, str):
                found.append(Comparison(self.field(name), source, original, value, word_diff(original, value)))
        return found

    def shown_inputs(self, inputs: dict) -> dict:
        """The inputs a reviewer sees."""
        if self.review_inputs is not None:
            return {key: inputs[key] for key in self.review_inputs if key in inputs}
        return {key: value for key, value in inputs.items() if _plain(value)}


@dataclass(frozen=True)
class Comparison:
    """A field of a proposal beside the input it rewrites (`ProposalTask.compare_with`)."""

    field: ProposalField
    source: str  # the input's name
    original: str
    value: str
    diff: WordDiff


def _plain(value) -> bool:
    scalar = (str, int, float, bool)
    return isinstance(value, scalar) or (isinstance(value, list) and all(isinstance(v, scalar) for v in value))


_TASKS: dict[str, ProposalTask] = {}


def register(task: ProposalTask, *, replace: bool = False) -> ProposalTask:
    if task.name in _TASKS and not replace:
        raise ValueError(f"A proposal task {task.name!r} is already registered.")
    _TASKS[task.name] = task
    return task


def task_kind(name: str) -> ProposalTask:
    try:
        return _TASKS[name]
    except KeyError:
        raise ProposalError(f"Unknown proposal task {name!r}; registered: {', '.join(sorted(_TASKS))}.") from None


def task_kinds() -> dict[str, ProposalTask]:
    return dict(_TASKS)


# --- Prompt helpers -----------------------------------------------------------------------------

def media_part(spec: dict):
    """An image or video part from a JSON media spec stored in a proposal's inputs:
    {"type": "image", "path": ..., "checksum": optional} or
    {"type": "video", "path": ..., "policy": "uniform:8", "segment": [start, end] (optional),
     "checksum": optional}. The prompt record keeps the fingerprint (and frame indices)."""
    kind = spec.get("type") if isinstance(spec, dict) else None
    if kind == "image":
        from PIL import Image

        with Image.open(spec["path"]) as opened:
            picture = opened.convert("RGB")
        checksum = spec.get("checksum")
        if not checksum:
            with open(spec["path"], "rb") as handle:
                checksum = hashlib.file_digest(handle, "sha256").hexdigest()
        return ImagePart(image=picture, fingerprint=f"sha256:{checksum}")
    if kind == "video":
        segment = tuple(spec["segment"]) if spec.get("segment") else None
        sampled = frames.sample(spec["path"], spec.get("policy", "uniform:8"), segment=segment,
                                checksum=spec.get("checksum") or None)
        return sampled.as_video_part()
    raise ValueError(f"a media spec needs type 'image' or 'video', got {spec!r}")


def chat(user_parts: list, *, system: str = "") -> list[Message]:
    """System message (if any) + one user message of parts (strings become text parts)."""
    messages = [Message("system", (TextPart(system),))] if system else []
    parts = tuple(TextPart(part) if isinstance(part, str) else part for part in user_parts)
    messages.append(Message("user", parts))
    return messages


# --- Generic task kinds -------------------------------------------------------------------------

CAPTION_INSTRUCTION = "Describe in detail what the {what} shows: the people, objects, actions and setting."


def _caption_prompt(inputs: dict, options: dict) -> list[Message]:
    specs = inputs["media"] if isinstance(inputs["media"], list) else [inputs["media"]]
    parts = [media_part(spec) for spec in specs]
    what = "video" if any(spec.get("type") == "video" for spec in specs) else "image"
    instruction = inputs.get("instruction") or options.get("instruction") or CAPTION_INSTRUCTION.format(what=what)
    return chat([*parts, instruction], system=options.get("system", ""))


STATEMENT_INSTRUCTION = ("Rewrite the question and its answer as one declarative sentence that states the answer. "
                         "Reply with the sentence only.")


def _statement_prompt(inputs: dict, options: dict) -> list[Message]:
    lines = [options.get("instruction") or STATEMENT_INSTRUCTION]
    for example in options.get("examples", []):
        lines.append(f"Question: {example['question']}\nAnswer: {example['answer']}\nStatement: {example['statement']}")
    lines.append(f"Question: {inputs['question']}\nAnswer: {inputs['answer']}\nStatement:")
    return chat(["\n\n".join(lines)], system=options.get("system", ""))


CAPTION = register(ProposalTask(
    name="caption", label="Caption of an image or video", output="text",
    fields=(ProposalField("caption", max_length=4000),),
    build_prompt=_caption_prompt, required_inputs=("media",),
    instructions="Check that the caption describes what the media show, and nothing that they do not.",
))

STATEMENT = register(ProposalTask(
    name="statement", label="Statement from a question and its answer", output="text",
    fields=(ProposalField("statement", max_length=1000, single_line=True),),
    build_prompt=_statement_prompt, required_inputs=("question", "answer"),
    instructions="Check that the statement says exactly what the answer says, as one sentence.",
))


# --- Sets and generation ------------------------------------------------------------------------

def generation_params(params: dict | None) -> GenerationParams:
    try:
        value = GenerationParams(**(params or {}))
        check_params(value)
    except (TypeError, ValueError) as exc:
        raise ProposalError(f"Bad generation parameters: {exc}") from None
    return value


def create_proposal_set(task: str, entries: Iterable[dict], *, backend: str, model_id: str, revision: str = "",
                        params: dict | None = None, backend_options: dict | None = None,
                        task_options: dict | None = None, name: str = "", batch_size: int = 8,
                        user=None) -> ProposalSet:
    """A set of pending proposals, one per entry: {"inputs": {...}, "key": "caller's reference"}."""
    kind = task_kind(task)
    if backend == IMPORTED_BACKEND:
        raise ProposalError("Imported proposals come with their outputs: use generation.proposal_import.")
    if backend in SCORING_BACKENDS:
        raise ProposalError(f"The {backend} backend scores; it cannot make proposals. "
                            f"Choose one of {', '.join(proposal_backends())}.")
    if backend not in LOADERS:
        raise ProposalError(f"Unknown backend {backend!r}; choose one of {', '.join(sorted(LOADERS))}.")
    if not str(model_id).strip():
        raise ProposalError("A proposal set needs a model id.")
    if batch_size < 1:
        raise ProposalError("batch_size must be at least 1.")
    clean_params = generation_params(params).as_dict()
    rows = []
    for entry in entries:
        if not isinstance(entry, dict) or "inputs" not in entry:
            raise ProposalError('Each entry must be {"inputs": {...}, "key": "..."}.')
        kind.check_inputs(entry["inputs"])
        rows.append((str(entry.get("key", ""))[:200], entry["inputs"]))
    if not rows:
        raise ProposalError("A proposal set needs at least one input.")
    with transaction.atomic():
        proposal_set = ProposalSet.objects.create(
            name=name or f"{kind.label} by {model_id}", task_kind=kind.name, task_options=task_options or {},
            backend=backend, model_id=model_id, revision=revision, backend_options=backend_options or {},
            params=clean_params, batch_size=batch_size, created_by=user if user is not None and user.pk else None)
        Proposal.objects.bulk_create([
            Proposal(proposal_set=proposal_set, task_kind=kind.name, source_key=key, inputs=inputs)
            for key, inputs in rows])
    return proposal_set


def proposal_backends() -> list[str]:
    """The registered backends that can answer a chat request, i.e. that can make proposals."""
    return sorted(name for name in LOADERS if name not in SCORING_BACKENDS)


def set_entries(proposal_set: ProposalSet) -> list[dict]:
    """The set's inputs as entries for `create_proposal_set`, once each (the first sample and record
    of each input), in the order they were given: to ask another model the same."""
    rows = (Proposal.objects.filter(proposal_set=proposal_set, sample_index=0, record_index=0)
            .order_by("pk").values_list("source_key", "inputs"))
    seen, entries = set(), []
    for key, inputs in rows:
        marker = (key, json.dumps(inputs, sort_keys=True))
        if marker not in seen:
            seen.add(marker)
            entries.append({"key": key, "inputs": inputs})
    return entries


def start_generation(proposal_set: ProposalSet, *, user=None) -> Job:
    """Queue the job that fills in the set's pending proposals (one job per set at a time)."""
    with transaction.atomic():
        locked = ProposalSet.objects.select_for_update(of=("self",)).select_related("job").get(pk=proposal_set.pk)
        if locked.backend == IMPORTED_BACKEND:
            raise ProposalError(IMPORTED_REFUSAL.format(pk=locked.pk, model=locked.model_id))
        if locked.job is not None and not locked.job.is_finished:
            raise ProposalError(f"Job #{locked.job_id} is already making proposals for this set.")
        if not locked.proposals.filter(status=Proposal.Status.PENDING).exists():
            raise ProposalError("This set has no pending inputs.")
        kind = MAKE_PROPOSALS_API if locked.backend in API_BACKENDS else MAKE_PROPOSALS
        job = jobs.enqueue(kind, params={"proposal_set": locked.pk}, user=user)
        ProposalSet.objects.filter(pk=locked.pk).update(job=job)
    proposal_set.job = job
    return job



def start_proposals(task: str, entries: Iterable[dict], *, user, backend: str, model_id: str, revision: str = "",
                    params: dict | None = None, batch_size: int = 8, name: str = "",
                    backend_options: dict | None = None, task_options: dict | None = None) -> ProposalSet:
    """A new set over `entries` and its generation job, both or neither (the set's `job` is the job)."""
    with transaction.atomic():
        proposal_set = create_proposal_set(task, entries, backend=backend, model_id=model_id, revision=revision,
                                           params=params, batch_size=batch_size, name=name, user=user,
                                           backend_options=backend_options, task_options=task_options)
        start_generation(proposal_set, user=user)
    return proposal_set


@jobs.job_handler(MAKE_PROPOSALS, queue="gpu", label="Make model proposals (local model)")
@jobs.job_handler(MAKE_PROPOSALS_API, queue="generation", label="Make model proposals (model API)")
def make_proposals(context: jobs.JobContext, proposal_set: int) -> dict:
    """Run the set's backend over its pending inputs, `batch_size` at a time."""
    pset = ProposalSet.objects.get(pk=proposal_set)
    if pset.backend == IMPORTED_BACKEND:
        raise ProposalError(IMPORTED_REFUSAL.format(pk=pset.pk, model=pset.model_id))
    kind = task_kind(pset.task_kind)
    params = generation_params(pset.params)
    pending = Proposal.objects.filter(proposal_set=pset, status=Proposal.Status.PENDING).order_by("pk")
    total = pending.count()
    if not total:
        return {"message": "No pending inputs", "inputs": 0, "batches": 0, "proposals": {}}
    context.progress(0, f"Loading {pset.backend} model {pset.model_id}")
    backend = load_backend(pset.backend, pset.model_id, revision=pset.revision, **pset.backend_options)
    context.log(f"{pset.backend} {backend.model_id} at revision {backend.revision}: {total} inputs, "
                f"{pset.batch_size} per batch")
    counts: Counter = Counter()
    done = batches = 0
    seen: set[int] = set()
    try:
        while done < total:
            batch = list(pending.exclude(pk__in=seen)[: min(pset.batch_size, total - done)])
            if not batch:
                break  # the rest was filled in by another run meanwhile
            seen.update(p.pk for p in batch)
            counts.update(_run_batch(batch, pset, kind, params, backend, context.job))
            done += len(batch)
            batches += 1
            context.log(f"batch {batches}: {len(batch)} inputs ({done} of {total})")
            context.progress(100 * done / total, f"{done} of {total} inputs, {batches} batch(es)")
    finally:
        close_backend(backend)
    summary = ", ".join(f"{counts[status]} {status}" for status in Proposal.Status.values if counts[status])
    return {"message": f"{done} inputs in {batches} batch(es): {summary or 'nothing new'}", "inputs": done,
            "batches": batches, "proposals": dict(counts), "model_id": backend.model_id,
            "revision": backend.revision}


def _run_batch(batch: list[Proposal], pset: ProposalSet, kind: ProposalTask, params: GenerationParams, backend,
               job: Job) -> Counter:
    requests, ready, counts = [], [], Counter()
    for proposal in batch:
        try:
            messages = kind.messages(proposal.inputs, pset.task_options)
        except Exception as exc:  # noqa: BLE001 - an input the kind cannot prompt with fails alone
            counts.update(_save(proposal, pset, [{"status": Proposal.Status.FAILED, "parse_error":
                                                  f"could not build the prompt: {exc}"}],
                                  {"job": job, "generated_at": timezone.now()}))
            continue
        requests.append(ChatRequest(messages=messages, params=params, request_id=str(proposal.pk)))
        ready.append(proposal)
    results = backend.generate(requests) if requests else []
    if len(results) != len(requests):
        raise BackendError(f"The backend answered {len(results)} of {len(requests)} requests.")
    now = timezone.now()
    with transaction.atomic():
        for proposal, request, result in zip(ready, requests, results, strict=True):
            common = {"prompt": request.describe(), "backend": getattr(backend, "name", pset.backend),
                      "model_id": backend.model_id, "revision": backend.revision,
                      "latency_s": result.latency_s, "job": job, "generated_at": now}
            counts.update(_save(proposal, pset, _rows(kind, result, proposal.inputs, params.as_dict()), common))
    return counts


def _rows(kind: ProposalTask, result: ChatResult, inputs: dict, params: dict) -> list[dict]:
    """One row per (sample, record) of a model result, each with its `params` (and the NUL characters removed from
    its text and fields: `generation.model_text`)."""
    if result.error:
        return [{"status": Proposal.Status.FAILED, "parse_error": result.error, "params": params}]
    rows = []
    for sample_index, text in enumerate(result.texts):
        for record_index, parsed in enumerate(kind.parse(text, inputs)):
            rows.append(parsed_row(parsed, text, params, result.nul_removed[sample_index],
                                   sample_index=sample_index, record_index=record_index))
    return rows or [{"status": Proposal.Status.FAILED, "parse_error": "the backend returned no text and no error",
                     "params": params}]


def parsed_row(parsed: Parsed, text: str, params: dict, removed: int = 0, **position) -> dict:
    """The fields of a proposal row holding one parsed record of a model's `text`, as the database can keep them:
    NUL characters removed from the fields and the parse error (those from the text, `removed`, counted with them)
    and counted in `params`."""
    fields, in_fields = model_text.json_without_nul(parsed.fields)
    error, in_error = model_text.without_nul(parsed.error)
    return {**position, "raw_output": text, "status": parsed.status, "fields": fields, "parse_error": error,
            "params": model_text.noted(params, removed + in_fields + in_error)}


def _save(proposal: Proposal, pset: ProposalSet, rows: list[dict], common: dict) -> Counter:
    """Fill the pending row with the first record (its parse status moved through `Proposal.PARSE_STATES`) and
    add the others; nothing if it is no longer pending."""
    first, rest = dict(rows[0]), rows[1:]
    status = first.pop("status")
    with transaction.atomic():
        filled = state.transition_many(Proposal.objects.filter(pk=proposal.pk), status,
                                       reason=first.get("parse_error", ""), state_field="status", **common, **first)
        if not filled:
            return Counter()
        Proposal.objects.bulk_create([
            Proposal(proposal_set=pset, task_kind=proposal.task_kind, source_key=proposal.source_key,
                     inputs=proposal.inputs, **common, **row) for row in rest])
    return Counter(row["status"] for row in rows)


def status_counts(proposal_set: ProposalSet) -> dict:
    """{status: n} and {outcome: n} of a set's proposals."""
    proposals = Proposal.objects.filter(proposal_set=proposal_set)
    return {
        "status": dict(proposals.values_list("status").annotate(n=Count("pk")).order_by()),
        "outcome": dict(proposals.values_list("outcome").annotate(n=Count("pk")).order_by()),
    }


# --- Decisions ----------------------------------------------------------------------------------

def decide(proposal: Proposal, user, verdict: str, *, fields: dict | None = None, reason: str = "",
           criterion: str = "", origin: str = ProposalDecision.Origin.DIRECT, decided_at=None,
           study_slug: str = "", submission_id: int | None = None,
           review_item_id: int | None = None) -> ProposalDecision:
    """Record one person's accept / correct / reject of a proposal and settle its outcome.

    - accept: only a proposal whose output parsed (status ok);
    - correct: `fields` replace some (or, for an unparsed output, all) of the proposal's fields; the
      result must be valid for the task kind and differ from what the model proposed;
    - reject: needs a reason; for a kind with `rejection_reasons`, one of them (`criterion`), whose
      label is the reason when no words are given.
    Direct decisions (not through a review study) are for curators and admins only.
    """
    if user is None or not user.pk:
        raise ProposalError("A decision needs the person who made it.")
    if verdict not in ProposalDecision.Verdict.values:
        raise ProposalError(f"Unknown verdict {verdict!r}; use accept, correct or reject.")
    if origin == ProposalDecision.Origin.DIRECT and not has_role(user, CURATOR, ADMIN):
        raise ProposalError("Only curators and admins decide on proposals directly.")
    reason = (reason or "").strip()
    with transaction.atomic():
        proposal = Proposal.objects.select_for_update().get(pk=proposal.pk)
        if proposal.status == Proposal.Status.PENDING:
            raise ProposalError("This proposal has not been generated yet.")
        corrected = None
        kind = _TASKS.get(proposal.task_kind)
        criterion = kind.check_criterion(verdict, criterion) if kind is not None else (criterion or "").strip()
        if criterion and not reason and kind is not None:
            reason = kind.reason_label(criterion)
        if verdict == ProposalDecision.Verdict.ACCEPT and proposal.status != Proposal.Status.OK:
            raise ProposalError(f"A proposal whose output is {proposal.status} has no fields to accept: "
                                "correct it or reject it.")
        if verdict == ProposalDecision.Verdict.REJECT and not reason:
            raise ProposalError("A rejection needs a reason.")
        if verdict == ProposalDecision.Verdict.CORRECT:
            if not fields:
                raise ProposalError("A correction needs the corrected fields.")
            try:
                corrected = task_kind(proposal.task_kind).validate_fields({**proposal.fields, **fields})
            except ValueError as exc:
                raise ProposalError(f"The correction is not valid: {exc}") from None
            if proposal.status == Proposal.Status.OK and corrected == proposal.fields:
                raise ProposalError("The correction leaves the proposal unchanged: accept it instead.")
        elif fields is not None:
            raise ProposalError("Only a correction carries fields.")
        decision = ProposalDecision.objects.create(
            proposal=proposal, verdict=verdict, fields=corrected, reason=reason, criterion=criterion, decided_by=user,
            decided_at=decided_at or timezone.now(), origin=origin, study_slug=study_slug,
            submission_id=submission_id, review_item_id=review_item_id)
        outcome, final_fields = resolve_outcome(list(proposal.decisions.all()), proposal.fields)
        if outcome != proposal.outcome:
            state.transition(proposal, outcome, by=user, reason=f"{decision.get_origin_display()}: {verdict}",
                             final_fields=final_fields, outcome_at=timezone.now())
        else:  # the same outcome with other fields (a curator's new correction)
            Proposal.objects.filter(pk=proposal.pk).update(final_fields=final_fields, outcome_at=timezone.now())
        hook = _TASKS[proposal.task_kind].on_outcome if proposal.task_kind in _TASKS else None
        if hook is not None:
            hook(proposal, decision, outcome, final_fields)
    return decision


def decide_many(proposals: Iterable[Proposal], user, verdict: str, *, reason_for=None) -> tuple[list[int], dict]:
    """The same verdict on each proposal, one decision each: ([decided ids], {refused id: why}).
    `reason_for(proposal)` gives each one's reason (none by default). A refusal leaves the others."""
    decided, refused = [], {}
    for proposal in proposals:
        try:
            decide(proposal, user, verdict, reason=reason_for(proposal) if reason_for else "")
        except ProposalError as exc:
            refused[proposal.pk] = str(exc)
        else:
            decided.append(proposal.pk)
    return decided, refused


def typed_correction(task: ProposalTask, typed: dict) -> dict:
    """A correction's fields from what a person typed, one text per field of the kind; empty texts
    are left out (the proposed value stays). ProposalError says which value is wrong."""
    fields, problems = {}, []
    for spec in task.fields:
        text = str(typed.get(spec.name) or "").strip()
        if not text:
            continue
        try:
            fields[spec.name] = spec.from_text(text)
        except ValueError as exc:
            problems.append(str(exc))
    if problems:
        raise ProposalError(f"The correction is not valid: {'; '.join(problems)}")
    return fields


def provenance(proposal: Proposal, decision: ProposalDecision, outcome: str) -> dict:
    """Where fields carried to an item came from: the proposal, its set, its model, and the decision
    that settled `outcome` (JSON, for a curation record's working fields)."""
    return {"proposal": proposal.pk, "proposal_set": proposal.proposal_set_id, "decision": decision.pk,
            "outcome": outcome, "verdict": decision.verdict, "criterion": decision.criterion,
            "reason": decision.reason, "origin": decision.origin, "study": decision.study_slug,
            "submission": decision.submission_id, "backend": proposal.backend, "model_id": proposal.model_id,
            "revision": proposal.revision, "decided_by": decision.decided_by.get_username(),
            "decided_by_id": decision.decided_by_id, "decided_at": decision.decided_at.isoformat()}


def resolve_outcome(decisions: list[ProposalDecision], proposed: dict) -> tuple[str, dict | None]:
    """(outcome, final fields) from a proposal's decisions.

    Reviews come in rounds, one per study item that reviews the proposal (or per review study, for
    decisions that do not name their item): the latest round counts (a proposal sent back for
    another review, e.g. one that experts found wrong, is settled again by its new reviewers). The
    latest direct decision of a curator settles it, unless a review round began after it. Otherwise
    the round's reviewers must agree: all accept -> accepted; all reject -> rejected; all correct to
    the same fields -> corrected; any other mix -> disputed (a curator settles it with a direct decision).
    """
    if not decisions:
        return Proposal.Outcome.UNDECIDED, None
    ordered = sorted(decisions, key=lambda d: (d.decided_at, d.pk or 0))
    reviews = [d for d in ordered if d.origin != ProposalDecision.Origin.DIRECT]
    latest_round = [d for d in reviews if _round(d) == _round(reviews[-1])] if reviews else []
    direct = [d for d in ordered if d.origin == ProposalDecision.Origin.DIRECT]
    if direct and (not latest_round or _key(latest_round[0]) < _key(direct[-1])):
        return _outcome_of(direct[-1], proposed)
    verdicts = {d.verdict for d in latest_round}
    corrections = {json.dumps(d.fields, sort_keys=True) for d in latest_round if d.fields is not None}
    if len(verdicts) > 1 or len(corrections) > 1:
        return Proposal.Outcome.DISPUTED, None
    return _outcome_of(latest_round[-1], proposed)


def _round(decision: ProposalDecision) -> tuple:
    return decision.study_slug, decision.review_item_id


def _key(decision: ProposalDecision) -> tuple:
    return decision.decided_at, decision.pk or 0


def _outcome_of(decision: ProposalDecision, proposed: dict) -> tuple[str, dict | None]:
    if decision.verdict == ProposalDecision.Verdict.ACCEPT:
        return Proposal.Outcome.ACCEPTED, proposed
    if decision.verdict == ProposalDecision.Verdict.CORRECT:
        return Proposal.Outcome.CORRECTED, decision.fields
    return Proposal.Outcome.REJECTED, None
