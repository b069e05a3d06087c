"""The one check of the options that decide a version's requests: input strategy, prompting, option order and
variants, against what the version's benchmark offers.

Every way in goes through `check`: a run made on the pages, by the API or by `manage.py evaluate`
(`evaluation.runs.create_run`), an export of requests and an import of predictions from the pages and the API
(`evaluation.request_exports`, `evaluation.imported_runs`), and the commands that name the requests by their
options (`manage.py export_requests`, `score --predictions`, `import_run`: `add_request_arguments` and
`from_command_options`). The rules and their words are the benchmark's own (`Benchmark.resolve_input_strategy`,
`check_prompting`, `check_option_order`, `check_variants`, which its `requests` also applies), so a bad option is
refused with the same message everywhere: `RunConfigError`, whose message says what to change.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.core.management import CommandError

from annotation.models import Benchmark as BenchmarkRecord
from annotation.models import BenchmarkVersion
from evaluation import benchmarks
from evaluation.benchmarks.base import Benchmark, RequestOptions
from evaluation.cli_options import add_benchmark_argument

DEFAULT_INPUT = "default"  # the benchmark's first input strategy
DEFAULT_PROMPTING = "standard"


class RunConfigError(ValueError):
    """Options that do not fit the benchmark, version or backend; the message says what to change."""


@dataclass(frozen=True)
class CheckedOptions:
    """A version's request options as checked: the benchmark, its input strategy (resolved: never "default"),
    prompting, option order (normalised) and variants (empty: all)."""

    benchmark: Benchmark
    input_strategy: str
    prompting: str
    option_order: str
    variants: list[str]


def find_version(benchmark_slug: str, label: str):
    """The frozen BenchmarkVersion `label` of a benchmark, or a RunConfigError that says what exists."""
    benchmark = BenchmarkRecord.objects.filter(slug=benchmark_slug).first()
    if benchmark is None:
        known = ", ".join(BenchmarkRecord.objects.values_list("slug", flat=True)) or "none"
        raise RunConfigError(f"Unknown benchmark {benchmark_slug!r}; known: {known}.")
    version = BenchmarkVersion.objects.filter(benchmark=benchmark, label=label).first()
    if version is None:
        labels = ", ".join(sorted(benchmark.versions.values_list("label", flat=True))) or "none yet"
        raise RunConfigError(f"{benchmark_slug} has no version {label!r}; its versions: {labels}.")
    if not version.frozen:
        raise RunConfigError(f"Version {version} is not frozen: freeze it before evaluating on it "
                             f"(results must point to an immutable version).")
    return version


def benchmark_of(version) -> Benchmark:
    """The registered benchmark of a version; RunConfigError when there is none."""
    try:
        return benchmarks.get(version.benchmark.slug)
    except KeyError as exc:
        raise RunConfigError(str(exc.args[0]) if exc.args else str(exc)) from None
    except (ImportError, AttributeError) as exc:
        raise RunConfigError(f"The benchmark module for {version.benchmark.slug!r} is not available: {exc}") from None


def check(version, *, input_strategy: str = "", prompting: str = DEFAULT_PROMPTING, option_order: str = "release",
          variants=()) -> CheckedOptions:
    """The options of a version's requests checked against its benchmark and normalised ("" or "default": the
    benchmark's first input strategy; "": standard prompting, the release order); RunConfigError with what to
    change for the first option the benchmark refuses."""
    benchmark = benchmark_of(version)
    asked = RequestOptions(input_strategy=input_strategy or DEFAULT_INPUT, prompting=prompting or DEFAULT_PROMPTING,
                           option_order=option_order or "release")
    try:
        return CheckedOptions(benchmark, benchmark.resolve_input_strategy(asked), benchmark.check_prompting(asked),
                              benchmark.check_option_order(asked), benchmark.check_variants(variants))
    except ValueError as exc:
        raise RunConfigError(str(exc)) from None


# --- The commands' options -----------------------------------------------------------------------------

def add_request_arguments(parser) -> None:
    """The options that decide a version's requests, for `manage.py export_requests`, `score` and `import_run`."""
    add_benchmark_argument(parser)
    parser.add_argument("--version", dest="version_label", metavar="LABEL", help="label of a frozen version")
    parser.add_argument("--input", dest="input_strategy", default=DEFAULT_INPUT,
                        help="input strategy of the benchmark (default: the paper's main one)")
    parser.add_argument("--prompting", default=DEFAULT_PROMPTING,
                        help="prompting strategy (standard, cot, dscp, ...)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the option orders (as in `evaluate`)")
    parser.add_argument("--variants", default="", help="comma-separated task variants (default: all)")
    parser.add_argument("--option-order", default=None, metavar="ORDER",
                        help="release (default: the release's letters and order) or shuffled:<seed>")


def from_command_options(options: dict) -> tuple:
    """(version, RequestOptions, variants) from the options of `add_request_arguments`, checked by `check`
    (the input strategy stays as asked, "default" included); CommandError for what does not fit, or when
    --benchmark or --version is missing."""
    missing = [flag for flag, key in (("--benchmark", "benchmark"), ("--version", "version_label")) if not options[key]]
    if missing:
        raise CommandError(f"Give {', '.join(missing)}.")
    variants = tuple(v.strip() for v in (options.get("variants") or "").split(",") if v.strip())
    try:
        version = find_version(options["benchmark"], options["version_label"])
        checked = check(version, input_strategy=options["input_strategy"], prompting=options["prompting"],
                        option_order=options.get("option_order") or "release", variants=variants)
    except RunConfigError as exc:
        raise CommandError(str(exc)) from None
    request_options = RequestOptions(input_strategy=options["input_strategy"] or DEFAULT_INPUT,
                                     prompting=checked.prompting, seed=options["seed"],
                                     option_order=checked.option_order)
    return version, request_options, variants
