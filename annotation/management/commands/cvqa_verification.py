"""`manage.py cvqa_verification`: C-VQA-Real two-person verification on the command line (the page is
`/cvqa/versions/<id>/verification/`; the work is `annotation.benchmarks.cvqa.verification`).

- `study --version LABEL --user CURATOR [--k 2] [--name N] [--draft]`: a verification study over the version's
  items waiting for one (k ≥ 2 verifiers each).
- `status --version LABEL`: the items per stage, the adjudication queue, the removed items and the studies,
  as one JSON line (after resolving items whose verifiers have all answered).
- `adjudicate --item ID --decision keep|correct|remove --user CURATOR [--answer A] [--reason R] [--note N]`.
"""

import json

from django.core.management.base import BaseCommand, CommandError

from annotation.benchmarks.cvqa import verification, verification_report
from annotation.management.command_users import named_curator


class Command(BaseCommand):
    help = "Create C-VQA-Real verification studies, report a version's verification, or adjudicate an item."

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True)
        study = sub.add_parser("study", help="a verification study over a counterfactuals version")
        study.add_argument("--version", required=True, help="the counterfactuals version's label")
        study.add_argument("--user", required=True, help="the curator creating it")
        study.add_argument("--k", type=int, default=verification.MIN_VERIFIERS, help="verifiers per item (≥ 2)")
        study.add_argument("--name", default="")
        study.add_argument("--draft", action="store_true", help="create it closed (open it on its page)")
        status = sub.add_parser("status", help="a counterfactuals version's verification, as JSON")
        status.add_argument("--version", required=True)
        decide = sub.add_parser("adjudicate", help="decide an item whose verifiers disagreed")
        decide.add_argument("--item", type=int, required=True)
        decide.add_argument("--decision", required=True, choices=(verification.KEEP, verification.CORRECT,
                                                                  verification.REMOVE))
        decide.add_argument("--user", required=True)
        decide.add_argument("--answer", default="")
        decide.add_argument("--reason", default="", choices=("", *verification.REASONS))
        decide.add_argument("--note", default="")

    def handle(self, **options):
        try:
            getattr(self, "_" + options["action"])(options)
        except verification.VerificationError as exc:
            raise CommandError(exc.message) from exc

    def _study(self, options):
        made = verification.create_verification_study(
            options["version"], named_curator(options["user"]), k=options["k"], name=options["name"],
            open_now=not options["draft"])
        self.stdout.write(f"Study {made.study.slug}: {len(made.items)} question(s), {made.study.annotators_per_item} "
                          f"verifiers each ({made.study.get_state_display().lower()})")

    def _status(self, options):
        version = verification.curation_version(options["version"])
        verification.resolve_version(version)
        self.stdout.write(json.dumps(verification_report.summary(version), sort_keys=True))

    def _adjudicate(self, options):
        stage = verification.adjudicate(named_curator(options["user"]), options["item"], options["decision"],
                                        answer=options["answer"], reason=options["reason"], note=options["note"])
        self.stdout.write(f"Item #{options['item']}: {stage}")
