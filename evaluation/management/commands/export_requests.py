"""`manage.py export_requests`: every evaluation request of a frozen version as JSON lines, for models
run outside the platform (score their answers with `manage.py score`).

One line per request of every variant: `request_id`, `item_id`, `variant`, `source` (the item's
record), `text` (the question or hypothesis without instructions), `options` (letter → text in the
order shown, when there are options), `order` (NL-EYE triplets: the source hypotheses in the order
shown, "12" or "21"), `hypothesis` (NL-EYE pairs: 1 or 2), `gold`; and what a model needs to be asked
the same way: `prompt` (and `context_prompt` / `describe_prompt` for two-step strategies),
`answer_type`, `n_samples`, `media` (role, kind, file under MEDIA_ROOT, checksum, segment, hidden,
label), `input`, `prompting`, `frames`, `seed`, `option_order`. The options default to each paper's main
setting. `--option-order` is `release` (the default: options under the release's letters, in the
release's order, question texts as released) or `shuffled:<seed>` (a seeded order per request); a
predictions file is scored with the order its requests were exported with. MAIA's VSV lines also
carry `statement_order` (which statement, true or false, is shown as A and as B: the paper's seeded
random assignment).

`--format lmms-eval` writes lmms-eval's per-sample JSON Lines and `--format vlmevalkit` VLMEvalKit's dataset
TSV instead (`evaluation.kits`), from the same requests in the same order: a row's `doc_id` / `index` is
the request's position in it, which `manage.py score --predictions-format` joins back when a row carries no
`request_id`.
"""

import dataclasses
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from evaluation import benchmarks, exports, kits, request_exports, runs
from evaluation.benchmarks.base import RequestOptions
from evaluation.cli_options import add_benchmark_argument
from evaluation.request_exports import PLATFORM_FORMAT


def add_request_arguments(parser) -> None:
    """The options that decide a version's requests, shared with `manage.py score`."""
    add_benchmark_argument(parser)
    parser.add_argument("--version", dest="version_label", metavar="LABEL", help="label of a frozen version")
    parser.add_argument("--input", dest="input_strategy", default="default",
                        help="input strategy of the benchmark (default: the paper's main one)")
    parser.add_argument("--prompting", default="standard", help="prompting strategy (standard, cot, dscp, ...)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the option orders (as in `evaluate`)")
    parser.add_argument("--variants", default="", help="comma-separated task variants (default: all)")
    parser.add_argument("--option-order", default=None, metavar="ORDER",
                        help="release (default: the release's letters and order) or shuffled:<seed>")


def request_setup(options) -> tuple:
    """(version, RequestOptions, variants) from the command's options; CommandError for what does not fit."""
    missing = [flag for flag, key in (("--benchmark", "benchmark"), ("--version", "version_label")) if not options[key]]
    if missing:
        raise CommandError(f"Give {', '.join(missing)}.")
    try:
        version = runs.find_version(options["benchmark"], options["version_label"])
        benchmark = benchmarks.get(options["benchmark"])
        request_options = RequestOptions(input_strategy=options["input_strategy"] or "default",
                                         prompting=options["prompting"], seed=options["seed"],
                                         option_order=options.get("option_order") or "release")
        benchmark.resolve_input_strategy(request_options)
        benchmark.check_prompting(request_options)
        request_options = dataclasses.replace(request_options,
                                              option_order=benchmark.check_option_order(request_options))
    except (runs.RunConfigError, KeyError, ValueError) as exc:
        raise CommandError(str(exc.args[0]) if exc.args else str(exc)) from None
    variants = tuple(v.strip() for v in options["variants"].split(",") if v.strip())
    return version, request_options, variants


class Command(BaseCommand):
    help = ("Write every evaluation request of a frozen benchmark version as JSON lines, or in an evaluation kit's "
            "format (lmms-eval, vlmevalkit).")

    def create_parser(self, prog_name, subcommand, **kwargs):
        kwargs.setdefault("conflict_handler", "resolve")  # --version names the benchmark version
        return super().create_parser(prog_name, subcommand, **kwargs)

    def add_arguments(self, parser):
        add_request_arguments(parser)
        parser.add_argument("--frames", default="", help="frame policy, e.g. uniform:8@448 (default: the paper's)")
        parser.add_argument("--format", dest="fmt", choices=(PLATFORM_FORMAT, *kits.names()), default=PLATFORM_FORMAT,
                            help="jsonl (default: the platform's JSON lines), lmms-eval (its per-sample JSON Lines) "
                                 "or vlmevalkit (its dataset TSV)")
        parser.add_argument("--out", required=True, help="the file to write ('-' for standard output)")

    def handle(self, *args, **options):
        version, request_options, variants = request_setup(options)
        to_stdout = options["out"] == "-"
        try:
            export = request_exports.request_export(version, request_options, variants, options["fmt"],
                                                    options["frames"])
            if to_stdout:
                for chunk in export.chunks:
                    self.stdout.write(chunk, ending="")
            else:
                exports.write_text(export.chunks, Path(options["out"]))  # renamed into place when complete
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        except OSError as exc:
            raise CommandError(f"Cannot write {options['out']}: {exc.strerror}.") from None
        target = "standard output" if to_stdout else options["out"]
        self.stderr.write(f"Wrote {export.counted.count} requests of {len(export.counted.items)} items of {version} "
                          f"to {target}.")
