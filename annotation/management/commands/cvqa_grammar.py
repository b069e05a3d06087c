"""`manage.py cvqa_grammar`: the C-VQA-Real grammar pass on the command line (the console is
`/cvqa/versions/<id>/grammar/`; the work is `annotation.benchmarks.cvqa.grammar`; people decide on the
suggestions in the proposals queue or with `review_proposals`).

- `start --version LABEL --user CURATOR --backend B --model M [...]`: one grammar suggestion per open
  counterfactual question of the version (a set and its job).
"""

from django.core.management.base import BaseCommand, CommandError

from annotation.benchmarks.cvqa import grammar
from annotation.management.commands._model_options import add_model_arguments, model_choice
from annotation.models import BenchmarkVersion
from generation.proposals import ProposalError


class Command(BaseCommand):
    help = "Start a grammar pass over the counterfactual questions of a C-VQA version."

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True)
        start = sub.add_parser("start", help="grammar suggestions over a counterfactuals version")
        start.add_argument("--version", required=True, help="the counterfactuals version's label")
        add_model_arguments(start)

    def handle(self, **options):
        try:
            getattr(self, "_" + options["action"])(options)
        except ProposalError as exc:
            raise CommandError(str(exc)) from exc

    @staticmethod
    def _version(label: str):
        version = BenchmarkVersion.objects.filter(benchmark__slug=grammar.SLUG, label=label).first()
        if version is None or not grammar.holds_counterfactuals(version):
            raise CommandError(f"There is no C-VQA counterfactuals version {label!r}.")
        return version

    def _start(self, options):
        version = self._version(options["version"])
        proposal_set = grammar.start_grammar(version, **model_choice(options))
        self.stdout.write(f"Proposal set {proposal_set.pk} ({proposal_set.proposals.count()} question(s)): "
                          f"job {proposal_set.job_id} queued")
