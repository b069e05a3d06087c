"""`manage.py import_proposals`: bring in raw outputs made elsewhere as a proposal set (see
generation.proposal_import), as the upload form of the proposals page does."""

from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from generation import proposal_import
from generation.models import Proposal
from generation.proposals import ProposalError


class Command(BaseCommand):
    help = ("Import raw outputs of a model run elsewhere (or written by hand) as proposals of one task kind. "
            "The file holds one JSON object per line: {\"inputs\": {...}, \"raw_output\": \"...\"}, optionally "
            "\"source_key\" and \"params\". Each output is parsed by the kind's own parser. A bad row is "
            "refused with its number and nothing is imported.")

    def add_arguments(self, parser):
        parser.add_argument("--task", required=True, help="the proposal task kind, e.g. caption or cvrr_qa")
        parser.add_argument("--file", type=Path, required=True, help="JSON Lines file of rows")
        parser.add_argument("--model-id", required=True,
                            help='who or what wrote the outputs: the model id, or e.g. "written by hand"')
        parser.add_argument("--revision", default="", help="the model's revision, when known")
        parser.add_argument("--user", required=True, help="username of the curator or admin importing them")
        parser.add_argument("--name", default="", help="the set's name")

    def handle(self, task, file, model_id, revision, user, name, **options):
        found = get_user_model().objects.filter(username=user).first()
        if found is None:
            raise CommandError(f"No user {user!r}.")
        try:
            text = file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise CommandError(f"Cannot read {file}: {exc}") from None
        try:
            rows = proposal_import.rows_from_jsonl(text)
            made = proposal_import.import_proposals(task, rows, user=found, model_id=model_id, revision=revision,
                                                    name=name)
        except ProposalError as exc:
            raise CommandError(str(exc)) from None
        proposals = Proposal.objects.filter(proposal_set=made)
        counts = {status: proposals.filter(status=status).count() for status in Proposal.Status.values}
        summary = ", ".join(f"{n} {status}" for status, n in counts.items() if n)
        self.stdout.write(f"Imported set #{made.pk} {made.name}: {len(rows)} rows, {proposals.count()} proposals "
                          f"({summary}), written by {made.model_id}.")
