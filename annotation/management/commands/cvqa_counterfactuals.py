"""`manage.py cvqa_counterfactuals`: C-VQA-Real counterfactuals on the command line (the console is
`/cvqa/sources/<id>/counterfactuals/`; the work is `annotation.benchmarks.cvqa.counterfactual_generation` and
`.counterfactuals`; people decide on the proposals in the proposals queue or with `review_proposals`).

- `questions SOURCES_VERSION`: the version's source questions with their counterfactual or waiting proposal.
- `generate SOURCES_VERSION --user CURATOR --backend B --model M [--group direct|indirect] [--into LABEL]
  [--examples N] [...]`: one proposal per source question without a counterfactual (a set and its job).
- `write-indirect --item ID --new-query Q --new-answer N --user CURATOR [--presupposition P] [--into LABEL]`:
  a numerical-indirect item written by hand.
"""

from django.core.management.base import BaseCommand, CommandError

from annotation.benchmarks.cvqa import counterfactual_console, counterfactuals, sources
from annotation.benchmarks.cvqa import counterfactual_generation as generation
from annotation.benchmarks.cvqa import counterfactual_groups as groups
from annotation.management.command_users import named_curator
from annotation.management.commands._model_options import add_model_arguments, model_choice
from generation.proposals import ProposalError


class Command(BaseCommand):
    help = "Propose C-VQA-Real counterfactuals with a text model, write indirect ones, or list a sources version."

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True)
        listing = sub.add_parser("questions", help="a sources version's questions and their counterfactuals")
        listing.add_argument("version", help="the sources version's label")
        generate = sub.add_parser("generate", help="counterfactual proposals over a sources version")
        generate.add_argument("version", help="the sources version's label")
        generate.add_argument("--group", choices=groups.NUMERICAL_GROUPS, default=groups.DIRECT,
                              help="the group of numerical questions (boolean ones are boolean)")
        generate.add_argument("--into", default=counterfactuals.DEFAULT_LABEL, help="the counterfactuals version")
        generate.add_argument("--examples", type=int, default=generation.DEFAULT_EXAMPLES,
                              help="in-context examples per group in the prompt")
        add_model_arguments(generate)
        write = sub.add_parser("write-indirect", help="a numerical-indirect counterfactual written by hand")
        write.add_argument("--item", type=int, required=True, help="the source question's item id")
        write.add_argument("--new-query", required=True)
        write.add_argument("--new-answer", required=True)
        write.add_argument("--presupposition", default="")
        write.add_argument("--into", default=counterfactuals.DEFAULT_LABEL)
        write.add_argument("--user", required=True)

    def handle(self, **options):
        try:
            getattr(self, "_" + options["action"].replace("-", "_"))(options)
        except ProposalError as exc:
            raise CommandError(str(exc)) from exc

    @staticmethod
    def _version(label: str):
        version = sources.source_versions().filter(label=label).first()
        if version is None:
            raise CommandError(f"There is no C-VQA sources version {label!r}.")
        return version

    def _questions(self, options):
        rows = counterfactual_console.rows(self._version(options["version"]))
        for row in rows:
            made = row.counterfactual
            state = (f"{made.external_id} ({made.payload['type']}): {made.payload['new_query']} → "
                     f"{made.payload['new_answer']}" if made else "proposal waiting" if row.waiting else "none")
            self.stdout.write(f"#{row.item.pk} {row.item.external_id} [{row.item.payload['type']}] "
                              f"{row.item.payload['question']}: {state}")
        self.stdout.write(f"{len(rows)} question(s); {sum(1 for r in rows if r.counterfactual)} with a counterfactual")

    def _generate(self, options):
        version = self._version(options["version"])
        proposal_set = generation.start_counterfactuals(version, numerical_group=options["group"],
                                                        target=options["into"], max_examples=options["examples"],
                                                        **model_choice(options))
        self.stdout.write(f"Proposal set {proposal_set.pk} ({proposal_set.proposals.count()} input(s)): "
                          f"job {proposal_set.job_id} queued")

    def _write_indirect(self, options):
        item = counterfactuals.write_indirect(named_curator(options["user"]), options["item"], options["new_query"],
                                              options["new_answer"], presupposition=options["presupposition"],
                                              label=options["into"])
        self.stdout.write(f"{item.external_id} written into {item.version.label} (item #{item.pk})")
