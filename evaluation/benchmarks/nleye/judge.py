"""NL-EYE's explanation judge: the paper's auto-evaluation prompt, the gold and human references
and the reading of the 0/1/2 label."""

from __future__ import annotations

import hashlib
import re

from evaluation import answer_parsing, judge_references, judge_registry
from evaluation.benchmarks.base import EvalRequest
from evaluation.judges.base import EMPTY, OK, UNPARSED, Case, JudgeError, JudgeKind, Reading, _clean, _one


def _sentence(text: str) -> str:
    """A description as the NL-EYE prompt shows it, ending in exactly one full stop."""
    return str(text or "").strip().rstrip(".").strip()


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


def nleye_reference_sources(request) -> list[dict]:
    """The references as `{"source", "text"}`, in this order: the gold explanation (source "gold"), the
    validated human explanations of the payload (`human_explanations`, source "payload:<index>"), then the
    explanations a curator approved after freezing (`evaluation.judge_references`, source
    "judge_reference:<id>"). A text given twice (white space collapsed, any case) counts once, where it
    first appears."""
    source = request.source or {}
    given = [("gold", source.get("explanation") or request.extra.get("explanation") or "")]
    given += [(f"payload:{index}", text) for index, text in enumerate(source.get("human_explanations") or [])]
    given += [(f"judge_reference:{found.get('id')}", found.get("text") or "")
              for found in request.extra.get(judge_references.EXTRA_KEY) or []]
    references: dict[str, dict] = {}
    for name, text in given:
        text = judge_references.normal_text(text)
        if text:
            references.setdefault(text.lower(), {"source": name, "text": text})
    return list(references.values())


def nleye_references(request) -> list[str]:
    """The texts of `nleye_reference_sources`: the gold explanation, then the validated human ones."""
    return [reference["text"] for reference in nleye_reference_sources(request)]


def reference_key(references: list[dict]) -> str:
    """"" while the references are the frozen item's own (gold and payload); with approved references,
    "refs:" and a digest of the texts, so that approving or revoking one asks for a new judgment and
    the judgments made against another set are kept but no longer count."""
    if not any(reference["source"].startswith("judge_reference:") for reference in references):
        return ""
    digest = hashlib.sha256("\n".join(reference["text"] for reference in references).encode()).hexdigest()
    return f"refs:{digest[:16]}"


@judge_registry.register
class NleyeExplanationJudge(JudgeKind):
    name = "nleye_explanation"
    answer_choices = tuple(str(label) for label in NLEYE_LABELS)

    def applies(self, request) -> bool:
        return request.variant == "triplet"

    def text_request(self, references: list[str], question: str = "", *, premise: str = "", plausible: str = "",
                     other: str = "", **context) -> EvalRequest:
        """A triplet request whose gold explanation is the first reference, followed by the validated human ones."""
        source = {"premise": premise, "hypothesis1": plausible, "hypothesis2": other, "label": 1,
                  "explanation": references[0] if references else "", "human_explanations": references[1:]}
        return EvalRequest("text:triplet", "text", "triplet", "", "", gold=1, answer_type="choice_12", source=source)

    def selects(self, request, text: str) -> bool:
        """Only explanations of correct predictions are judged (seeds/002 §5.1)."""
        parsed = answer_parsing.parse_for_request(request, text)
        return parsed.ok and request.gold is not None and int(parsed.value) == int(request.gold)

    def cases(self, request, text: str) -> list[Case]:
        source = request.source or {}
        label = int(source["label"])
        references = nleye_reference_sources(request)
        if not references:
            raise JudgeError(f"{request.item_id}: no gold explanation to judge against")
        golds = "\n\n".join(f"Explanation {index}: {reference['text']}"
                             for index, reference in enumerate(references, start=1))
        return [Case(reference_key(references), NLEYE_PROMPT.format(premise=_sentence(source["premise"]),
                                             plausible=_sentence(source[f"hypothesis{label}"]),
                                             other=_sentence(source[f"hypothesis{3 - label}"]),
                                             candidate=_sentence(text), golds=golds),
                     references=tuple(references))]

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

    human_labels = tuple(str(label) for label in NLEYE_LABELS)

    def human_label(self, value):
        if isinstance(value, bool) or str(value).strip() not in {str(label) for label in NLEYE_LABELS}:
            raise ValueError(f"an NL-EYE explanation label is 0, 1 or 2 (got {value!r})")
        return int(str(value).strip())
