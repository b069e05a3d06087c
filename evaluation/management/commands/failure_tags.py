"""`manage.py failure_tags`: failure analysis of a run's wrong predictions from the command line (the
mirror of the failure analysis page; see `evaluation.failure_analysis`).

    failure_tags show --run ID                                   (JSON: distribution and every wrong prediction)
    failure_tags tag --run ID --prediction ID --factor KEY --user U [--note TEXT]   (--factor "" clears)
"""

import json

from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.core.management.base import BaseCommand, CommandError

from evaluation import failure_analysis
from evaluation.models import EvaluationRun, Prediction


class Command(BaseCommand):
    help = "Show a run's failure factors, or tag one of its wrong predictions."

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True)
        show = sub.add_parser("show", help="the distribution of factors and every wrong prediction (JSON)")
        show.add_argument("--run", type=int, required=True)
        tag = sub.add_parser("tag", help="tag one wrong prediction")
        tag.add_argument("--run", type=int, required=True)
        tag.add_argument("--prediction", type=int, required=True)
        tag.add_argument("--factor", required=True, help='a failure factor key; "" clears the tag')
        tag.add_argument("--note", default="")
        tag.add_argument("--user", required=True)

    def handle(self, **options):
        run = EvaluationRun.objects.select_related("version__benchmark").filter(pk=options["run"]).first()
        if run is None:
            raise CommandError(f"No run {options['run']}.")
        if options["action"] == "show":
            found = failure_analysis.wrong_predictions(run)
            self.stdout.write(json.dumps({**failure_analysis.distribution(run), "predictions": [
                {"prediction": entry.prediction.pk, "request_id": entry.request.request_id,
                 "factor": entry.factor or None} for entry in found]}, indent=2, ensure_ascii=False))
            return
        user = get_user_model().objects.filter(username=options["user"]).first()
        if user is None:
            raise CommandError(f"No user {options['user']!r}.")
        prediction = Prediction.objects.select_related("run__version__benchmark").filter(
            pk=options["prediction"], run=run).first()
        if prediction is None:
            raise CommandError(f"Run {run.pk} has no prediction {options['prediction']}.")
        try:
            made = failure_analysis.tag(user, prediction, options["factor"], options["note"])
        except PermissionDenied as exc:
            raise CommandError(str(exc)) from None
        except failure_analysis.FailureTagError as exc:
            raise CommandError(" ".join(exc.messages)) from None
        self.stdout.write(f"Prediction {prediction.pk} ({prediction.request_id}): {made.factor or 'tag cleared'}.")
