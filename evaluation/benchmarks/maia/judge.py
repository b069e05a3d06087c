"""MAIA's open-answer judge: the prompt stating the paper's rule and the reading of "Verdict: …"."""

from __future__ import annotations

import re

from evaluation import judge_registry
from evaluation.judges.base import EMPTY, OK, UNPARSED, Case, JudgeKind, Reading, _clean, _one

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


@judge_registry.register
class MaiaJudge(JudgeKind):
    name = "maia"
    answer_choices = ("Verdict: correct", "Verdict: incorrect")
    text_variant = "oevqa"

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

    human_labels = ("correct", "incorrect")

    def correct(self, verdict):
        return self.label(verdict)

    def human_label(self, value):
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        words = {"correct": True, "incorrect": False, "yes": True, "no": False, "true": True, "false": False,
                 "1": True, "0": False}
        if text not in words:
            raise ValueError(f"a MAIA verdict is correct/incorrect (got {value!r})")
        return words[text]
