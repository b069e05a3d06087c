"""`manage.py judge_validation`: validate a judge model's stored verdicts on a run against two or more
human raters (Fleiss' kappa over judge and people, pairwise Cohen's kappa and percent agreement;
`evaluation.judges.validation`)."""

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from evaluation import judges
from evaluation.judges import validation
from evaluation.models import EvaluationRun


class Command(BaseCommand):
    help = ("Compare a judge model's stored verdicts on a run with two or more human raters, on the answers all "
            "of them labelled: Fleiss' kappa, pairwise Cohen's kappa and percent agreement. People's verdicts come "
            "from --human files (one per rater) or, without them, from the verdicts people recorded on the run.")

    def add_arguments(self, parser):
        parser.add_argument("--run", type=int, required=True, metavar="RUN_ID")
        parser.add_argument("--kind", required=True, choices=list(judges.KINDS))
        parser.add_argument("--judge-model", required=True, help="the judge model whose stored verdicts count")
        parser.add_argument("--human", action="append", default=[], metavar="[NAME=]FILE",
                            help="one rater's JSON lines {request_id, label, [sample], [reference]}, repeatable; "
                                 "the rater is NAME, else the file's name without its extension")

    def handle(self, *args, **options):
        run = EvaluationRun.objects.filter(pk=options["run"]).first()
        if run is None:
            raise CommandError(f"There is no run {options['run']}.")
        people = self._people(options["human"]) if options["human"] else None
        try:
            report = validation.run_validation(run, options["kind"], options["judge_model"], people)
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        fleiss = "undefined" if report.fleiss_kappa is None else f"{report.fleiss_kappa:.3f}"
        self.stdout.write(f"Run {run.pk}, {report.kind} judge {options['judge_model']} and "
                          f"{len(report.raters) - 1} people on {report.n} answers all labelled: Fleiss' kappa "
                          f"{fleiss}{f' ({report.kappa_reason})' if report.kappa_reason else ''}.")
        self.stdout.write(json.dumps(report.as_dict(), sort_keys=True))

    @staticmethod
    def _people(specs: list[str]) -> dict:
        people = {}
        for spec in specs:
            name, _, path = spec.rpartition("=") if "=" in spec else ("", "", spec)
            name = name or Path(path).stem
            if name in people:
                raise CommandError(f"Two --human files name the rater {name!r}; write NAME=FILE.")
            try:
                with open(path, encoding="utf-8") as lines:
                    people[name] = judges.read_human_verdicts(lines, source=path)
            except OSError as exc:
                raise CommandError(f"Cannot read {path}: {exc.strerror}.") from None
            except ValueError as exc:
                raise CommandError(str(exc)) from None
        return people
