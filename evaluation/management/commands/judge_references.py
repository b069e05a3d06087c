"""`manage.py judge_references`: people's explanations as judge references of a frozen version's items
(the command-line mirror of the judge references page; see `evaluation.human_eval.references`).

    judge_references list --benchmark B --version L            (JSON: per item, references and candidates)
    judge_references approve --benchmark B --version L --user U (--candidate TOKEN … | --voted)
    judge_references revoke --reference ID --user U [--reason TEXT]
"""

import json

from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.core.management.base import BaseCommand, CommandError

from annotation.models import BenchmarkVersion
from evaluation import judge_references
from evaluation.cli_options import add_benchmark_argument
from evaluation.human_eval import references
from evaluation.models import JudgeReference


class Command(BaseCommand):
    help = "List, approve and revoke people's explanations as judge references of a frozen version."

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True)
        listing = sub.add_parser("list", help="per item, its references and candidate explanations (JSON)")
        approve = sub.add_parser("approve", help="approve candidates (tokens from `list`) or every one voted valid")
        for command in (listing, approve):
            add_benchmark_argument(command, required=True)
            command.add_argument("--version", required=True, help="the frozen version's label")
        approve.add_argument("--user", required=True, help="the curator approving")
        chosen = approve.add_mutually_exclusive_group(required=True)
        chosen.add_argument("--candidate", action="append", default=[], help="a candidate token (repeat)")
        chosen.add_argument("--voted", action="store_true", help="every candidate voted valid not yet approved")
        revoke = sub.add_parser("revoke", help="revoke one reference")
        revoke.add_argument("--reference", type=int, required=True)
        revoke.add_argument("--user", required=True, help="the curator revoking")
        revoke.add_argument("--reason", default="")

    def handle(self, **options):
        try:
            getattr(self, "_" + options["action"])(options)
        except PermissionDenied as exc:
            raise CommandError(str(exc)) from None
        except judge_references.ReferenceError as exc:
            raise CommandError(" ".join(exc.messages)) from None

    @staticmethod
    def _user(options):
        user = get_user_model().objects.filter(username=options["user"]).first()
        if user is None:
            raise CommandError(f"No user {options['user']!r}.")
        return user

    @staticmethod
    def _version(options) -> BenchmarkVersion:
        version = (BenchmarkVersion.objects.select_related("benchmark")
                   .filter(benchmark__slug=options["benchmark"], label=options["version"]).first())
        if version is None:
            raise CommandError(f"No version {options['benchmark']}:{options['version']}.")
        return version

    def _list(self, options):
        version = self._version(options)
        entries = references.candidates(version) if version.frozen else []
        self.stdout.write(json.dumps({"version": version.pk, "frozen": version.frozen,
                                      "items": [entry.as_dict() for entry in entries]}, indent=2, ensure_ascii=False))

    def _approve(self, options):
        user, version = self._user(options), self._version(options)
        made = (references.approve_voted(user, version) if options["voted"]
                else references.approve(user, version, options["candidate"]))
        self.stdout.write(f"{len(made)} judge reference(s) approved.")
        for reference in made:
            self.stdout.write(f"  #{reference.pk} {reference.item.external_id}: {reference.text}")

    def _revoke(self, options):
        user = self._user(options)
        reference = JudgeReference.objects.select_related("item").filter(pk=options["reference"]).first()
        if reference is None:
            raise CommandError(f"No judge reference {options['reference']}.")
        judge_references.revoke(user, reference, options["reason"])
        self.stdout.write(f"Judge reference #{reference.pk} revoked.")
