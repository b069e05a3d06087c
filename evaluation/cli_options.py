"""Command-line options that several management commands (and the run form, which takes the same
`key=value` backend options) share, and those that read the benchmark registry."""

from __future__ import annotations

from django.core.management import CommandError

from evaluation import benchmarks
from generation import model_registry


def add_benchmark_argument(parser, flag: str = "--benchmark", **kwargs) -> None:
    """`--benchmark SLUG`, with the registered benchmarks as its choices and in its help."""
    known = benchmarks.slugs()
    parser.add_argument(flag, choices=known, help=f"benchmark slug: {', '.join(known)}", **kwargs)


def supporting_text(attribute: str, name: str) -> str:
    """The benchmarks that declare `name` in their `attribute` (judge_kinds, baselines,
    human_evaluations), for help texts."""
    return ", ".join(benchmarks.supporting(attribute, name)) or "no benchmark"


def parse_option(text: str) -> tuple[str, object]:
    """`key=value`; the value is read as JSON when it is JSON (numbers, true/false, objects), else text."""
    try:
        return model_registry.parse_option(text)
    except model_registry.ModelRefused:
        raise CommandError(f"--backend-option takes key=value (got {text!r}).") from None
