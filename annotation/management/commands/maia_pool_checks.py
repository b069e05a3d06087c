"""`manage.py maia_pool_checks`: the MAIA answer-pool checks on the command line (the pages are under
`/maia/pools/`; the work is `annotation.benchmarks.maia.pool_checks`).

- `run --version LABEL --user CURATOR [--nli-model PATH] [--threshold P]`: check every pool of the version
  with the NLI model (default: the MAIA_NLI_MODEL setting) and record one check per pool, by the curator.
- `report --version LABEL [--json]`: the share of pools in full agreement per category and overall, with
  the lexical statistics of each pool and their means.
"""

import json

from django.core.management.base import BaseCommand, CommandError

from annotation.benchmarks.maia import pool_checks
from annotation.management.command_users import named_curator
from generation.backends.base import BackendError


def _share(value) -> str:
    return "—" if value is None else f"{100 * value:.2f}%"


class Command(BaseCommand):
    help = "Check MAIA answer pools with an NLI model (run) or report their agreement and lexical diversity."

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True)
        run = sub.add_parser("run", help="check every pool of a version and record the checks")
        run.add_argument("--version", required=True, help="the version's label")
        run.add_argument("--user", required=True, help="the curator running the check")
        run.add_argument("--nli-model", default="", help="hub id or local folder (default: MAIA_NLI_MODEL)")
        run.add_argument("--threshold", type=float, default=pool_checks.DEFAULT_THRESHOLD,
                         help="contradiction probability from which a pair contradicts")
        rep = sub.add_parser("report", help="agreement shares and lexical statistics")
        rep.add_argument("--version", required=True, help="the version's label")
        rep.add_argument("--json", action="store_true", help="print the report as JSON")

    def handle(self, **options):
        try:
            version = pool_checks.version_by_label(options["version"])
            if options["action"] == "run":
                self._run(version, options)
            else:
                self._report(version, options)
        except pool_checks.PoolCheckError as exc:
            raise CommandError(" ".join(exc.messages)) from exc

    def _run(self, version, options):
        user = named_curator(options["user"])
        try:
            scorer = pool_checks.load_scorer(options["nli_model"])
        except (BackendError, OSError, ValueError) as exc:
            raise CommandError(f"Cannot load the NLI model: {exc}") from exc
        results = pool_checks.run_checks(version, user, scorer, model_id=getattr(scorer, "model_id", ""),
                                         threshold=options["threshold"])
        flagged = [r for r in results if not r.agrees]
        self.stdout.write(f"{len(results)} pool(s) checked, {len(flagged)} with a contradiction (to review).")
        for r in flagged:
            self.stdout.write(f"  {r.external_id}: {len(r.contradictions)} contradicting pair(s)")

    def _report(self, version, options):
        data = pool_checks.report(version)
        if options["json"]:
            self.stdout.write(json.dumps(data, indent=2, ensure_ascii=False))
            return
        o = data["overall"]
        self.stdout.write(f"{data['version']}: {o['agree']} of {o['checked']} checked pools in full agreement "
                          f"({_share(o['share'])}); {o['pools'] - o['checked']} unchecked.")
        for c in data["categories"]:
            self.stdout.write(f"  {c['category']}: {c['agree']}/{c['checked']} ({_share(c['share'])}), "
                              f"{c['pools']} pool(s)")
        m = data["means"]
        if m["overlap"] is not None:
            self.stdout.write(f"mean overlap {m['overlap']:.4f}, mean content-word TTR {m['ttr']:.4f}")
