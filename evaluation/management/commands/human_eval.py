"""`manage.py human_eval`: crowd studies of human evaluation over runs and versions, and their results
(see `evaluation.human_eval`).

    human_eval rating-study --run ID [--run ID …] --user USER [--sample N] [--variants a,b] [--k 3]
    human_eval vote-study --run ID [--run ID …] --user USER [--baseline-study SLUG …] [--sample N]
    human_eval baseline-study --benchmark B --version L --variant V [--variant V …] --user USER [--sample N]
    human_eval expert-baseline --benchmark B --version L --user USER [--seed S] [--per-group 150] [--subset NAME]
        [--qualification SLUG]
    human_eval written-baseline --benchmark B --version L --user USER [--seed S] [--videos 20] [--subset NAME] [--k 1]
    human_eval results --study SLUG
    human_eval score --study SLUG [--study SLUG …] --clip-model M
    human_eval judge --study SLUG [--study SLUG …] --judge-model M [--decoding choices] [--batch-size 8]
    human_eval verdicts --file FILE --user USER
    human_eval agreement --benchmark B --version L

`judge` judges the people's free-text answers of human-baseline studies with the benchmark's judge
(as `manage.py judge` judges a run) and prints the judge's agreement with the people's verdicts
recorded on them; `verdicts` records people's verdicts from JSON lines `{"prediction": ID | "submission":
ID, "label": "correct" | "incorrect", ["note"]}` (as the drill-down and people's-answers pages do);
`agreement` prints the judge-vs-people report of every run and human baseline of a version
(`evaluation.human_verdicts`). `expert-baseline` and `written-baseline` make the paper's human performance
studies over named subsets (`evaluation.human_eval.performance`); `score` computes the CLIP score of a
baseline's written answers and keeps it for the leaderboard.
"""

import json

from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from annotation.crowd.errors import CrowdError
from annotation.crowd.models import Qualification, Study
from annotation.models import BenchmarkVersion
from evaluation import human_eval, human_verdicts, jsonl, judges, run_scoring
from evaluation.cli_options import add_benchmark_argument, parse_option, supporting_text
from evaluation.models import EvaluationRun, Prediction
from generation.backends.base import BackendError


def _split(value: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in (value or "").split(",") if part.strip())


class Command(BaseCommand):
    help = "Create human-evaluation crowd studies (ratings, explanation votes, human baselines) and read results."

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True)

        def study_options(command, *, sample: str):
            command.add_argument("--user", required=True, help="the curator creating the study")
            command.add_argument("--sample", type=int, default=None, help=f"{sample} to draw (default: all)")
            command.add_argument("--seed", type=int, default=0)
            command.add_argument("--k", type=int, default=3, help="people per item")
            command.add_argument("--name", default="")
            command.add_argument("--slug", default=None)
            command.add_argument("--draft", action="store_true", help="create the study closed (draft)")

        rating = sub.add_parser("rating-study", help="people rate runs' generated responses "
                                f"({supporting_text('human_evaluations', human_eval.RATING)})")
        rating.add_argument("--run", type=int, action="append", required=True, help="a run id (repeat for several)")
        rating.add_argument("--variants", default=",".join(human_eval.GEN_VARIANTS))
        rating.add_argument("--all-samples", action="store_true", help="rate every response, not the first")
        study_options(rating, sample="questions per variant (the same for every run)")

        vote = sub.add_parser("vote-study", help="people vote on runs' explanations "
                              f"({supporting_text('human_evaluations', human_eval.VOTE)})")
        vote.add_argument("--run", type=int, action="append", required=True, help="a run id (repeat for several)")
        vote.add_argument("--baseline-study", action="append", default=[],
                          help="a human baseline study whose explanations join the vote")
        study_options(vote, sample="triplet requests")

        baseline = sub.add_parser("baseline-study", help="people answer a version's own requests")
        add_benchmark_argument(baseline, required=True)
        baseline.add_argument("--version", required=True, help="the version's label")
        baseline.add_argument("--variant", action="append", default=[], help="a variant (repeat; default: all)")
        baseline.add_argument("--answer-types", default="", help="only these answer types, e.g. yes_no")
        baseline.add_argument("--input", default="default", help="the input strategy whose media people see")
        baseline.add_argument("--subset", default=None, help="only the requests of this named subset (make_subset)")
        study_options(baseline, sample="benchmark items (all their requests are asked)")

        for action, helped in (("expert-baseline", "an expert answers a subset of the choice questions"),
                               ("written-baseline", "people write the open-ended answers for a sample of videos")):
            performance = sub.add_parser(action, help=helped)
            add_benchmark_argument(performance, required=True)
            performance.add_argument("--version", required=True, help="the version's label")
            performance.add_argument("--user", required=True, help="the curator creating the study")
            performance.add_argument("--seed", type=int, default=0, help="the seed of the subset drawn")
            performance.add_argument("--subset", default="", help="a named subset to ask instead of drawing one")
            performance.add_argument("--name", default="")
            performance.add_argument("--slug", default=None)
            performance.add_argument("--draft", action="store_true", help="create the study closed (draft)")
            if action == "expert-baseline":
                performance.add_argument("--per-group", type=int, default=None,
                                         help="questions per variant (default: the benchmark's, 150 for BlackSwan)")
                performance.add_argument("--qualification", default="",
                                         help="the name of a qualification the expert must hold")
            else:
                performance.add_argument("--videos", type=int, default=None,
                                         help="videos drawn (default: the benchmark's, 20 for BlackSwan)")
                performance.add_argument("--k", type=int, default=1, help="people per request")

        score = sub.add_parser("score", help="the CLIP score of a baseline's written answers, kept for the leaderboard")
        score.add_argument("--study", action="append", required=True, help="a baseline study's slug (repeat)")
        score.add_argument("--clip-model", required=True, help="a registered CLIP model: its name, or the hub id or "
                                                               "folder its entry holds")
        score.add_argument("--device", default=None)

        results = sub.add_parser("results", help="a human-evaluation study's results as JSON")
        results.add_argument("--study", required=True, help="the study's slug")

        judge = sub.add_parser("judge", help="judge the people's free-text answers of human-baseline studies")
        judge.add_argument("--study", action="append", required=True, help="a baseline study's slug (repeat)")
        judge.add_argument("--kind", default="", help="the judge kind (default: the one the study names)")
        judge.add_argument("--judge-model", default="", help="a registered judge: its name, or the hub id, local "
                           "folder or API model name its entry holds (\"openai:gpt-4o\" names the backend); default: "
                           "the kind's default, where it has one")
        judge.add_argument("--judge-backend", default="", choices=["", *judges.CHAT_BACKENDS])
        judge.add_argument("--judge-revision", default="")
        judge.add_argument("--judge-option", action="append", default=[], metavar="KEY=VALUE")
        judge.add_argument("--batch-size", type=int, default=8)
        judge.add_argument("--decoding", default=judges.FREE, choices=list(judges.DECODINGS))
        judge.add_argument("--max-new-tokens", type=int, default=None)
        judge.add_argument("--temperature", type=float, default=None)

        verdicts = sub.add_parser("verdicts", help="record people's verdicts on judged answers (JSON lines)")
        verdicts.add_argument("--file", required=True, help='JSON lines {"prediction" or "submission": ID, "label"}')
        verdicts.add_argument("--user", required=True, help="the curator or researcher giving them")

        agreement = sub.add_parser("agreement", help="the judge against people's verdicts on a version, as JSON")
        add_benchmark_argument(agreement, required=True)
        agreement.add_argument("--version", required=True, help="the version's label")

    def handle(self, **options):
        try:
            if options["action"] in ("results", "judge", "agreement", "score"):
                return getattr(self, "_" + options["action"])(options)
            user = get_user_model().objects.filter(username=options["user"]).first()
            if user is None:
                raise CommandError(f"No user {options['user']!r}.")
            made = getattr(self, "_" + options["action"].replace("-", "_"))(user, options)
            if options["action"] == "verdicts":
                return
        except PermissionDenied as exc:
            raise CommandError(str(exc)) from None
        except CrowdError as exc:
            raise CommandError(exc.message) from None
        self.stdout.write(f"Study {made.study.slug}: {len(made.items)} item(s), "
                          f"{made.study.annotators_per_item} people each; {len(made.left_out)} left out")
        for what, why in sorted(made.left_out.items()):
            self.stdout.write(f"  {what}: {why}")

    @staticmethod
    def _study_fields(options) -> dict:
        return {"sample": options["sample"], "seed": options["seed"], "k": options["k"], "name": options["name"],
                "slug": options["slug"], "open_now": not options["draft"]}

    @staticmethod
    def _runs(ids) -> list[EvaluationRun]:
        found = {run.pk: run for run in EvaluationRun.objects.filter(pk__in=ids).select_related("version__benchmark")}
        missing = [str(pk) for pk in ids if pk not in found]
        if missing:
            raise CommandError(f"No run {', '.join(missing)}.")
        return [found[pk] for pk in ids]

    def _rating_study(self, user, options):
        return human_eval.create_rating_study(self._runs(options["run"]), curator=user,
                                              variants=_split(options["variants"]),
                                              all_samples=options["all_samples"], **self._study_fields(options))

    def _vote_study(self, user, options):
        studies = []
        for slug in options["baseline_study"]:
            study = Study.objects.filter(slug=slug).first()
            if study is None:
                raise CommandError(f"No study {slug!r}.")
            studies.append(study)
        return human_eval.study_kind(human_eval.VOTE).create(self._runs(options["run"]), curator=user,
                                                             baseline_studies=studies, **self._study_fields(options))

    def _baseline_study(self, user, options):
        version = (BenchmarkVersion.objects.select_related("benchmark")
                   .filter(benchmark__slug=options["benchmark"], label=options["version"]).first())
        if version is None:
            raise CommandError(f"No version {options['benchmark']}:{options['version']}.")
        return human_eval.create_human_baseline_study(
            version, tuple(options["variant"]), curator=user, answer_types=_split(options["answer_types"]),
            input_strategy=options["input"], subset=options["subset"], **self._study_fields(options))

    @staticmethod
    def _version(options) -> BenchmarkVersion:
        version = (BenchmarkVersion.objects.select_related("benchmark")
                   .filter(benchmark__slug=options["benchmark"], label=options["version"]).first())
        if version is None:
            raise CommandError(f"No version {options['benchmark']}:{options['version']}.")
        return version

    def _expert_baseline(self, user, options):
        qualification = None
        if options["qualification"]:
            qualification = Qualification.objects.filter(name=options["qualification"]).first()
            if qualification is None:
                raise CommandError(f"No qualification {options['qualification']!r}.")
        return human_eval.create_expert_baseline(
            self._version(options), curator=user, seed=options["seed"], per_group=options["per_group"],
            subset=options["subset"], qualification=qualification, name=options["name"], slug=options["slug"],
            open_now=not options["draft"])

    def _written_baseline(self, user, options):
        return human_eval.create_written_baseline(
            self._version(options), curator=user, seed=options["seed"], videos=options["videos"],
            subset=options["subset"], k=options["k"], name=options["name"], slug=options["slug"],
            open_now=not options["draft"])

    def _score(self, options):
        studies = self._studies(options["study"])
        version = human_eval.version_of(studies[0])
        try:
            chosen = run_scoring.registered_model("clip", options["clip_model"])
            clip = run_scoring.load_choice("clip", chosen, version.benchmark.slug, device=options["device"])
        except run_scoring.ScoringModelError as exc:
            raise CommandError(str(exc)) from None
        row = human_eval.score_human_baseline(studies, clip=clip, model_id=chosen.model_id)
        self.stdout.write(f"CLIP score ({row.model_id}) of the written answers of {', '.join(row.studies)}:")
        for path, value in sorted(row.values.items()):
            self.stdout.write(f"  {path}: {value}")

    def _results(self, options):
        study = Study.objects.filter(slug=options["study"]).first()
        if study is None:
            raise CommandError(f"No study {options['study']!r}.")
        try:
            found = human_eval.results_for(study)
        except CrowdError as exc:
            raise CommandError(exc.message) from None
        self.stdout.write(json.dumps(found, indent=2, ensure_ascii=False, default=str))

    @staticmethod
    def _studies(slugs) -> list[Study]:
        found = {study.slug: study for study in Study.objects.filter(slug__in=slugs)}
        missing = [slug for slug in slugs if slug not in found]
        if missing:
            raise CommandError(f"No study {', '.join(missing)}.")
        return [found[slug] for slug in slugs]

    def _judge(self, options):
        studies = self._studies(options["study"])
        if options["batch_size"] < 1:
            raise CommandError("--batch-size must be at least 1.")
        try:
            kind = options["kind"] or human_eval.judge_kind_of(studies[0])
            if not kind:
                raise CommandError(f"{studies[0].slug} asks no open-ended question: its answers are not judged.")
            model = options["judge_model"] or judges.default_model(kind)
            spec = judges.registered_spec(
                model, backend=options["judge_backend"], revision=options["judge_revision"], admin=True,
                options=dict(parse_option(text) for text in options["judge_option"]))
            stats = human_eval.judge_answers(studies, spec, kind=kind, batch_size=options["batch_size"],
                                             params={"max_new_tokens": options["max_new_tokens"],
                                                     "temperature": options["temperature"]},
                                             decoding=options["decoding"])
        except (judges.JudgeError, BackendError) as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(
            f"{kind} judge {spec.model_id} ({spec.backend}, {options['decoding']} decoding) on the people's answers of "
            f"{', '.join(s.slug for s in studies)}: {stats.responses} answers, {stats.calls} judge calls, "
            f"{stats.from_cache} from cache, {stats.skipped} judged before, {stats.not_selected} not judged. "
            f"Now: {stats.ok} ok, {stats.unparsed} unparsed, {stats.failed} failed.")
        if stats.failed:
            self.stderr.write(f"{stats.failed} judge calls failed; run the command again to retry them.")
        found = human_verdicts.baseline_agreement(studies, kind)
        if found is not None:
            self.stdout.write(f"Agreement with people's verdicts ({found.judge_model}): "
                              + json.dumps(found.report.as_dict(), sort_keys=True))

    def _verdicts(self, user, options):
        path = options["file"]
        try:
            with open(path, encoding="utf-8") as lines:
                records = list(jsonl.records(lines, path))
        except OSError as exc:
            raise CommandError(f"Cannot read {path}: {exc.strerror}.") from None
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        targets = []
        for where, record in records:  # every line is checked before anything is recorded
            if not isinstance(record, dict) or "label" not in record or \
                    sum(isinstance(record.get(key), int) for key in ("prediction", "submission")) != 1:
                raise CommandError(f"{where}: needs `label` and one of `prediction` or `submission` (an id).")
            if "prediction" in record:
                target = Prediction.objects.select_related("run__version__benchmark").filter(
                    pk=record["prediction"]).first()
            else:
                target = human_verdicts.human_answer(record["submission"])
            if target is None:
                raise CommandError(f"{where}: no judged answer {record.get('prediction') or record.get('submission')}.")
            targets.append((where, target, record))
        with transaction.atomic():  # all of them or none
            for where, target, record in targets:
                record_one = (human_verdicts.record_on_prediction if isinstance(target, Prediction)
                              else human_verdicts.record_on_answer)
                try:
                    record_one(user, target, str(record["label"]), str(record.get("note") or ""))
                except human_verdicts.VerdictError as exc:
                    raise CommandError(f"{where}: {' '.join(exc.messages)} Nothing was recorded.") from None
        self.stdout.write(f"Recorded {len(targets)} verdict(s).")

    def _agreement(self, options):
        version = (BenchmarkVersion.objects.select_related("benchmark")
                   .filter(benchmark__slug=options["benchmark"], label=options["version"]).first())
        if version is None:
            raise CommandError(f"No version {options['benchmark']}:{options['version']}.")
        rows = [{"answers": row.label, "run": row.run.pk if row.run else None, "studies": list(row.studies),
                 "judge_model": row.judge_model, **row.report.as_dict()} for row in human_verdicts.agreements(version)]
        self.stdout.write(json.dumps(rows, indent=2, ensure_ascii=False, default=str))
