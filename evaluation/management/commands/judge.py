"""`manage.py judge`: judge every prediction of a stored run with an LLM judge and store the verdicts
(`evaluation.judges.judge_run`); optionally compare them with human verdicts."""

import json

from django.core.management.base import BaseCommand, CommandError

from evaluation import judges
from evaluation.cli_options import parse_option
from evaluation.models import EvaluationRun
from generation.backends.base import BackendError


class Command(BaseCommand):
    help = ("Judge a run's predictions with an LLM judge (--kind: the kind of the run's benchmark); verdicts "
            "are cached and stored with their prompt and judge model, and judged predictions are skipped.")

    def add_arguments(self, parser):
        parser.add_argument("--run", type=int, required=True, metavar="RUN_ID")
        parser.add_argument("--kind", required=True, choices=list(judges.KINDS),
                            help="; ".join(f"{kind}: {', '.join(judges.judged_benchmarks(kind))}"
                                           for kind in judges.KINDS))
        parser.add_argument("--judge-model", default="",
                            help="a registered judge: its name, or the hub id, local folder or API model name its "
                                 "entry holds (\"openai:gpt-4o\" names the backend); default: the authors' judge "
                                 f"where the paper names one (llm_match: {judges.LLM_MATCH_MODEL})")
        parser.add_argument("--judge-backend", default="", choices=["", *judges.CHAT_BACKENDS],
                            help="causal_lm, openai or transformers (default: the registered judge's)")
        parser.add_argument("--judge-revision", default="", help="default: the registered judge's pinned revision")
        parser.add_argument("--judge-option", action="append", default=[], metavar="KEY=VALUE",
                            help="backend option, repeatable (base_url=..., device=cuda, dtype=bfloat16)")
        parser.add_argument("--batch-size", type=int, default=8, help="judge calls per model call")
        parser.add_argument("--decoding", default=judges.FREE, choices=list(judges.DECODINGS),
                            help="free: the judge writes its answer, as the authors' scripts do (default); choices: "
                                 "the judge model's most likely answer among those the format allows (local text "
                                 "models), recorded on each judgment")
        parser.add_argument("--max-new-tokens", type=int, default=None,
                            help=f"default: the kind's (llm_match: {judges.LLM_MATCH_PARAMS['max_new_tokens']}), "
                                 f"else {judges.DEFAULT_MAX_NEW_TOKENS}")
        parser.add_argument("--temperature", type=float, default=None,
                            help=f"default: the kind's (llm_match: {judges.LLM_MATCH_PARAMS['temperature']}, sampled), "
                                 "else 0: greedy, cached")
        parser.add_argument("--human", metavar="FILE",
                            help="JSON lines {request_id, label, [sample], [reference]}: report agreement with them")

    def handle(self, *args, **options):
        run = EvaluationRun.objects.select_related("version__benchmark").filter(pk=options["run"]).first()
        if run is None:
            raise CommandError(f"There is no run {options['run']}.")
        if options["batch_size"] < 1:
            raise CommandError("--batch-size must be at least 1.")
        kind = judges.get_kind(options["kind"])
        judged = judges.judged_benchmarks(kind.name)
        if run.version.benchmark.slug not in judged:
            raise CommandError(f"The {kind.name} judge judges {', '.join(judged) or 'no benchmark'} runs; run "
                               f"{run.pk} is on {run.version.benchmark.slug}.")
        human = self._human(options["human"]) if options["human"] else None
        try:
            model = options["judge_model"] or judges.default_model(kind)
            spec = judges.registered_spec(model, backend=options["judge_backend"],
                                          revision=options["judge_revision"], admin=True,
                                          options=dict(parse_option(text) for text in options["judge_option"]))
            stats = judges.judge_run(run, kind.name, spec, batch_size=options["batch_size"],
                                     params={"max_new_tokens": options["max_new_tokens"],
                                             "temperature": options["temperature"]},
                                     decoding=options["decoding"])
        except (judges.JudgeError, BackendError) as exc:
            raise CommandError(str(exc)) from None
        counts = judges.judgment_counts(run, kind.name, spec.model_id)
        self.stdout.write(
            f"Run {run.pk}, {kind.name} judge {spec.model_id} ({spec.backend}, {options['decoding']} decoding, "
            f"revision {spec.cache_revision or '-'}): {stats.responses} responses, {stats.calls} judge calls, "
            f"{stats.from_cache} from cache, {stats.skipped} judged before, {stats.empty} empty, "
            f"{stats.not_selected} not judged (not selected). Stored: {counts['ok']} ok, "
            f"{counts['unparsed']} unparsed, {counts['failed']} failed.")
        if counts["failed"]:
            self.stderr.write(f"{counts['failed']} judge calls failed; run the command again to retry them.")
        if human is not None:
            try:
                report = judges.run_agreement(run, kind.name, spec.model_id, human)
            except ValueError as exc:
                raise CommandError(str(exc)) from None
            self.stdout.write("Agreement with human verdicts: " + json.dumps(report.as_dict(), sort_keys=True))

    @staticmethod
    def _human(path: str) -> dict:
        try:
            with open(path, encoding="utf-8") as lines:
                return judges.read_human_verdicts(lines, source=path)
        except OSError as exc:
            raise CommandError(f"Cannot read {path}: {exc.strerror}.") from None
        except ValueError as exc:
            raise CommandError(str(exc)) from None
