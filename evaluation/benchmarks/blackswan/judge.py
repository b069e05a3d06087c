r"""BlackSwan's LLM-Match judge: its prompt, the reading of "Reason: …" / "Score: N" and the
per-reference verdict.

Reading the score (`LlmMatch(parser=…)`, `evaluation.named_parsers` names): `authors` (the default, as
`metric/llm_match_llama.py` reads it) takes the first `Score:\s*(\d+)` match of the raw text;
`strict` reads "Score: N" in any case and markdown, or a number alone, and refuses two different
scores. Under both a value off the prompt's 1–5 scale is unparsed."""

from __future__ import annotations

import re

from evaluation import judge_registry, named_parsers
from evaluation.judges.base import EMPTY, OK, UNPARSED, Case, JudgeKind, Reading, _clean, _one

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
# metric/llm_match_llama.py: Llama-3.1-8B-Instruct, sampling at temperature 0.4, 100 new tokens
LLM_MATCH_MODEL = "meta-llama/Llama-3.1-8B-Instruct"
LLM_MATCH_PARAMS = {"temperature": 0.4, "max_new_tokens": 100}
AUTHORS_SCORE = re.compile(r"Score:\s*(\d+)")  # metric/llm_match_llama.py


@judge_registry.register
class LlmMatch(JudgeKind):
    """The authors' judge and parameters are the defaults (`LLM_MATCH_MODEL`, `LLM_MATCH_PARAMS`); each
    can be overridden and what was used is recorded on every judgment. Sampled verdicts are not cached
    (`evaluation.cache`); stored judgments are reused instead."""

    name = "llm_match"
    text_variant = "text_gen"
    default_model = LLM_MATCH_MODEL
    default_params = LLM_MATCH_PARAMS
    answer_choices = tuple(f"Score: {score}" for score in range(LLM_MATCH_RANGE[0], LLM_MATCH_RANGE[1] + 1))

    def __init__(self, parser: str = named_parsers.DEFAULT):
        self.parser = named_parsers.check(parser)

    def applies(self, request) -> bool:
        return request.variant.endswith("_gen") and isinstance(request.gold, list | tuple) and bool(request.gold)

    def cases(self, request, text: str) -> list[Case]:
        return [Case(f"ref:{index}", LLM_MATCH_PROMPT.format(ground_truth=reference, response=text))
                for index, reference in enumerate(request.gold)]

    def parse(self, raw: str) -> Reading:
        cleaned = _clean(raw)
        reason = re.search(r"\breason\s*:\s*(.*?)\s*(?:\bscore\s*:|$)", cleaned, re.I | re.S)
        value = {"score": None, "reason": reason.group(1).strip() if reason else ""}
        if self.parser == named_parsers.AUTHORS:
            first = AUTHORS_SCORE.search(raw or "")
            if first is None or not LLM_MATCH_RANGE[0] <= int(first.group(1)) <= LLM_MATCH_RANGE[1]:
                return Reading(UNPARSED, value)
            return Reading(OK, {**value, "score": int(first.group(1))})
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
