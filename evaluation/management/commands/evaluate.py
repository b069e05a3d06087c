"""`manage.py evaluate`: run a model over a frozen benchmark version, or resume a run.

Every prediction is parsed as it is written (`Prediction.parses`). When the run has finished, it is
scored under `--parser` (default `authors`, the benchmark authors' released rules; `strict` by name),
that parser's readings are stored, and the headline metrics are printed (per variant: value, n,
unparsed), as `manage.py score` prints them."""

import sys
import time

from django.core.management.base import BaseCommand, CommandError

from evaluation import (
    benchmarks,
    headlines,
    named_parsers,
    request_options,
    results,
    run_control,
    runs,
    stored_readings,
)
from evaluation.benchmarks.base import Benchmark
from evaluation.cli_options import add_benchmark_argument, parse_option
from evaluation.models import EvaluationRun


class ProgressBar:
    """Progress on stderr: one line redrawn in place on a terminal, plain lines (at most one every
    `interval` seconds) otherwise."""

    def __init__(self, stream=None, *, width: int = 30, interval: float = 2.0):
        self.stream = stream or sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.width, self.interval = width, interval
        self.last_line, self.pending, self.drawn = "", "", False
        self.last_time: float | None = None  # when the last plain line was printed

    def update(self, progress: runs.Progress) -> None:
        line = progress.line()
        if self.tty:
            filled = int(self.width * min(progress.percent, 100) / 100)
            self.stream.write(f"\r[{'#' * filled}{'.' * (self.width - filled)}] {line}\033[K")
            self.drawn = True
        elif line != self.last_line and (self.last_time is None or time.monotonic() - self.last_time >= self.interval):
            self.stream.write(line + "\n")
            self.last_time = time.monotonic()
        else:
            self.pending = line
            return
        self.last_line, self.pending = line, ""
        self.stream.flush()

    def finish(self) -> None:
        if self.tty and self.drawn:
            self.stream.write("\n")
        elif not self.tty and self.pending:
            self.stream.write(self.pending + "\n")
        self.stream.flush()


class Command(BaseCommand):
    help = ("Run a model over a frozen benchmark version and store its predictions (cached responses are "
            "reused), or resume a run with --resume RUN_ID.")

    def create_parser(self, prog_name, subcommand, **kwargs):
        # --version names the benchmark version here, in place of Django's "show the version" flag
        kwargs.setdefault("conflict_handler", "resolve")
        return super().create_parser(prog_name, subcommand, **kwargs)

    def add_arguments(self, parser):
        add_benchmark_argument(parser)
        parser.add_argument("--version", dest="version_label", metavar="LABEL",
                            help="label of a frozen version of that benchmark")
        parser.add_argument("--model", help="a registered model (manage.py models list): its name, or the hub id, "
                                               "local folder or API model name an entry holds")
        parser.add_argument("--backend", default="",
                            help="the registered model's backend (transformers, causal_lm, openai; default: its own)")
        parser.add_argument("--revision", default="", help="the registered model's pinned revision (default: it)")
        parser.add_argument("--backend-option", action="append", default=[], metavar="KEY=VALUE",
                            help="backend option, repeatable (device=cuda, dtype=bfloat16, base_url=..., "
                                 "native_video=false), added to the registered model's")
        parser.add_argument("--input", dest="input_strategy", default="", help="input strategy of the benchmark")
        parser.add_argument("--prompting", default="standard", help="prompting strategy (standard, cot, dscp, ...)")
        parser.add_argument("--option-order", default="release", metavar="ORDER",
                            help="release (default: options under the release's letters, in its order) or "
                                 "shuffled:<seed> (a seeded order per request, recorded on the run)")
        parser.add_argument("--frames", default="", help="frame policy, e.g. uniform:8@448, first, black:32")
        parser.add_argument("--batch-size", type=int, default=8, help="requests per model call")
        parser.add_argument("--chunk-size", type=int, default=64, help="requests per chunk (one Celery task each)")
        parser.add_argument("--limit", type=int, help="only the first N items")
        parser.add_argument("--variants", default="", help="comma-separated task variants (default: all)")
        parser.add_argument("--subset", default="", metavar="NAME",
                            help="only the requests of this named subset of the version (manage.py make_subset)")
        parser.add_argument("--n-samples", type=int, help="responses per request (default: what each request asks)")
        parser.add_argument("--temperature", type=float,
                            help="sampling temperature (default: greedy; 0.7 when more than one sample is drawn)")
        parser.add_argument("--top-p", type=float)
        parser.add_argument("--max-new-tokens", type=int)
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--describer-model", default="",
                            help="image-to-text: the registered model that captions the media")
        parser.add_argument("--describer-backend", default="", help="default: the registered describer's")
        parser.add_argument("--workers", choices=runs.WORKERS, default="local",
                            help="local: in this process; celery: one task per chunk on the gpu queue")
        parser.add_argument("--parser", choices=named_parsers.NAMES, default=named_parsers.DEFAULT,
                            help="answer parser for the headline metrics: authors (default) or strict")
        parser.add_argument("--resume", type=int, metavar="RUN_ID",
                            help="continue a run with its own options: only missing or failed predictions are made")

    def handle(self, *args, **options):
        stderr = options.get("stderr") or sys.stderr
        bar = ProgressBar(stderr)
        try:
            run = self._resume(options, stderr) if options["resume"] else self._create(options)
        except runs.RunConfigError as exc:
            raise CommandError(str(exc)) from None
        stderr.write(f"Run {run.pk}: {run.model_id} on {run.version} ({run.input_strategy}/{run.prompting}), "
                         f"{run.total_predictions} predictions for {run.total_requests} requests, "
                         f"workers: {options['workers']}\n")
        started = time.monotonic()
        try:
            run = runs.start_run(run, workers=options["workers"], on_progress=bar.update)
            if options["workers"] == "celery":
                run = runs.wait(run, on_progress=bar.update)
        except runs.RunConfigError as exc:
            raise CommandError(str(exc)) from None
        except KeyboardInterrupt:
            bar.finish()
            if options["workers"] == "celery":
                raise CommandError(f"Stopped waiting; run {run.pk} goes on on the workers.") from None
            runs.cancel_run(run, reason="Interrupted (Ctrl-C)")
            raise CommandError(f"Interrupted. Resume it with: manage.py evaluate --resume {run.pk}") from None
        bar.finish()
        result = runs.summary(run)
        self.stdout.write(
            f"Run {result['run']} {result['status']}: {result['predictions']}/{result['total']} predictions, "
            f"{result['from_cache']} from cache, {result['errors']} errors, "
            + (f"{result['nul_removed']} NUL characters removed from the replies, " if result["nul_removed"] else "")
            + f"{time.monotonic() - started:.1f} s")
        if run.status != EvaluationRun.Status.SUCCEEDED:
            raise CommandError(f"Run {run.pk} {run.status}: {run.message}. "
                               f"Resume it with: manage.py evaluate --resume {run.pk}")
        self._headlines(run, options["parser"])

    def _headlines(self, run: EvaluationRun, parser: str) -> None:
        """Score the finished run under `parser`, store that parser's readings and print the headline metrics."""
        benchmark = benchmarks.get(run.version.benchmark.slug)
        if type(benchmark).score is Benchmark.score:
            self.stdout.write(f"{benchmark.slug} has no scorer; no headline metrics.")
            return
        scored = results.score_run(run, parser=parser)
        if not scored.ok:
            self.stderr.write(f"Run {run.pk} could not be scored: {scored.error}\n")
            return
        stored_readings.store_readings(run, results.planned_requests(run), parser)
        self.stdout.write(f"Headline metrics (manage.py score --run {run.pk} writes them all):")
        for line in headlines.headline_lines(run.version.benchmark.slug, scored.metrics):
            self.stdout.write(line)

    def _resume(self, options, stderr) -> EvaluationRun:
        run = EvaluationRun.objects.select_related("version__benchmark").filter(pk=options["resume"]).first()
        if run is None:
            raise runs.RunConfigError(f"There is no run {options['resume']}.")
        if run.status == EvaluationRun.Status.RUNNING:
            stderr.write(f"Run {run.pk} is marked running (its process may have died): resuming it.\n")
        return run

    def _create(self, options) -> EvaluationRun:
        missing = [flag for flag, key in (("--benchmark", "benchmark"), ("--version", "version_label"),
                                          ("--model", "model")) if not options[key]]
        if missing:
            raise runs.RunConfigError(f"Give {', '.join(missing)} (or --resume RUN_ID).")
        version = request_options.find_version(options["benchmark"], options["version_label"])
        describer = None
        if options["describer_model"]:
            describer = {"model_id": options["describer_model"], "backend": options["describer_backend"]}
        generation = {"max_new_tokens": options["max_new_tokens"], "temperature": options["temperature"],
                      "top_p": options["top_p"]}
        chosen = run_control.registered_models({
            "model_id": options["model"], "backend": options["backend"], "revision": options["revision"],
            "backend_options": dict(parse_option(text) for text in options["backend_option"]),
            "describer": describer}, admin=True)  # whoever runs commands runs the platform
        return runs.create_run(
            version, model_id=chosen["model_id"], backend=chosen["backend"], revision=chosen["revision"],
            backend_options=chosen["backend_options"],
            input_strategy=options["input_strategy"], prompting=options["prompting"],
            option_order=options["option_order"], frame_policy=options["frames"],
            generation_params=generation, seed=options["seed"],
            variants=[v.strip() for v in options["variants"].split(",") if v.strip()], limit=options["limit"],
            n_samples=options["n_samples"], batch_size=options["batch_size"], chunk_size=options["chunk_size"],
            describer=chosen["describer"], workers=options["workers"], subset=options["subset"] or None)
