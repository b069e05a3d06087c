"""`manage.py maia_statement_checks`: the checks of a MAIA version's statement pairs on the command line
(the page is `/maia/versions/<id>/statements/`; the work is `annotation.benchmarks.maia.statement_checks`).

- `run VERSION --user CURATOR [--nli-model PATH]`: check the pairs that wait for a check (structure and
  NLI contradiction, with the named model or the MAIA_NLI_MODEL setting), here; questions whose 8 pairs
  all pass become ready to freeze.
- `report VERSION [--json]`: per question, its stage and its pairs passing, failing and not checked.
"""

import json

from django.core.management.base import BaseCommand, CommandError

from annotation.benchmarks.maia import pool_checks, statement_checks
from annotation.management.command_users import named_curator
from generation.backends.base import BackendError


class Command(BaseCommand):
    help = "Check the statement pairs of a MAIA version (run) or report their checks (report)."

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True)
        run = sub.add_parser("run", help="check the pairs that wait for a check and record the checks")
        run.add_argument("version", help="the version's label")
        run.add_argument("--user", required=True, help="the curator running the checks")
        run.add_argument("--nli-model", default="", help="hub id or local folder (default: MAIA_NLI_MODEL)")
        rep = sub.add_parser("report", help="the pairs' checks per question")
        rep.add_argument("version", help="the version's label")
        rep.add_argument("--json", action="store_true", help="print the report as JSON")

    def handle(self, **options):
        try:
            version = pool_checks.version_by_label(options["version"])
            if options["action"] == "run":
                self._run(version, options)
            else:
                self._report(version, options)
        except (pool_checks.PoolCheckError, statement_checks.StatementCheckError) as exc:
            raise CommandError(" ".join(exc.messages)) from exc

    def _run(self, version, options):
        user = named_curator(options["user"])
        name = statement_checks.nli_model_name(options["nli_model"])
        try:
            nli = pool_checks.load_scorer(name)
        except (BackendError, OSError, ValueError) as exc:
            raise CommandError(f"Cannot load the NLI model: {exc}") from exc
        self.stdout.write(statement_checks.summary(statement_checks.run_checks(version, user, nli)))

    def _report(self, version, options):
        data = statement_checks.report(version)
        if options["json"]:
            self.stdout.write(json.dumps(data, indent=2, ensure_ascii=False))
            return
        t = data["total"]
        self.stdout.write(f"{data['version']}: {t['pairs']} pair(s) in {t['questions']} question(s): {t['pass']} pass, "
                          f"{t['fail']} fail, {t['unchecked']} not checked.")
        for row in data["questions"]:
            stage = f" [{row['stage']}]" if row["stage"] else ""
            self.stdout.write(f"  {row['external_id']}{stage}: {row['pass']} pass, {row['fail']} fail, "
                              f"{row['unchecked']} not checked")
