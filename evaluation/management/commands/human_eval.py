"""`manage.py human_eval`: crowd studies of human evaluation over runs and versions, and their results
(see `evaluation.human_eval`).

    human_eval rating-study --run ID [--run ID …] --user USER [--sample N] [--variants a,b] [--k 3]
    human_eval vote-study --run ID [--run ID …] --user USER [--baseline-study SLUG …] [--sample N]
    human_eval baseline-study --benchmark B --version L --variant V [--variant V …] --user USER [--sample N]
    human_eval results --study SLUG
"""

import json

from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.core.management.base import BaseCommand, CommandError

from annotation.crowd.errors import CrowdError
from annotation.crowd.models import Study
from annotation.models import BenchmarkVersion
from evaluation import human_eval
from evaluation.cli_options import add_benchmark_argument, supporting_text
from evaluation.models import EvaluationRun


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
        study_options(baseline, sample="benchmark items (all their requests are asked)")

        results = sub.add_parser("results", help="a human-evaluation study's results as JSON")
        results.add_argument("--study", required=True, help="the study's slug")

    def handle(self, **options):
        try:
            if options["action"] == "results":
                return self._results(options)
            user = get_user_model().objects.filter(username=options["user"]).first()
            if user is None:
                raise CommandError(f"No user {options['user']!r}.")
            made = getattr(self, "_" + options["action"].replace("-", "_"))(user, options)
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
        return human_eval.create_explanation_vote_study(self._runs(options["run"]), curator=user,
                                                        baseline_studies=studies, **self._study_fields(options))

    def _baseline_study(self, user, options):
        version = (BenchmarkVersion.objects.select_related("benchmark")
                   .filter(benchmark__slug=options["benchmark"], label=options["version"]).first())
        if version is None:
            raise CommandError(f"No version {options['benchmark']}:{options['version']}.")
        return human_eval.create_human_baseline_study(
            version, tuple(options["variant"]), curator=user, answer_types=_split(options["answer_types"]),
            input_strategy=options["input"], **self._study_fields(options))

    def _results(self, options):
        study = Study.objects.filter(slug=options["study"]).first()
        if study is None:
            raise CommandError(f"No study {options['study']!r}.")
        try:
            found = human_eval.results_for(study)
        except CrowdError as exc:
            raise CommandError(exc.message) from None
        self.stdout.write(json.dumps(found, indent=2, ensure_ascii=False, default=str))
