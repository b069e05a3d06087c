"""The registry of judge kinds, by name and by benchmark."""

from __future__ import annotations

from evaluation.judges.base import JudgeError, JudgeKind
from evaluation.judges.cvrr import CvrrJudge
from evaluation.judges.llm_match import LlmMatch
from evaluation.judges.maia import MaiaJudge
from evaluation.judges.nleye import NleyeExplanationJudge

KINDS: dict[str, JudgeKind] = {kind.name: kind for kind in
                               (LlmMatch(), CvrrJudge(), MaiaJudge(), NleyeExplanationJudge())}
KIND_BY_BENCHMARK = {kind.benchmark: name for name, kind in KINDS.items()}


def get_kind(name: str) -> JudgeKind:
    try:
        return KINDS[name]
    except KeyError:
        raise JudgeError(f"Unknown judge kind {name!r}; choose one of {', '.join(KINDS)}.") from None
