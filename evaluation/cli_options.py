"""Command-line options that several management commands share and that read the benchmark registry."""

from __future__ import annotations

from evaluation import benchmarks


def add_benchmark_argument(parser, flag: str = "--benchmark", **kwargs) -> None:
    """`--benchmark SLUG`, with the registered benchmarks as its choices and in its help."""
    known = benchmarks.slugs()
    parser.add_argument(flag, choices=known, help=f"benchmark slug: {', '.join(known)}", **kwargs)


def supporting_text(attribute: str, name: str) -> str:
    """The benchmarks that declare `name` in their `attribute` (judge_kinds, baselines,
    human_evaluations), for help texts."""
    return ", ".join(benchmarks.supporting(attribute, name)) or "no benchmark"
