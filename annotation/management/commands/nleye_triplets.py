"""`manage.py nleye_triplets`: the NL-EYE curation console on the command line (the pages are
`/nleye/triplets/`).

- `list [--version ID] [--stage STAGE]`: the triplets under curation with their stage and progress.
- `augment --items ID [ID ...] --user NAME --backend B --model M [...]`: prompt proposals for these
  triplets (`annotation.benchmarks.nleye.prompts.start_augmentation`); the job runs on the workers.

The proposals are decided like any other: in the proposals queue (`/generation/`) or through a
review study (`manage.py review_proposals`); an accepted or corrected one writes the triplet's prompts.
"""

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from annotation.benchmarks.nleye import prompts, stages, triplets
from annotation.management.commands._model_options import add_model_arguments, registered_model
from generation.proposals import ProposalError


class Command(BaseCommand):
    help = "List the NL-EYE triplets under curation (list), or propose image prompts for some of them (augment)."

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True)
        listing = sub.add_parser("list", help="the triplets under curation, their stage and progress")
        listing.add_argument("--version", type=int, default=None, help="one pool version (id)")
        listing.add_argument("--stage", choices=list(stages.LABELS), default="", help="one stage")
        augment = sub.add_parser("augment", help="prompt proposals for triplets (a proposal set and its job)")
        augment.add_argument("--items", type=int, nargs="+", required=True, help="the triplets' item ids")
        add_model_arguments(augment)
        augment.add_argument("--components", default="", help="interacting components, separated by commas")
        augment.add_argument("--environment", default="")

    def handle(self, **options):
        if options["action"] == "list":
            self._list(options)
        else:
            self._augment(options)

    def _list(self, options):
        rows = triplets.listed(version=options["version"], stage=options["stage"])
        for triplet in rows:
            self.stdout.write(
                f"#{triplet.item.pk} {triplet.item.external_id} [{triplet.item.version.label}] {triplet.record.stage}: "
                f"prompts {'approved' if triplet.prompts else 'none'}, images {triplet.images_chosen}/3, "
                f"explanation {'written' if triplet.explanation else 'none'}, "
                f"{'validated' if triplet.validated else 'not validated'}")
        self.stdout.write(f"{len(rows)} triplet(s)")

    def _augment(self, options):
        user = get_user_model().objects.filter(username=options["user"]).first()
        if user is None:
            raise CommandError(f"No user {options['user']!r}.")
        if options["max_new_tokens"] is not None and options["max_new_tokens"] < 1:
            raise CommandError("--max-new-tokens must be at least 1.")
        try:
            proposal_set = prompts.start_augmentation(
                options["items"], user=user, **registered_model(options), batch_size=options["batch_size"],
                params={"max_new_tokens": options["max_new_tokens"]} if options["max_new_tokens"] else None,
                components=options["components"], environment=options["environment"], name=options["name"])
        except ProposalError as exc:
            raise CommandError(str(exc)) from None
        count = proposal_set.proposals.count()
        self.stdout.write(f"Proposal set {proposal_set.pk} ({count} triplet(s)): job {proposal_set.job_id} queued")
