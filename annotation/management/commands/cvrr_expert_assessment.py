"""`manage.py cvrr_expert_assessment`: CVRR-ES expert assessment of QA pairs (seeds/003 §3.2; the pages are
`/cvrr/experts/`).

    manage.py cvrr_expert_assessment create --pool ID (--size N | --share S) --seed SEED --user CURATOR
        [--experts K] [--name NAME] [--slug SLUG] [--draft]
    manage.py cvrr_expert_assessment report --study SLUG [--json]
    manage.py cvrr_expert_assessment finalise --study SLUG --user CURATOR
    manage.py cvrr_expert_assessment grant --user CURATOR [--revoke] USERNAME [USERNAME ...]

`create` draws a sample of the QA pool's pairs kept in filtration that covers every video (N pairs or a
share S of the pool, with SEED) and opens a study of K experts per pair that requires the `cvrr-expert`
qualification; `report` prints the three rates per dimension and overall with their counts, the experts'
agreement and the pairs that fail; `finalise` sends the pairs whose answer fails back to filtration and
marks those passing all three questions expert checked; `grant` makes users experts (`--revoke` takes it
back). See `annotation.benchmarks.cvrr.expert_study`, `expert_sample`, `expert_report`, `expert_group`.
"""

import json

from django.core.management.base import BaseCommand, CommandError

from annotation.benchmarks.cvrr import expert_group, expert_pages, expert_report, expert_sample, expert_study
from annotation.crowd.errors import CrowdError


def _percent(figure: dict) -> str:
    rate = "—" if figure["rate"] is None else f"{100 * figure['rate']:.2f}%"
    return f"{rate} ({figure['yes']} of {figure['n']})"


def _stat(figure: dict) -> str:
    return "undefined" if figure["value"] is None else f"{figure['value']:.3f}"


class Command(BaseCommand):
    help = "CVRR-ES expert assessment: create a study over a sample of a QA pool, report it, finalise it, " \
           "manage the experts."

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True)
        create = sub.add_parser("create", help="sample pairs covering every video and open the experts' study")
        create.add_argument("--pool", required=True, help="id of an unfrozen CVRR-ES QA pool version")
        size = create.add_mutually_exclusive_group(required=True)
        size.add_argument("--size", type=int, help="how many pairs to sample")
        size.add_argument("--share", type=float, help="the share of the pool's pairs to sample (0 to 1)")
        create.add_argument("--seed", type=int, required=True, help="seed of the draw (recorded with the study)")
        create.add_argument("--experts", type=int, default=1, help="experts per pair (k)")
        create.add_argument("--user", required=True, help="the curator creating the study")
        create.add_argument("--name", default="")
        create.add_argument("--slug", default=None)
        create.add_argument("--draft", action="store_true", help="create the study without opening it")
        report = sub.add_parser("report", help="the three rates per dimension and overall, agreement, failing pairs")
        report.add_argument("--study", required=True, help="the study's slug")
        report.add_argument("--json", action="store_true", help="print the whole report as JSON")
        final = sub.add_parser("finalise", help="send failing pairs back to filtration, mark the others checked")
        final.add_argument("--study", required=True, help="the study's slug")
        final.add_argument("--user", required=True, help="the curator finalising it")
        grant = sub.add_parser("grant", help="make users CVRR-ES experts (or take it back with --revoke)")
        grant.add_argument("--user", required=True, help="the curator granting it")
        grant.add_argument("--revoke", action="store_true")
        grant.add_argument("usernames", nargs="+")

    def handle(self, **options):
        try:
            getattr(self, f"_{options['action']}")(options)
        except CrowdError as exc:
            raise CommandError(exc.message) from None

    def _study(self, slug):
        study = expert_pages.study_named(slug)
        if study is None:
            raise CommandError(f"No expert assessment study {slug!r}.")
        return study

    def _create(self, options):
        user = expert_group.user_named(options["user"])
        pool = expert_sample.pool_named(options["pool"])
        made = expert_study.create_expert_study(
            pool, user, seed=options["seed"], size=options["size"], share=options["share"], k=options["experts"],
            name=options["name"], slug=options["slug"], open_now=not options["draft"])
        sample = expert_study.recorded_sample(made.study)
        self.stdout.write(f"{made.study.slug}: {sample['size']} of {sample['population']} pairs of {sample['pool']} "
                          f"over {sample['videos']} videos (seed {sample['seed']}), {sample['experts_per_pair']} "
                          f"expert(s) per pair; {sample['excluded']} pair(s) left out for lack of a video")

    def _report(self, options):
        made = expert_report.report(self._study(options["study"]))
        if options["json"]:
            self.stdout.write(json.dumps(made, indent=2, ensure_ascii=False))
            return
        left = made["left_out"]
        self.stdout.write(f"{made['study']}: {made['pairs_assessed']} of {made['pairs_in_study']} pairs assessed "
                          f"({made['n_answers']} answers by {made['n_experts']} experts; {left['pending']} waiting "
                          f"for review and {left['rejected']} rejected left out)")
        for question in made["questions"]:
            self.stdout.write(f"  {question['label']}: {_percent(made['overall'][question['name']])}")
        for row in made["dimensions"]:
            rates = "; ".join(f"{q['label']} {_percent(row[q['name']])}" for q in made["questions"])
            self.stdout.write(f"  {row['name']} ({row['assessed']} of {row['pairs']} pairs): {rates}")
        for question in made["questions"] if made["agreement"] else ():
            figures = made["agreement"][question["name"]]
            self.stdout.write(f"  agreement, {question['label']}: percent {_stat(figures['percent_agreement'])}, "
                              f"Fleiss' kappa {_stat(figures['fleiss_kappa'])}, Krippendorff's alpha "
                              f"{_stat(figures['krippendorff_alpha'])}")
        self.stdout.write(f"  answer fails (back to filtration): {', '.join(made['failing_answer']) or 'none'}")
        self.stdout.write(f"  kept in filtration (fails (1) or (2)): {', '.join(made['kept']) or 'none'}")
        if made["finalised"]:
            self.stdout.write(f"  finalised {made['finalised']['at']} by {made['finalised']['by']}")

    def _finalise(self, options):
        study = self._study(options["study"])
        summary = expert_report.finalise(study, expert_group.user_named(options["user"]))
        self.stdout.write(f"Finalised {study.slug}: {len(summary['returned'])} pair(s) back to filtration, "
                          f"{len(summary['checked'])} expert checked, {len(summary['kept'])} kept in filtration")
        for pair, why in sorted(summary["skipped"].items()):
            self.stdout.write(f"  {pair} left as it is: {why}")

    def _grant(self, options):
        by = expert_group.user_named(options["user"])
        users = [expert_group.user_named(name) for name in options["usernames"]]
        for user in users:
            if options["revoke"]:
                done = expert_group.revoke(user, by)
                self.stdout.write(f"{user.username}: {'no longer' if done else 'was not'} an expert")
            else:
                done = expert_group.grant(user, by)
                self.stdout.write(f"{user.username}: {'now' if done else 'already'} an expert")
