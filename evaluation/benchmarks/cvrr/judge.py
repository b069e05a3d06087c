"""The CVRR-ES judge: the authors' system and user messages and the reading of the Python-dict answer."""

from __future__ import annotations

import ast
import json
import re

from evaluation import judge_registry
from evaluation.benchmarks.base import EvalRequest
from evaluation.judges.base import EMPTY, OK, UNPARSED, Case, JudgeError, JudgeKind, Reading, _one

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


@judge_registry.register
class CvrrJudge(JudgeKind):
    name = "cvrr"

    def applies(self, request) -> bool:
        return request.variant == "qa"

    def cases(self, request, text: str) -> list[Case]:
        return [Case("", CVRR_USER.format(question=request.text, answer=request.gold, prediction=text),
                     system=CVRR_SYSTEM)]

    answer_choices = tuple(f"{{'pred': '{pred}', 'score': {score}}}" for pred in ("correct", "incorrect")
                           for score in range(CVRR_SCORE_RANGE[0], CVRR_SCORE_RANGE[1] + 1))

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

    def text_request(self, references: list[str], question: str = "") -> EvalRequest:
        """A `qa` request on the question, whose ground truth is the one reference."""
        if len(references) != 1:
            raise JudgeError("The CVRR-ES judge compares with one ground-truth answer.")
        return EvalRequest("text:qa", "text", "qa", question, question, gold=references[0])

    def label(self, verdict):
        pred = (verdict or {}).get("pred")
        return pred if pred in ("correct", "incorrect") else None

    human_labels = ("correct", "incorrect")

    def correct(self, verdict):
        label = self.label(verdict)
        return None if label is None else label == "correct"

    def human_label(self, value):
        if isinstance(value, bool):
            return "correct" if value else "incorrect"
        text = str(value).strip().lower()
        if text not in ("correct", "incorrect"):
            raise ValueError(f"a CVRR-ES verdict is 'correct' or 'incorrect' (got {value!r})")
        return text
