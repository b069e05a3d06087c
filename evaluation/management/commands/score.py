"""`manage.py score`: a benchmark's metrics (metrics.json) from a predictions file or a stored run.

Predictions file: JSON lines with `request_id`, `response`, optional `sample` and `judgment` (see
`evaluation.scoring`); the requests are rebuilt from the version with the same options as the
export (`--input`, `--prompting`, `--seed`, `--variants`, `--option-order`: the order the predictions
were made with, `release` by default). `--predictions-format lmms-eval|vlmevalkit` reads an evaluation
kit's output instead (`evaluation.kits`: lmms-eval's per-sample JSON Lines; VLMEvalKit's .tsv, .csv or .xlsx
prediction table); without the flag the format is told from the file (a table is VLMEvalKit's, JSON Lines
with `doc_id`/`resps` and no `response` lmms-eval's), else it is the platform's JSON lines. Each kit row is
joined to a request by its `request_id` when it carries one, else by its `doc_id` / `index`: its position
in the request order that the same export options give; metrics.json records the format, how the rows
were joined and where the responses came from (`meta.kit`). `--run RUN_ID` scores a stored run with its own options
instead (an `--option-order` other than the run's is refused). Model-based metrics run only with
their model: `--clip-model` (BlackSwan CLIP score), `--bertscore-model` (MAIA), `--judge-model` (LLM
judges); without one they are written as `{"computed": false, "reason": ...}`. A model flag given
without a value names the authors' model: `--clip-model` alone is `openai/clip-vit-large-patch14`,
`--judge-model` alone the judge kind's default (LLM-Match: `meta-llama/Llama-3.1-8B-Instruct`,
sampled at temperature 0.4 with 100 new tokens); the judge, its revision and parameters are recorded
in `meta.judge`.

`--parser authors|strict` picks the answer parser (`evaluation.named_parsers`; default `authors`, the
benchmark authors' released rules); metrics.json records it (`meta.parser`, `predictions.parser`)
with `predictions.parser_disagreements`, the answers the two parsers read differently. With `--run`
the parser's reading of each prediction is stored beside the others (`Prediction.parses`), and the
CLIP score / BERTScore computed are kept with the run (`RunModelMetric`) so that the results pages
and exports show them. The headline metrics (per variant: value, n, unparsed) are printed at the end.
"""

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from evaluation import (
    benchmarks,
    headlines,
    judges,
    kits,
    model_metrics,
    named_parsers,
    run_scoring,
    runner,
    scoring,
    stored_readings,
)
from evaluation.benchmarks.base import parse_option_order
from evaluation.models import EvaluationRun
from evaluation.request_exports import PLATFORM_FORMAT
from evaluation.request_options import add_request_arguments, from_command_options
from evaluation.similarity import CLIP_MODEL

MODEL_FLAGS = {"clip": "--clip-model", "judge": "--judge-model", "bertscore": "--bertscore-model"}


class Command(BaseCommand):
    help = "Score predictions (a JSON lines file or a stored run) against a frozen version; write metrics.json."

    def create_parser(self, prog_name, subcommand, **kwargs):
        kwargs.setdefault("conflict_handler", "resolve")  # --version names the benchmark version
        return super().create_parser(prog_name, subcommand, **kwargs)

    def add_arguments(self, parser):
        add_request_arguments(parser)
        parser.add_argument("--predictions", help="JSON lines: request_id, response, [sample], [judgment]; or a kit's "
                                                  "output (--predictions-format)")
        parser.add_argument("--predictions-format", choices=(PLATFORM_FORMAT, *kits.names()), default=None,
                            help="jsonl (the platform's JSON lines), lmms-eval (its --log_samples JSON Lines) or "
                                 "vlmevalkit (its prediction .tsv/.csv/.xlsx); default: told from the file")
        parser.add_argument("--run", type=int, metavar="RUN_ID", help="score a stored evaluation run instead")
        parser.add_argument("--out", required=True, help="where to write metrics.json")
        parser.add_argument("--clip-model", default="", nargs="?", const=CLIP_MODEL,
                            help=f"registered CLIP model (its name, or the hub id or folder its entry holds) for CLIP "
                                 f"score; alone: {CLIP_MODEL}")
        parser.add_argument("--judge-model", default="", nargs="?", const=judges.DEFAULT_MODEL,
                            help="registered LLM judge (its name, or the hub id, folder or API name its entry holds); "
                                 f"alone: the authors' judge (BlackSwan: {judges.LLM_MATCH_MODEL})")
        parser.add_argument("--bertscore-model", default="", help="registered model for BERTScore (its name, or the "
                                                                  "hub id or folder its entry holds)")
        parser.add_argument("--bertscore-layers", type=int, help="BERTScore layer (default: bert-score's, or the last)")
        parser.add_argument("--device", default=None, help="device for the scoring models (cpu, cuda, ...)")
        parser.add_argument("--parser", choices=named_parsers.NAMES, default=named_parsers.DEFAULT,
                            help="answer parser: authors (default: the benchmark authors' released rules) or strict")

    def handle(self, *args, **options):
        if bool(options["predictions"]) == bool(options["run"]):
            raise CommandError("Give either --predictions FILE or --run RUN_ID.")
        if options["judge_model"] == judges.DEFAULT_MODEL:
            options["judge_model"] = self._default_judge(options)
        version, requests, predictions, setting = (self._from_run(options) if options["run"]
                                                   else self._from_file(options))
        benchmark = benchmarks.get(version.benchmark.slug)
        models, used = self._models(benchmark, options)
        try:
            metrics = scoring.score_predictions(benchmark, requests, predictions, parser=options["parser"], **models)
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        meta = {"benchmark": version.benchmark.slug, "version": version.label, "checksum": version.checksum,
                **setting, "models": used, "parser": options["parser"]}
        if getattr(models.get("judge"), "provenance", None):
            meta["judge"] = models["judge"].provenance
        with open(options["out"], "w", encoding="utf-8") as out:
            json.dump({"meta": meta, **metrics}, out, ensure_ascii=False, indent=2)
            out.write("\n")
        summary = metrics["predictions"]
        if summary["unknown_requests"]:
            self.stderr.write(f"{summary['unknown_requests']} predictions name no request of {version} "
                              f"(e.g. {', '.join(summary['unknown_request_ids'][:3])}); they were left out.")
        if options["run"]:
            run = EvaluationRun.objects.get(pk=options["run"])
            stored_readings.store_readings(run, requests, options["parser"])
            for row in model_metrics.store(run, metrics, used, options["parser"]):
                self.stdout.write(f"Kept {row.kind} ({row.model_id}) with run {run.pk} for its results pages.")
        self.stdout.write(f"Scored {summary['requests']} requests of {version} ({summary['answered']} answered, "
                          f"{summary['missing']} missing): {options['out']}")
        for line in headlines.headline_lines(version.benchmark.slug, metrics):
            self.stdout.write(line)

    def _from_file(self, options):
        version, request_options, variants = from_command_options(options)
        path = Path(options["predictions"])
        try:
            fmt = options["predictions_format"] or kits.detect(path) or PLATFORM_FORMAT
        except kits.KitError as exc:
            raise CommandError(str(exc)) from None
        setting = {"input": request_options.input_strategy, "prompting": request_options.prompting,
                   "seed": request_options.seed, "option_order": request_options.option_order,
                   "variants": list(variants), "predictions": options["predictions"], "predictions_format": fmt}
        try:
            requests = [r for _, made in scoring.item_requests(version, request_options, variants) for r in made]
            if fmt == PLATFORM_FORMAT:
                with open(path, encoding="utf-8") as lines:
                    predictions = scoring.read_predictions(lines, source=options["predictions"])
            else:
                kit = kits.get(fmt)
                joined = kits.join(kit, kit.read(path), requests)
                predictions, setting["kit"] = joined.predictions, joined.report
                self.stderr.write(self._kit_summary(kit, joined.report))
        except OSError as exc:
            raise CommandError(f"Cannot read {options['predictions']}: {exc.strerror}.") from None
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        return version, requests, predictions, setting

    @staticmethod
    def _kit_summary(kit, report: dict) -> str:
        joined = ", ".join(f"{count} by {key}" for key, count in report["joined_by"].items() if count)
        sources = ", ".join(f"{count} from {key}" for key, count in report["responses_from"].items())
        return f"Read {report['rows']} {kit.label} rows ({joined or 'none joined'}; responses: {sources or 'none'})."

    def _from_run(self, options):
        run = EvaluationRun.objects.select_related("version__benchmark").filter(pk=options["run"]).first()
        if run is None:
            raise CommandError(f"There is no run {options['run']}.")
        for flag, key, value in (("--benchmark", "benchmark", run.version.benchmark.slug),
                                 ("--version", "version_label", run.version.label)):
            if options[key] and options[key] != value:
                raise CommandError(f"Run {run.pk} is on {run.version}, not {flag} {options[key]}.")
        if options.get("option_order"):
            try:
                asked = parse_option_order(options["option_order"])
            except ValueError as exc:
                raise CommandError(str(exc)) from None
            if asked != run.option_order:
                raise CommandError(f"Run {run.pk} was made with option order {run.option_order!r}, not "
                                   f"--option-order {asked}; its predictions score with its own order.")
        requests = [planned.request for planned in runner.plan(run)]
        setting = {"input": run.input_strategy, "prompting": run.prompting, "seed": run.seed,
                   "option_order": run.option_order,
                   "variants": list(run.variants or []), "run": run.pk, "model": run.model_id}
        return run.version, requests, scoring.run_predictions(run, self._stored_verdicts(run, options)), setting

    @staticmethod
    def _default_judge(options) -> str:
        """The authors' judge of the benchmark being scored (`--judge-model` given without a value)."""
        if options["run"]:
            slug = EvaluationRun.objects.filter(pk=options["run"]).values_list("version__benchmark__slug",
                                                                               flat=True).first()
        else:
            slug = options["benchmark"]
        kind = judges.kind_for_benchmark(slug or "")
        if kind is None:
            raise CommandError(f"{slug or 'This benchmark'} has no LLM judge; --judge-model does not apply.")
        try:
            return judges.default_model(kind)
        except judges.JudgeError as exc:
            raise CommandError(str(exc)) from None

    @staticmethod
    def _stored_verdicts(run, options) -> dict:
        """Verdicts `manage.py judge` already stored for this run by the judge model asked for: reused, so
        only what is not judged yet goes to the judge."""
        if not options.get("judge_model"):
            return {}
        kind = judges.kind_for_benchmark(run.version.benchmark.slug)
        if kind is None:
            return {}
        try:
            slug = run.version.benchmark.slug
            model_id = run_scoring.registered_model("judge", options["judge_model"], slug).model_id
        except run_scoring.ScoringModelError as exc:
            raise CommandError(str(exc)) from None
        return judges.verdicts_for_run(run, kind, model_id)

    def _models(self, benchmark, options) -> tuple[dict, dict]:
        """The scoring models the benchmark uses, loaded; and what was used, for the report."""
        given = {name: options[f"{name}_model"] for name in MODEL_FLAGS}
        for name, model in given.items():
            if model and name not in benchmark.scoring_models:
                self.stderr.write(f"{MODEL_FLAGS[name]} is not used by {benchmark.slug}; ignored.")
        models, used = {}, {}
        for name in benchmark.scoring_models:
            models[name], used[name] = self._load(name, given[name], benchmark.slug, options) if given[name] else (
                None, None)
        return models, used

    @staticmethod
    def _load(name: str, model: str, slug: str, options) -> tuple:
        """(the registered model `model` names, loaded; its model id)."""
        try:
            chosen = run_scoring.registered_model(name, model, slug)
            return run_scoring.load_choice(name, chosen, slug, device=options["device"],
                                           bertscore_layers=options["bertscore_layers"]), chosen.model_id
        except run_scoring.ScoringModelError as exc:
            raise CommandError(str(exc)) from None
