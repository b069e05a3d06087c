"""`manage.py maia_statements`: MAIA statement generation on the command line (the console is
`/maia/versions/<id>/statement-generation/`; the work is `annotation.benchmarks.maia.statement_generation`;
people decide on the proposals in the proposals queue or with `review_proposals`).

- `questions VERSION`: the version's questions under curation with their stage, true statements, accepted
  false statements and proposals waiting for a decision.
- `generate VERSION --statements true|false --user CURATOR --backend B --model M [...]`: true statements for
  the questions waiting for them, or false statements for the true statements without one (a proposal
  set and its job).
- `regenerate --item ID --index N --user CURATOR --backend B --model M [...]`: a new false statement for
  pair N (0 to 7) of a question whose pairs are written.
"""

from django.core.management.base import BaseCommand, CommandError

from annotation.benchmarks.maia import minimal_pairs, pool_checks, statement_console, statement_generation
from annotation.management.commands._model_options import add_model_arguments, model_choice
from generation.proposals import ProposalError


class Command(BaseCommand):
    help = "Propose MAIA true and false statements with a text model, or list a version's questions."

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True)
        listing = sub.add_parser("questions", help="a version's questions and their statements")
        listing.add_argument("version", help="the version's label")
        generate = sub.add_parser("generate", help="true or false statement proposals over a version")
        generate.add_argument("version", help="the version's label")
        generate.add_argument("--statements", required=True, choices=sorted(statement_generation.STARTERS))
        add_model_arguments(generate)
        again = sub.add_parser("regenerate", help="a new false statement for one pair")
        again.add_argument("--item", type=int, required=True, help="the question's item id")
        again.add_argument("--index", type=int, required=True, help="the pair's index, 0 to 7")
        add_model_arguments(again)

    def handle(self, **options):
        try:
            getattr(self, f"_{options['action']}")(options)
        except pool_checks.PoolCheckError as exc:
            raise CommandError(" ".join(exc.messages)) from exc
        except ProposalError as exc:
            raise CommandError(str(exc)) from exc

    def _questions(self, options):
        version = pool_checks.version_by_label(options["version"])
        rows = statement_console.questions(version)
        for row in rows:
            item = row.record.item
            self.stdout.write(f"#{item.pk} {item.external_id} [{row.stage_label}]: true statements "
                              f"{'yes' if row.has_true else 'none'}, {row.false_accepted} of 8 false, "
                              f"{row.waiting} proposal(s) waiting")
        counts = statement_console.counts(version)
        self.stdout.write(f"{len(rows)} question(s); {counts['true']} wait for true statements, {counts['false']} "
                          "pair(s) for a false statement")

    def _report(self, proposal_set):
        self.stdout.write(f"Proposal set {proposal_set.pk} ({proposal_set.proposals.count()} input(s)): "
                          f"job {proposal_set.job_id} queued")

    def _generate(self, options):
        version = pool_checks.version_by_label(options["version"])
        self._report(statement_generation.STARTERS[options["statements"]](version, **model_choice(options)))

    def _regenerate(self, options):
        item = minimal_pairs.statement_item(options["item"])
        if item is None:
            raise CommandError(f"No MAIA question {options['item']}.")
        self._report(statement_generation.regenerate_false_statement(item, options["index"], **model_choice(options)))
