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
from annotation.management.command_users import named_curator
from annotation.management.commands.nleye_triplets import backend_option
from generation.proposals import ProposalError


def _model_arguments(parser):
    parser.add_argument("--user", required=True, help="the curator starting it")
    parser.add_argument("--backend", required=True, help="a text backend: causal_lm, transformers, openai")
    parser.add_argument("--model", required=True, help="hub id, local folder or API model name")
    parser.add_argument("--revision", default="")
    parser.add_argument("--backend-option", action="append", default=[], metavar="KEY=VALUE",
                        help="backend option, repeatable (base_url=..., device=cuda)")
    parser.add_argument("--max-new-tokens", type=int, default=None)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--name", default="")


class Command(BaseCommand):
    help = "Propose MAIA true and false statements with a text model, or list a version's questions."

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True)
        listing = sub.add_parser("questions", help="a version's questions and their statements")
        listing.add_argument("version", help="the version's label")
        generate = sub.add_parser("generate", help="true or false statement proposals over a version")
        generate.add_argument("version", help="the version's label")
        generate.add_argument("--statements", required=True, choices=sorted(statement_generation.STARTERS))
        _model_arguments(generate)
        again = sub.add_parser("regenerate", help="a new false statement for one pair")
        again.add_argument("--item", type=int, required=True, help="the question's item id")
        again.add_argument("--index", type=int, required=True, help="the pair's index, 0 to 7")
        _model_arguments(again)

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

    def _model(self, options) -> dict:
        user = named_curator(options["user"])
        if options["max_new_tokens"] is not None and options["max_new_tokens"] < 1:
            raise CommandError("--max-new-tokens must be at least 1.")
        return {"user": user, "backend": options["backend"], "model_id": options["model"],
                "revision": options["revision"], "batch_size": options["batch_size"], "name": options["name"],
                "params": {"max_new_tokens": options["max_new_tokens"]} if options["max_new_tokens"] else None,
                "backend_options": dict(backend_option(text) for text in options["backend_option"])}

    def _report(self, proposal_set):
        self.stdout.write(f"Proposal set {proposal_set.pk} ({proposal_set.proposals.count()} input(s)): "
                          f"job {proposal_set.job_id} queued")

    def _generate(self, options):
        version = pool_checks.version_by_label(options["version"])
        self._report(statement_generation.STARTERS[options["statements"]](version, **self._model(options)))

    def _regenerate(self, options):
        item = minimal_pairs.statement_item(options["item"])
        if item is None:
            raise CommandError(f"No MAIA question {options['item']}.")
        self._report(statement_generation.regenerate_false_statement(item, options["index"], **self._model(options)))
