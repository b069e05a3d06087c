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

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from evaluation import exports, kits, request_exports
from evaluation.request_exports import PLATFORM_FORMAT
from evaluation.request_options import add_request_arguments, from_command_options


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
        version, request_options, variants = from_command_options(options)
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
