"""LLM judges of open answers: BlackSwan's LLM-Match, the CVRR-ES judge, MAIA's open-answer judge and
NL-EYE's explanation judge, on any text chat backend (a local `causal_lm`, a VLM through
`transformers`, or an OpenAI-compatible API through `openai`).

Each judge kind (`KINDS`) knows which requests it judges, the prompt of each call, how to read the
judge's answer, and how to fold its calls into the verdict the benchmark's scorer reads:

- `llm_match` (BlackSwan Gen variants, seeds/000 §5.1): one call per (reference, response) pair; the
  judge rates semantic similarity 1–5 and answers "Reason: …" / "Score: N". Prompt: the authors'
  `metric/llm_match_llama.py` (github.com/sahithyaravi/BlackSwan; the paper's Appendix C, which
  prints it, is not in seeds/000). Verdict: `{"scores": [N per reference that parsed], "reasons",
  "pairs", "unparsed"}`: a pair whose score cannot be read is left out of the average and counted.
- `cvrr` (seeds/003 §3.2 Stage 4): one call per answer with the question, the ground truth and the
  prediction; the judge answers a Python-dict string `{'pred': 'correct'|'incorrect', 'score': 0–5,
  'reason': …}`. Prompt: the authors' `Evaluation-Scripts/LLM_Judge_evaluation.py`
  (github.com/mbzuai-oryx/CVRR-Evaluation-Suite; the paper's Fig. 13 is not in seeds/003), system
  and user message word for word. Verdict: `{"pred", "score", "reason"}`; any `pred` string is kept
  as written (the scorer leaves verdicts other than correct/incorrect out of its denominator).
- `maia` (seeds/004 §4.2, App. B.2): one call per open answer with the question and all eight
  reference answers; correct iff semantically consistent with at least one of them. The paper's
  prompt (its Figure 5) is not in seeds/004, so the prompt below states that rule and asks for
  "Verdict: correct" or "Verdict: incorrect". Verdict: `{"correct": bool, "reason"}`.
- `nleye_explanation` (seeds/002 §4.3, App. C "Prompt of Auto Evaluation of Explanation", quoted
  word for word): the candidate explanation against the gold explanation and the validated human
  explanations, 0 (not logical), 1 (logical but different), 2 (logical and same as a gold one).
  The human explanations are the triplet payload's `human_explanations` (a list of texts: those
  at least one worker selected in the explanation vote); the candidate is the whole response (its
  choice and explanation); only correct predictions are judged (§5.1).
  Verdict: `{"label": 0|1|2}`.

Reading a verdict never guesses: every parser finds the answer in the form the prompt asked for
(plus a few unambiguous spellings of it); text that names no answer, or two different ones, is
`unparsed`, stored with its raw text and counted. An empty response is not sent to the judge: it
gets the verdict of a wrong answer (`empty_verdict`).

Calls go through the response cache (`evaluation.cache`, keyed over judge model, resolved revision,
backend, messages and parameters; greedy by default, so verdicts are cached), in batches.

Entry points:
- `judge_run(run, kind, spec, batch_size=…)` judges every prediction of a run the kind applies to and
  stores `Judgment` rows with their provenance (prompt, judge model and resolved revision, backend,
  parameters, raw verdict); resumable: judged (prediction, reference) pairs are skipped, failed
  calls are retried. `verdicts_for_run` folds the stored rows into scorer verdicts.
- `for_benchmark(slug, model, …)` → a `Judge`, the callable `judge(request, response_text) -> verdict`
  that `evaluation.scoring` calls (`manage.py score --judge-model`); `Judge.judge_many` batches;
  `judge_texts(judge, response, references, …)` judges plain texts.
- `agreement_report` / `run_agreement`: judge-vs-human Cohen's kappa and accuracy.
"""

from __future__ import annotations

import ast
import json
import logging
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction

from evaluation import cache, parsing, runner
from evaluation.models import EvaluationRun, Judgment, Prediction
from generation.backends import registry
from generation.backends.base import BackendError, ChatRequest, ChatResult, GenerationParams, Message, TextPart

logger = logging.getLogger(__name__)

OK, UNPARSED, FAILED = Judgment.ParseStatus.OK.value, Judgment.ParseStatus.UNPARSED.value, \
    Judgment.ParseStatus.FAILED.value
EMPTY = "empty"  # a verdict given without a call, because the response is empty
CHAT_BACKENDS = ("causal_lm", "openai", "transformers")
DEFAULT_BACKEND = "causal_lm"
DEFAULT_MAX_NEW_TOKENS = 256


class JudgeError(ValueError):
    """A judge call failed, or a judge was asked about something it does not judge."""


def _clean(text: str) -> str:
    """The text without markdown emphasis and code marks, stripped."""
    return re.sub(r"[*_`#]+", "", str(text or "")).strip()


def _one(found: list) -> tuple[Any, bool]:
    """(value, decided): decided when the list names exactly one distinct value."""
    distinct = list(dict.fromkeys(found))
    return (distinct[0], True) if len(distinct) == 1 else (None, False)


def _sentence(text: str) -> str:
    """A description as the NL-EYE prompt shows it, ending in exactly one full stop."""
    return str(text or "").strip().rstrip(".").strip()


# --- One call --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Case:
    """One judge call: the messages for one (response, reference or reference set)."""

    reference_key: str
    user: str
    system: str = ""

    def chat(self, params: GenerationParams, request_id: str = "") -> ChatRequest:
        messages = [Message("system", (TextPart(self.system),))] if self.system else []
        messages.append(Message("user", (TextPart(self.user),)))
        return ChatRequest(messages=messages, params=GenerationParams(**params.as_dict()), request_id=request_id)


@dataclass(frozen=True)
class Reading:
    """What one judge answer says: status ok | unparsed, and the parsed fields (None when unread)."""

    status: str
    value: dict

    @property
    def ok(self) -> bool:
        return self.status == OK


# --- The four judges -------------------------------------------------------------------------------

class JudgeKind:
    name = ""
    benchmark = ""

    def applies(self, request) -> bool:
        """Whether this judge judges the request's responses at all."""
        raise NotImplementedError

    def selects(self, request, text: str) -> bool:
        """Whether this particular response is judged (all of them, unless the paper says otherwise)."""
        return True

    def cases(self, request, text: str) -> list[Case]:
        raise NotImplementedError

    def parse(self, raw: str) -> Reading:
        raise NotImplementedError

    def combine(self, readings: list[tuple[Case, Reading]]) -> dict:
        """The scorer's verdict from the readings of one response's cases (all of them answered)."""
        (_, reading), = readings
        return {**reading.value, "status": reading.status}

    def empty_verdict(self) -> dict:
        """The verdict of an empty response, given without a call."""
        raise NotImplementedError

    def label(self, verdict: dict | None):
        """A verdict as a label comparable with a human's (None when it has none)."""
        raise NotImplementedError

    def human_label(self, value):
        """A human verdict in the same label space; ValueError for a value this judge has no label for."""
        raise NotImplementedError


# BlackSwan, metric/llm_match_llama.py (github.com/sahithyaravi/BlackSwan), as the authors send it.
LLM_MATCH_PROMPT = (
    "\nYou are an AI assistant tasked with evaluating how well a given response aligns with the provided ground "
    "truth. Focus on the semantic similarity between the two texts. Your assessment should produce a single "
    "integer score between 1 and 5:\n\n"
    "5: The response matches the ground truth perfectly.\n"
    "1: The response is entirely different from the ground truth.\n\n"
    "Please return your evaluation in the following format:\n"
    "Reason: A brief, ten-word explanation for your score.\n"
    "Score: Your score.\n\n"
    "Ground Truth:    \n"
    "{ground_truth}\n\n"
    "Response to Score:\n"
    "{response}\n"
)
LLM_MATCH_RANGE = (1, 5)


class LlmMatch(JudgeKind):
    name = "llm_match"
    benchmark = "blackswan"

    def applies(self, request) -> bool:
        return request.variant.endswith("_gen") and isinstance(request.gold, list | tuple) and bool(request.gold)

    def cases(self, request, text: str) -> list[Case]:
        return [Case(f"ref:{index}", LLM_MATCH_PROMPT.format(ground_truth=reference, response=text))
                for index, reference in enumerate(request.gold)]

    def parse(self, raw: str) -> Reading:
        cleaned = _clean(raw)
        reason = re.search(r"\breason\s*:\s*(.*?)\s*(?:\bscore\s*:|$)", cleaned, re.I | re.S)
        value = {"score": None, "reason": reason.group(1).strip() if reason else ""}
        marked = re.findall(r"\bscore\s*[:=]\s*\(?(\d+(?:\.\d+)?)", cleaned, re.I)
        if not marked:
            marked = re.findall(r"^\W*(\d+(?:\.\d+)?)\W*$", cleaned)  # the answer is the number alone
        token, decided = _one(marked)
        if not decided or "." in token or not LLM_MATCH_RANGE[0] <= int(token) <= LLM_MATCH_RANGE[1]:
            return Reading(UNPARSED, value)
        return Reading(OK, {**value, "score": int(token)})

    def combine(self, readings: list[tuple[Case, Reading]]) -> dict:
        scores = [r.value["score"] for _, r in readings if r.ok]
        return {"scores": scores, "reasons": [r.value.get("reason", "") for _, r in readings if r.ok],
                "references": [case.reference_key for case, r in readings if r.ok],
                "pairs": len(readings), "unparsed": sum(not r.ok for _, r in readings),
                "status": OK if scores else UNPARSED}

    def empty_verdict(self) -> dict:
        # BlackSwan's scorer never asks about empty responses; a rating needs a text.
        return {"scores": [], "reasons": [], "references": [], "pairs": 0, "unparsed": 0, "status": EMPTY}

    def label(self, verdict):
        score = (verdict or {}).get("score")
        return score if isinstance(score, int) else None

    def human_label(self, value):
        if isinstance(value, bool) or not isinstance(value, int | str) or not str(value).strip().isdigit():
            raise ValueError(f"an LLM-Match rating is an integer 1–5 (got {value!r})")
        number = int(str(value).strip())
        if not LLM_MATCH_RANGE[0] <= number <= LLM_MATCH_RANGE[1]:
            raise ValueError(f"an LLM-Match rating is an integer 1–5 (got {value!r})")
        return number


# CVRR-ES, Evaluation-Scripts/LLM_Judge_evaluation.py (github.com/mbzuai-oryx/CVRR-Evaluation-Suite).
CVRR_SYSTEM = (
    "You are an intelligent chatbot designed for evaluating the correctness of AI assistant predictions for "
    "question-answer pairs. "
    "Your task is to compare the predicted answer with the ground-truth answer and determine if the predicted "
    "answer is correct or not. Here's how you can accomplish the task:"
    "------"
    "##INSTRUCTIONS: "
    "- Focus on the correctness and accuracy of the predicted answer with the ground-truth.\n"
    "- Consider predictions with less specific details as correct evaluation, unless such details are explicitly "
    "asked in the question.\n"
)
CVRR_USER = (
    "Please evaluate the following video-based question-answer pair:\n\n"
    "Question: {question}\n"
    "Ground truth correct Answer: {answer}\n"
    "Predicted Answer: {prediction}\n\n"
    "Provide your evaluation as a correct/incorrect prediction along with the score where the score is an integer "
    "value between 0 (fully wrong) and 5 (fully correct). The middle score provides the percentage of correctness."
    "Please generate the response in the form of a Python dictionary string with keys 'pred', 'score' and "
    "'reason', where value of 'pred' is  a string of 'correct' or 'incorrect', value of 'score' is in INTEGER, "
    "not STRING and value of 'reason' should providethe reason behind the decision."
    "Only provide the Python dictionary string."
    "For example, your response should look like this: {{'pred': 'correct', 'score': 4.8, 'reason': reason}}."
)
CVRR_SCORE_RANGE = (0, 5)
_CODE_FENCE = re.compile(r"```(?:python|json|py)?\s*(.*?)```", re.S | re.I)


def _literal_dict(text: str) -> dict | None:
    """The first `{…}` … last `}` span read as a Python literal or JSON; None if neither reads a dict."""
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        return None
    span = text[start:end + 1]
    for load in (ast.literal_eval, json.loads):
        try:
            found = load(span)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
        if isinstance(found, dict):
            return {str(key).strip().lower(): value for key, value in found.items()}
    return None


def _dict_fields(text: str) -> dict:
    """Key-by-key reading of a dict-like answer that is not a valid literal (a quote inside the reason)."""
    fields: dict = {}
    preds = re.findall(r"""['"]pred['"]\s*:\s*['"]([^'"]*)['"]""", text, re.I)
    pred, decided = _one([p.strip().lower() for p in preds])
    if decided:
        fields["pred"] = pred
    elif preds:
        fields["conflict"] = True
    scores = re.findall(r"""['"]score['"]\s*:\s*['"]?(-?\d+(?:\.\d+)?)""", text, re.I)
    score, decided = _one(scores)
    if decided:
        fields["score"] = float(score) if "." in score else int(score)
    reason = re.search(r"""['"]reason['"]\s*:\s*['"]?(.*?)['"]?\s*}?\s*$""", text, re.I | re.S)
    if reason:
        fields["reason"] = reason.group(1).strip()
    return fields


def _cvrr_score(value):
    """A 0–5 score as the judge wrote it (int when whole); None when it is not a number in range."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        text = value.strip()
        if not re.fullmatch(r"-?\d+(?:\.\d+)?", text):
            return None
        value = float(text)
    if not isinstance(value, int | float) or not CVRR_SCORE_RANGE[0] <= value <= CVRR_SCORE_RANGE[1]:
        return None
    return int(value) if float(value).is_integer() else float(value)


class CvrrJudge(JudgeKind):
    name = "cvrr"
    benchmark = "cvrr"

    def applies(self, request) -> bool:
        return request.variant == "qa"

    def cases(self, request, text: str) -> list[Case]:
        return [Case("", CVRR_USER.format(question=request.text, answer=request.gold, prediction=text),
                     system=CVRR_SYSTEM)]

    def parse(self, raw: str) -> Reading:
        text = str(raw or "").strip()
        fenced = _CODE_FENCE.findall(text)
        if len(fenced) == 1:
            text = fenced[0].strip()
        record = _literal_dict(text)
        if record is None or not isinstance(record.get("pred"), str):
            record = _dict_fields(text)
        pred = record.get("pred")
        reason = record.get("reason")
        value = {"pred": None, "score": _cvrr_score(record.get("score")),
                 "reason": reason.strip() if isinstance(reason, str) else ("" if reason is None else str(reason))}
        if not isinstance(pred, str) or not pred.strip() or record.get("conflict"):
            return Reading(UNPARSED, value)
        return Reading(OK, {**value, "pred": pred.strip().lower()})

    def empty_verdict(self) -> dict:
        return {"pred": "incorrect", "score": 0, "reason": "empty response", "status": EMPTY}

    def label(self, verdict):
        pred = (verdict or {}).get("pred")
        return pred if pred in ("correct", "incorrect") else None

    def human_label(self, value):
        if isinstance(value, bool):
            return "correct" if value else "incorrect"
        text = str(value).strip().lower()
        if text not in ("correct", "incorrect"):
            raise ValueError(f"a CVRR-ES verdict is 'correct' or 'incorrect' (got {value!r})")
        return text


# MAIA: the paper's rule (§4.2, App. B.2); its prompt (Figure 5) is not in seeds/004.
MAIA_PROMPT = (
    "You are evaluating answers to an open-ended question about a video. The question and the answers are in "
    "Italian. Below are reference answers written by people who watched the video. The candidate answer is "
    "correct if it is semantically consistent with at least one of the reference answers: judge its meaning, "
    "not its wording or structure. It is incorrect if it is consistent with none of them.\n\n"
    "Question: {question}\n\n"
    "Reference answers:\n{references}\n\n"
    "Candidate answer: {answer}\n\n"
    "Give your reason in one short sentence, then end with a line that is exactly\n"
    "Verdict: correct\n"
    "or\n"
    "Verdict: incorrect"
)


class MaiaJudge(JudgeKind):
    name = "maia"
    benchmark = "maia"

    def applies(self, request) -> bool:
        return request.variant == "oevqa"

    def cases(self, request, text: str) -> list[Case]:
        references = "\n".join(f"{index}. {answer}" for index, answer in enumerate(request.gold, start=1))
        return [Case("", MAIA_PROMPT.format(question=request.text, references=references, answer=text))]

    def parse(self, raw: str) -> Reading:
        cleaned = _clean(raw)
        found = [word.lower() for word in re.findall(r"\bverdict\s*[:=]\s*(correct|incorrect)\b", cleaned, re.I)]
        reason = re.split(r"\bverdict\s*[:=]", cleaned, maxsplit=1, flags=re.I)[0].strip()
        word, decided = _one(found)
        if not decided:
            return Reading(UNPARSED, {"correct": None, "reason": reason})
        return Reading(OK, {"correct": word == "correct", "reason": reason})

    def empty_verdict(self) -> dict:
        return {"correct": False, "reason": "empty response", "status": EMPTY}

    def label(self, verdict):
        correct = (verdict or {}).get("correct")
        return correct if isinstance(correct, bool) else None

    def human_label(self, value):
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        words = {"correct": True, "incorrect": False, "yes": True, "no": False, "true": True, "false": False,
                 "1": True, "0": False}
        if text not in words:
            raise ValueError(f"a MAIA verdict is correct/incorrect (got {value!r})")
        return words[text]


# NL-EYE, Appendix C "Prompt of Auto Evaluation of Explanation" (seeds/002), word for word.
NLEYE_PROMPT = (
    "Context: {premise}.\n\n"
    "Plausible Hypothesis: {plausible}.\n\n"
    "Less Plausible Hypothesis: {other}.\n\n"
    "Return 0 (Not logical at all), 1 (Logical but different), or 2 (Logical and same as one of the gold)\n\n"
    "if the candidate's explanation presents the same logical common sense as appears in one of the gold "
    "explanations for justifying the plausible hypothesis.\n\n"
    "Candidate explanation: {candidate}.\n\n"
    "Gold explanations:\n\n"
    "{golds}"
)
NLEYE_LABELS = (0, 1, 2)
NLEYE_VALID = 2
_NLEYE_PHRASES = {"not logical at all": 0, "logical but different": 1, "logical and same as one of the gold": 2}


def nleye_references(request) -> list[str]:
    """The gold explanation, then the validated human explanations (`human_explanations` of the payload)."""
    source = request.source or {}
    gold = str(source.get("explanation") or request.extra.get("explanation") or "").strip()
    humans = [str(text).strip() for text in source.get("human_explanations") or [] if str(text).strip()]
    return [text for text in dict.fromkeys([gold, *humans]) if text]


class NleyeExplanationJudge(JudgeKind):
    name = "nleye_explanation"
    benchmark = "nleye"

    def applies(self, request) -> bool:
        return request.variant == "triplet"

    def selects(self, request, text: str) -> bool:
        """Only explanations of correct predictions are judged (seeds/002 §5.1)."""
        parsed = parsing.parse_for_request(request, text)
        return parsed.ok and request.gold is not None and int(parsed.value) == int(request.gold)

    def cases(self, request, text: str) -> list[Case]:
        source = request.source or {}
        label = int(source["label"])
        references = nleye_references(request)
        if not references:
            raise JudgeError(f"{request.item_id}: no gold explanation to judge against")
        golds = "\n\n".join(f"Explanation {index}: {text}" for index, text in enumerate(references, start=1))
        return [Case("", NLEYE_PROMPT.format(premise=_sentence(source["premise"]),
                                             plausible=_sentence(source[f"hypothesis{label}"]),
                                             other=_sentence(source[f"hypothesis{3 - label}"]),
                                             candidate=_sentence(text), golds=golds))]

    def parse(self, raw: str) -> Reading:
        cleaned = _clean(raw)
        tiers = (
            lambda: re.findall(r"^\W*(\d+)\W*$", cleaned),  # the number alone
            lambda: re.findall(r"\b(?:answer|label|score|rating|result|output|verdict|class|category)\b"
                               r"(?:\s+is)?\s*[:=]?\s*\(?(\d+)\b", cleaned, re.I),
            lambda: re.findall(r"^\W*(\d+)(?=\s*[-–:.)(]|\s*$|\s+\()", cleaned),  # "2 (Logical and same …)"
            lambda: [str(label) for phrase, label in _NLEYE_PHRASES.items()
                     if re.search(rf"(?<!\w){re.escape(phrase)}", cleaned, re.I)],
        )
        for tier in tiers:
            found = tier()
            if not found:
                continue
            token, decided = _one([int(token) for token in found])
            if decided and token in NLEYE_LABELS:
                return Reading(OK, {"label": token})
            return Reading(UNPARSED, {"label": None})
        return Reading(UNPARSED, {"label": None})

    def empty_verdict(self) -> dict:
        return {"label": 0, "status": EMPTY}

    def label(self, verdict):
        label = (verdict or {}).get("label")
        return label if label in NLEYE_LABELS else None

    def human_label(self, value):
        if isinstance(value, bool) or str(value).strip() not in {str(label) for label in NLEYE_LABELS}:
            raise ValueError(f"an NL-EYE explanation label is 0, 1 or 2 (got {value!r})")
        return int(str(value).strip())


KINDS: dict[str, JudgeKind] = {kind.name: kind for kind in
                               (LlmMatch(), CvrrJudge(), MaiaJudge(), NleyeExplanationJudge())}
KIND_BY_BENCHMARK = {kind.benchmark: name for name, kind in KINDS.items()}


def get_kind(name: str) -> JudgeKind:
    try:
        return KINDS[name]
    except KeyError:
        raise JudgeError(f"Unknown judge kind {name!r}; choose one of {', '.join(KINDS)}.") from None


# --- The judge model -------------------------------------------------------------------------------

def split_model(model: str, backend: str = "") -> tuple[str, str]:
    """(backend, model id) from `--judge-model`: "openai:gpt-4o" names its backend; otherwise `backend`
    or `causal_lm`."""
    prefix, sep, rest = (model or "").partition(":")
    if sep and prefix in CHAT_BACKENDS and rest:
        if backend and backend != prefix:
            raise JudgeError(f"The judge model {model!r} names backend {prefix!r} but {backend!r} was asked.")
        return prefix, rest
    return backend or DEFAULT_BACKEND, model


def judge_spec(model: str, *, backend: str = "", revision: str = "", options: dict | None = None) -> runner.BackendSpec:
    """The judge as loaded and as keyed in the cache (its revision resolved without loading weights)."""
    backend, model_id = split_model(model, backend)
    if not model_id:
        raise JudgeError("A judge model (hub id, local folder or API model name) is required.")
    if backend not in CHAT_BACKENDS:
        raise JudgeError(f"A judge needs a chat backend: {', '.join(CHAT_BACKENDS)} (got {backend!r}).")
    try:
        resolved = registry.resolve_revision(backend, model_id, revision)
    except BackendError as exc:
        raise JudgeError(str(exc)) from None
    return runner.BackendSpec.make(backend, model_id, revision, resolved, options)


def judge_params(params: dict | GenerationParams | None = None) -> GenerationParams:
    """Greedy single answers unless told otherwise (so verdicts are reproducible and cached)."""
    if isinstance(params, GenerationParams):
        return params
    given = {key: value for key, value in (params or {}).items() if value is not None}
    unknown = sorted(set(given) - {"max_new_tokens", "temperature", "top_p", "seed"})
    if unknown:
        raise JudgeError(f"Unknown judge parameters {', '.join(unknown)}.")
    return GenerationParams(max_new_tokens=int(given.get("max_new_tokens", DEFAULT_MAX_NEW_TOKENS)),
                            temperature=float(given.get("temperature", 0.0)), top_p=float(given.get("top_p", 1.0)),
                            n=1, seed=int(given.get("seed", 0)))


@dataclass
class JudgeStats:
    responses: int = 0  # responses the judge was asked about
    not_selected: int = 0  # responses the kind does not judge (NL-EYE: wrong predictions)
    empty: int = 0  # empty responses: verdict without a call
    skipped: int = 0  # (response, reference) pairs judged before
    calls: int = 0  # judge calls made (cache misses sent to the backend)
    from_cache: int = 0
    ok: int = 0
    unparsed: int = 0
    failed: int = 0

    def as_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass
class Answered:
    """One case's answer: the call's record and the reading of its text."""

    case: Case
    chat: ChatRequest
    outcome: runner.Outcome
    reading: Reading | None  # None when the call failed


class Judge:
    """A judge kind on one judge model: callable as `judge(request, response_text) -> verdict` for the
    scorers, and used by `judge_run` for stored judgments."""

    def __init__(self, kind: str | JudgeKind, spec: runner.BackendSpec, *, params=None, batch_size: int = 8,
                 pool: runner.BackendPool | None = None):
        self.kind = get_kind(kind) if isinstance(kind, str) else kind
        self.spec = spec
        self.params = judge_params(params)
        self.batch_size = max(1, int(batch_size))
        self.pool = pool or runner.BackendPool(max_loaded=1)
        self.stats = JudgeStats()

    @property
    def provenance(self) -> dict:
        return {"kind": self.kind.name, "model": self.spec.model_id, "revision": self.spec.cache_revision,
                "backend": self.spec.backend, "params": self.params.as_dict()}

    # -- the scorer hook
    def __call__(self, request, response_text: str) -> dict:
        return self.judge_many([(request, response_text)])[0]

    def judge_many(self, pairs: list[tuple[Any, str]]) -> list[dict]:
        """A verdict per (request, response text), in order; the calls go out in batches.
        Raises JudgeError when a call fails or a request is not one this judge judges."""
        plans = []
        for request, text in pairs:
            if not self.kind.applies(request):
                raise JudgeError(f"The {self.kind.name} judge does not judge request {request.request_id!r} "
                                 f"(variant {request.variant!r}).")
            self.stats.responses += 1
            if not (text or "").strip():
                self.stats.empty += 1
                plans.append(None)
            else:
                plans.append(self.kind.cases(request, text))
        flat = [(index, case) for index, cases in enumerate(plans) if cases for case in cases]
        answered = self.answer([case for _, case in flat], [pairs[index][0].request_id for index, _ in flat])
        by_pair: dict[int, list[Answered]] = {}
        for (index, _), answer in zip(flat, answered, strict=True):
            by_pair.setdefault(index, []).append(answer)
        verdicts = []
        for index, cases in enumerate(plans):
            if cases is None:
                verdicts.append(self.kind.empty_verdict())
                continue
            failed = [a for a in by_pair[index] if a.reading is None]
            if failed:
                raise JudgeError(f"The {self.kind.name} judge ({self.spec.model_id}) failed on request "
                                 f"{pairs[index][0].request_id!r}: {failed[0].outcome.error}")
            verdicts.append(self.kind.combine([(a.case, a.reading) for a in by_pair[index]]))
        return verdicts

    # -- calls through the cache
    def answer(self, cases: list[Case], request_ids: list[str] | None = None) -> list[Answered]:
        request_ids = request_ids or [""] * len(cases)
        out: list[Answered] = []
        for start in range(0, len(cases), self.batch_size):
            batch = cases[start:start + self.batch_size]
            chats = [case.chat(self.params, f"{rid}#judge:{self.kind.name}:{case.reference_key}")
                     for case, rid in zip(batch, request_ids[start:start + self.batch_size], strict=True)]
            for case, chat, outcome in zip(batch, chats, self._call(chats), strict=True):
                reading = None if outcome.error else self.kind.parse(outcome.text)
                if reading is None:
                    self.stats.failed += 1
                elif reading.ok:
                    self.stats.ok += 1
                else:
                    self.stats.unparsed += 1
                out.append(Answered(case, chat, outcome, reading))
        return out

    def _call(self, chats: list[ChatRequest]) -> list[runner.Outcome]:
        spec = self.spec
        keys = [cache.cache_key(model_id=spec.model_id, revision=spec.cache_revision, backend=spec.backend,
                                request=chat, backend_options=spec.option_dict) if cache.cacheable(chat) else None
                for chat in chats]
        hits = cache.lookup([key for key in keys if key])
        outcomes: list[runner.Outcome | None] = [None] * len(chats)
        to_send, owners, sent = [], [], {}
        for index, (chat, key) in enumerate(zip(chats, keys, strict=True)):
            if key and key in hits:
                row = hits[key]
                outcomes[index] = runner.Outcome(list(row.texts), 0.0, row.prompt_tokens, row.completion_tokens,
                                                 from_cache=True)
                self.stats.from_cache += 1
            elif key and key in sent:
                owners[sent[key]].append(index)
            else:
                if key:
                    sent[key] = len(to_send)
                to_send.append(chat)
                owners.append([index])
        if to_send:
            backend = self.pool.get(spec, batch_size=self.batch_size)
            self.stats.calls += len(to_send)
            try:
                results = backend.generate(to_send)
            except BackendError:
                raise
            except Exception as exc:  # noqa: BLE001 - recorded on every judgment of the batch, retried later
                logger.exception("judge %s failed on a batch of %d", spec.model_id, len(to_send))
                results = [ChatResult(texts=[], error=f"{type(exc).__name__}: {exc}") for _ in to_send]
            if len(results) != len(to_send):
                raise BackendError(f"{spec.backend}: {len(results)} results for {len(to_send)} requests")
            for result, owner in zip(results, owners, strict=True):
                if not result.error and not result.texts:
                    result = ChatResult(texts=[], latency_s=result.latency_s, error="the judge returned no text")
                key = keys[owner[0]]
                if key and result.ok:
                    cache.store(key, model_id=spec.model_id, revision=spec.cache_revision, backend=spec.backend,
                                result=result)
                for index in owner:
                    outcomes[index] = runner.Outcome.of(result)
        return outcomes


def for_benchmark(benchmark_slug: str, model_id: str, *, backend: str = "", revision: str = "",
                  backend_options: dict | None = None, params: dict | None = None, batch_size: int = 8,
                  kind: str = "") -> Judge:
    """The judge a benchmark's scorer uses (`evaluation.scoring.load_judge`): BlackSwan → llm_match,
    CVRR-ES → cvrr, MAIA → maia, NL-EYE → nleye_explanation. `model_id` may name its backend
    ("openai:gpt-4o"); the default backend is causal_lm."""
    name = kind or KIND_BY_BENCHMARK.get(benchmark_slug)
    if name is None:
        raise JudgeError(f"{benchmark_slug!r} has no LLM judge; judges exist for {', '.join(KIND_BY_BENCHMARK)}.")
    spec = judge_spec(model_id, backend=backend, revision=revision, options=backend_options)
    return Judge(name, spec, params=params, batch_size=batch_size)


def judge_texts(judge: Judge, response: str, references, *, question: str = "", premise: str = "",
                plausible: str = "", other: str = "") -> dict:
    """One verdict from plain texts, without a benchmark request: `references` is the ground truth
    (CVRR-ES: one answer), the references (LLM-Match, MAIA) or the gold explanation followed by the
    validated human ones (NL-EYE, which also needs `premise`, `plausible` and `other`)."""
    from evaluation.benchmarks.base import EvalRequest

    references = [references] if isinstance(references, str) else list(references)
    name = judge.kind.name
    if name == CvrrJudge.name:
        if len(references) != 1:
            raise JudgeError("The CVRR-ES judge compares with one ground-truth answer.")
        request = EvalRequest("text:qa", "text", "qa", question, question, gold=references[0])
    elif name == NleyeExplanationJudge.name:
        source = {"premise": premise, "hypothesis1": plausible, "hypothesis2": other, "label": 1,
                  "explanation": references[0] if references else "", "human_explanations": references[1:]}
        request = EvalRequest("text:triplet", "text", "triplet", "", "", gold=1, answer_type="choice_12",
                              source=source)
    else:
        variant = "text_gen" if name == LlmMatch.name else "oevqa"
        request = EvalRequest(f"text:{variant}", "text", variant, question, question, gold=references)
    return judge(request, response)


# --- Judging a stored run --------------------------------------------------------------------------

def _requests_of(run: EvaluationRun) -> dict:
    return {planned.request.request_id: planned.request for planned in runner.plan(run)}


def judge_run(run: EvaluationRun, kind: str, spec: runner.BackendSpec, *, batch_size: int = 8, params=None,
              pool: runner.BackendPool | None = None) -> JudgeStats:
    """Judge every successful prediction of a run that `kind` judges and store one `Judgment` per
    (prediction, reference key). Pairs already judged (ok or unparsed) by this judge model are skipped;
    failed calls are replaced. Returns what was done."""
    judge = Judge(kind, spec, params=params, batch_size=batch_size, pool=pool)
    requests = {rid: request for rid, request in _requests_of(run).items() if judge.kind.applies(request)}
    predictions = list(Prediction.objects.filter(run=run, error="", request_id__in=list(requests))
                       .order_by("request_id", "sample_index"))
    done = set(Judgment.objects.filter(prediction__run=run, kind=judge.kind.name, judge_model=spec.model_id,
                                       parse_status__in=[OK, UNPARSED])
               .values_list("prediction_id", "reference_key"))
    todo: list[tuple[Prediction, Case]] = []
    stats = judge.stats
    for prediction in predictions:
        request = requests[prediction.request_id]
        stats.responses += 1
        if not prediction.raw_output.strip():
            stats.empty += 1
            continue
        if not judge.kind.selects(request, prediction.raw_output):
            stats.not_selected += 1
            continue
        for case in judge.kind.cases(request, prediction.raw_output):
            if (prediction.pk, case.reference_key) in done:
                stats.skipped += 1
            else:
                todo.append((prediction, case))
    for start in range(0, len(todo), judge.batch_size):
        batch = todo[start:start + judge.batch_size]
        answered = judge.answer([case for _, case in batch], [p.request_id for p, _ in batch])
        rows = [_judgment_row(prediction, judge, answer) for (prediction, _), answer in zip(batch, answered,
                                                                                             strict=True)]
        with transaction.atomic():
            Judgment.objects.filter(prediction__in=[p for p, _ in batch], kind=judge.kind.name,
                                    judge_model=spec.model_id, parse_status=FAILED).delete()
            Judgment.objects.bulk_create(rows, ignore_conflicts=True)
    return stats


def _judgment_row(prediction: Prediction, judge: Judge, answer: Answered) -> Judgment:
    outcome, reading = answer.outcome, answer.reading
    return Judgment(
        prediction=prediction, kind=judge.kind.name, judge_model=judge.spec.model_id,
        judge_revision=judge.spec.cache_revision, judge_backend=judge.spec.backend,
        reference_key=answer.case.reference_key, prompt=answer.chat.describe(), params=answer.chat.params.as_dict(),
        raw_verdict=outcome.text, verdict=reading.value if reading else None,
        parse_status=FAILED if reading is None else reading.status, error=outcome.error,
        from_cache=outcome.from_cache, latency_s=outcome.latency_s, prompt_tokens=outcome.prompt_tokens,
        completion_tokens=outcome.completion_tokens)


def run_judgments(run: EvaluationRun, kind: str, judge_model: str = ""):
    """A run's stored judgments of one kind (of one judge model when given)."""
    rows = Judgment.objects.filter(prediction__run=run, kind=get_kind(kind).name).select_related("prediction")
    return rows.filter(judge_model=judge_model) if judge_model else rows


def judgment_counts(run: EvaluationRun, kind: str, judge_model: str = "") -> dict:
    """How many stored judgments are ok, unparsed and failed."""
    counts = Counter(run_judgments(run, kind, judge_model).values_list("parse_status", flat=True))
    return {status: counts.get(status, 0) for status in (OK, UNPARSED, FAILED)}


def verdicts_for_run(run: EvaluationRun, kind: str, judge_model: str) -> dict[tuple[str, int], dict]:
    """(request id, sample index) → the scorer's verdict, from a run's stored judgments by one judge model.
    A prediction is in the result when every one of its cases has an answered judgment (ok or unparsed);
    empty responses get the kind's `empty_verdict`. Predictions the kind does not select are left out."""
    judge_kind = get_kind(kind)
    requests = {rid: request for rid, request in _requests_of(run).items() if judge_kind.applies(request)}
    rows: dict[int, dict[str, Judgment]] = {}
    for row in run_judgments(run, kind, judge_model).exclude(parse_status=FAILED):
        rows.setdefault(row.prediction_id, {})[row.reference_key] = row
    out = {}
    for prediction in Prediction.objects.filter(run=run, error="", request_id__in=list(requests)):
        request = requests[prediction.request_id]
        key = (prediction.request_id, prediction.sample_index)
        if not prediction.raw_output.strip():
            out[key] = judge_kind.empty_verdict()
            continue
        if not judge_kind.selects(request, prediction.raw_output):
            continue
        found = rows.get(prediction.pk, {})
        cases = judge_kind.cases(request, prediction.raw_output)
        if not found or any(case.reference_key not in found for case in cases):
            continue
        out[key] = judge_kind.combine([(case, Reading(found[case.reference_key].parse_status,
                                                      found[case.reference_key].verdict or {})) for case in cases])
    return out


# --- Agreement with people -------------------------------------------------------------------------

def human_key(key) -> tuple[str, int, str]:
    """A human verdict's key: "request id" (sample 0), (request id, sample), or (request id, sample,
    reference index) for LLM-Match's per-reference ratings."""
    if isinstance(key, str):
        return key, 0, ""
    if isinstance(key, list | tuple) and 2 <= len(key) <= 3 and isinstance(key[0], str):
        sample = int(key[1])
        reference = f"ref:{int(key[2])}" if len(key) == 3 and key[2] is not None else ""
        return key[0], sample, reference
    raise ValueError(f"A human verdict is keyed by a request id, (request id, sample) or "
                     f"(request id, sample, reference index); got {key!r}.")


@dataclass
class AgreementReport:
    kind: str
    n: int  # items both the judge and a person labelled
    accuracy: float | None  # share of those where the labels are equal
    cohens_kappa: float | None
    kappa_reason: str = ""
    human_items: int = 0
    not_judged: int = 0  # human-labelled items the judge has no judgment for
    judge_unusable: int = 0  # judged, but the verdict has no label (unparsed, failed, other verdict)
    confusion: dict = field(default_factory=dict)  # "judge|human" → count
    binary: dict | None = None  # NL-EYE: the same over valid (label 2) vs not valid

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def agreement_report(kind: str, judged: dict, human: dict) -> AgreementReport:
    """Cohen's kappa (`annotation.crowd.agreement`) and accuracy of the judge's labels against people's.

    `judged`: key → the judge's verdict dict (None for a failed call); `human`: key → a person's label
    (cvrr: correct/incorrect; maia: correct/incorrect or a boolean; nleye_explanation: 0/1/2;
    llm_match: 1–5). Keys as `human_key` reads them."""
    from annotation.crowd.agreement import cohens_kappa

    judge_kind = get_kind(kind)
    judged = {human_key(key): verdict for key, verdict in judged.items()}
    people = {}
    for key, value in human.items():
        try:
            people[human_key(key)] = judge_kind.human_label(value)
        except ValueError as exc:
            raise ValueError(f"Human verdict for {key!r}: {exc}") from None
    pairs, not_judged, unusable = [], 0, 0
    for key, person in people.items():
        if key not in judged:
            not_judged += 1
            continue
        label = judge_kind.label(judged[key])
        if label is None:
            unusable += 1
            continue
        pairs.append((label, person))
    return _report(judge_kind, pairs, len(people), not_judged, unusable, cohens_kappa)


def _report(judge_kind, pairs, human_items, not_judged, unusable, cohens_kappa) -> AgreementReport:
    kappa = cohens_kappa(pairs)
    agree = sum(a == b for a, b in pairs)
    report = AgreementReport(
        kind=judge_kind.name, n=len(pairs), accuracy=agree / len(pairs) if pairs else None,
        cohens_kappa=kappa.value, kappa_reason=kappa.reason, human_items=human_items, not_judged=not_judged,
        judge_unusable=unusable, confusion=dict(sorted(Counter(f"{a}|{b}" for a, b in pairs).items())))
    if judge_kind.name == NleyeExplanationJudge.name:
        valid = [(a == NLEYE_VALID, b == NLEYE_VALID) for a, b in pairs]
        binary = cohens_kappa(valid)
        report.binary = {"accuracy": sum(a == b for a, b in valid) / len(valid) if valid else None,
                         "cohens_kappa": binary.value, "kappa_reason": binary.reason}
    return report


def run_agreement(run: EvaluationRun, kind: str, judge_model: str, human: dict) -> AgreementReport:
    """Agreement of a run's stored judgments (per prediction and reference key) with human verdicts."""
    judged = {}
    for row in run_judgments(run, kind, judge_model):
        key = (row.prediction.request_id, row.prediction.sample_index,
               int(row.reference_key.split(":", 1)[1]) if row.reference_key else None)
        verdict = row.verdict if row.parse_status == OK else None
        judged[key if row.reference_key else key[:2]] = verdict
    return agreement_report(kind, judged, human)


def read_human_verdicts(lines: Iterable[str], source: str = "human verdicts") -> dict:
    """Human verdicts from JSON lines `{"request_id", "label", ["sample"], ["reference"]}` (reference:
    the index of an LLM-Match reference)."""
    verdicts = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError as exc:
            raise ValueError(f"{source} line {number}: not JSON ({exc}).") from None
        if not isinstance(record, dict) or not isinstance(record.get("request_id"), str) or "label" not in record:
            raise ValueError(f"{source} line {number}: needs `request_id` (a string) and `label`.")
        key = (record["request_id"], int(record.get("sample", 0)), record.get("reference"))
        verdicts[key if key[2] is not None else key[:2]] = record["label"]
    return verdicts
