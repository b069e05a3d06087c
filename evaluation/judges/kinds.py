"""The judge kinds by name (`evaluation.judge_registry`, filled by each benchmark package's `judge` module,
which `evaluation.benchmarks.discover` imports when the app is ready), and the kind a benchmark's scorer uses (its
first `Benchmark.judge_kinds`)."""

from __future__ import annotations

from evaluation import benchmarks, judge_registry
from evaluation.judges.base import JudgeError, JudgeKind

KINDS: dict[str, JudgeKind] = judge_registry.KINDS


def get_kind(name: str) -> JudgeKind:
    try:
        return KINDS[name]
    except KeyError:
        raise JudgeError(f"Unknown judge kind {name!r}; choose one of {', '.join(KINDS)}.") from None


def kind_for_benchmark(slug: str) -> str | None:
    """The judge kind the scorer of benchmark `slug` uses; None when it has no LLM judge (or is unknown)."""
    benchmark = benchmarks.find(slug or "")
    return (benchmark.judge_kind or None) if benchmark is not None else None


def judged_benchmarks(kind: str = "") -> list[str]:
    """The registered benchmarks judged by `kind` (by any judge kind when none is named)."""
    if kind:
        return benchmarks.supporting("judge_kinds", kind)
    return [benchmark.slug for benchmark in benchmarks.registered() if benchmark.judge_kinds]
