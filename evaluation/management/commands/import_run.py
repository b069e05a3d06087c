"""`manage.py import_run`: predictions made outside the platform imported as an evaluation run of a frozen
version (`evaluation.imported_runs`), which then shows on the results pages and the leaderboard like any run.

`--predictions FILE` is read as `manage.py score --predictions` reads it: the platform's JSON lines
(`request_id`, `response`, optional `sample`; a `judgment` is not imported), lmms-eval's per-sample JSON Lines
or VLMEvalKit's .tsv/.csv/.xlsx prediction table (`--predictions-format`, else told from the file), kit rows
joined to the requests by request id or by position. Give the options the requests were exported with
(`--input`, `--prompting`, `--seed`, `--variants`, `--option-order`, as `export_requests` takes them) and the
name the run is listed under (`--model-id`). Rows naming no request are left out and reported; a malformed
file, a version that is not frozen or a file with no answer is refused and nothing is kept. Prints the new
run's id, what was imported and its headline metrics.
"""

from django.core.management.base import BaseCommand, CommandError

from evaluation import headlines, imported_runs, results
from evaluation.request_exports import FORMATS
from evaluation.request_options import add_request_arguments, from_command_options


class Command(BaseCommand):
    help = ("Import predictions made outside the platform (JSON lines, lmms-eval samples or a VLMEvalKit table) as an "
            "evaluation run of a frozen version.")

    def create_parser(self, prog_name, subcommand, **kwargs):
        kwargs.setdefault("conflict_handler", "resolve")  # --version names the benchmark version
        return super().create_parser(prog_name, subcommand, **kwargs)

    def add_arguments(self, parser):
        add_request_arguments(parser)
        parser.add_argument("--predictions", required=True, metavar="FILE",
                            help="JSON lines (request_id, response, [sample]), lmms-eval samples or a VLMEvalKit "
                                 "prediction table")
        parser.add_argument("--predictions-format", choices=FORMATS, default=None,
                            help="jsonl (the platform's JSON lines), lmms-eval or vlmevalkit; default: told from the "
                                 "file")
        parser.add_argument("--model-id", required=True, metavar="NAME",
                            help="the model's name: the run is listed under it")

    def handle(self, *args, **options):
        version, request_options, variants = from_command_options(options)
        chosen = imported_runs.ImportOptions(
            input_strategy=request_options.input_strategy, prompting=request_options.prompting,
            seed=request_options.seed, variants=variants, option_order=request_options.option_order)
        try:
            run = imported_runs.import_run(version, options["predictions"], model_id=options["model_id"],
                                           fmt=options["predictions_format"], options=chosen)
        except imported_runs.ImportRefused as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"Run {run.pk}: {run.model_id} on {version} ({run.input_strategy} · {run.prompting} · "
                          f"{run.option_order}).")
        self.stdout.write(imported_runs.summary(run))
        found = results.run_results(run)
        if not found.ok:
            raise CommandError(f"Run {run.pk} was imported but cannot be scored: {found.error}")
        for line in headlines.headline_lines(version.benchmark.slug, found.metrics):
            self.stdout.write(line)
