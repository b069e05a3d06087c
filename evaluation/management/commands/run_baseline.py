"""`manage.py run_baseline`: a paper's baseline (random, dumb_pixel, nli, unimodal) over a frozen
benchmark version, stored as an evaluation run beside the models' (`evaluation.baseline_runs`)."""

from django.core.management.base import BaseCommand, CommandError

from evaluation import baseline_runs, request_options, runs
from evaluation.cli_options import add_benchmark_argument, supporting_text
from generation.backends.base import BackendError


class Command(BaseCommand):
    help = ("Run a baseline over a frozen benchmark version: random (seeded, every benchmark), dumb_pixel, nli "
            "(text-only, one NLI model) or unimodal (one or more causal LMs), each on the benchmarks that "
            "support it.")

    def create_parser(self, prog_name, subcommand, **kwargs):
        kwargs.setdefault("conflict_handler", "resolve")  # --version names the benchmark version
        return super().create_parser(prog_name, subcommand, **kwargs)

    def add_arguments(self, parser):
        add_benchmark_argument(parser, required=True)
        parser.add_argument("--version", dest="version_label", required=True, metavar="LABEL",
                            help="label of a frozen version of that benchmark")
        fits = {name: "every benchmark" if cls.everywhere else supporting_text("baselines", name)
                for name, cls in baseline_runs.BASELINE_CLASSES.items()}
        parser.add_argument("--baseline", required=True, choices=baseline_runs.BASELINES,
                            help="; ".join(f"{name}: {fits[name]}" for name in baseline_runs.BASELINES))
        parser.add_argument("--model", action="append", default=[],
                            help="nli: a registered NLI model; unimodal: a registered causal LM (repeat for several); "
                                 "its name, or the hub id or folder its entry holds")
        parser.add_argument("--revision", default="", help="the registered models' pinned revision (default: it)")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--variants", default="", help="comma-separated task variants (default: all it answers)")
        parser.add_argument("--limit", type=int, help="only the first N items")
        parser.add_argument("--input", dest="input_strategy", default="", help="input strategy (random only)")
        parser.add_argument("--batch-size", type=int, default=16, help="texts per model forward pass")

    def handle(self, *args, **options):
        try:
            version = request_options.find_version(options["benchmark"], options["version_label"])
            run = baseline_runs.run_baseline(
                version, options["baseline"], seed=options["seed"],
                **baseline_runs.registered_models(options["baseline"], options["model"], options["revision"]),
                variants=[v.strip() for v in options["variants"].split(",") if v.strip()],
                limit=options["limit"], input_strategy=options["input_strategy"], batch_size=options["batch_size"])
        except (runs.RunConfigError, baseline_runs.BaselineError, BackendError) as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"Run {run.pk}: {run.model_id} on {run.version} ({run.input_strategy}), {run.status}: "
                          f"{run.completed_predictions} of {run.total_predictions} predictions. {run.message}")
        if run.status != runs.Status.SUCCEEDED:
            raise CommandError(f"Run {run.pk} {run.status}: {run.message}")
