"""`manage.py blackswan_quality_study`: BlackSwanSuite's data quality study (seeds/000 §4.2).

    manage.py blackswan_quality_study create --version LABEL --sample N --seed S --user CURATOR [--raters K]
        [--name NAME] [--slug SLUG] [--draft]
    manage.py blackswan_quality_study report --study SLUG [--json]

`create` samples N videos with all their tasks from the frozen BlackSwanSuite version LABEL with seed S
and opens a rating study (K raters per video; `--draft` leaves it closed to workers); `report` prints
the mean correctness and depth, the share of acceptable grammar and the raters' agreement (see
`annotation.benchmarks.blackswan.quality_study`).
"""

import json

from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.core.management.base import BaseCommand, CommandError

from annotation.benchmarks.blackswan import BlackSwan, quality_study
from annotation.crowd.errors import CrowdError
from annotation.crowd.models import Study
from annotation.models import BenchmarkVersion


def _alpha(figure: dict, level: str) -> str:
    if figure["value"] is None:
        return f"alpha {level} undefined: {figure['reason']}"
    return f"alpha {level} {figure['value']:.3f}"


def _out_of_ten(figures: dict) -> str:
    return "—" if figures["mean"] is None else f"{figures['mean']:.2f}/{figures['out_of']}"


class Command(BaseCommand):
    help = "Create BlackSwanSuite's data quality study over a sample of a frozen version (create), or report it."

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True)
        create = sub.add_parser("create", help="sample videos of a frozen version and open the rating study")
        create.add_argument("--version", required=True, help="label of a frozen blackswan version")
        create.add_argument("--sample", type=int, required=True, help="how many videos to sample")
        create.add_argument("--seed", type=int, required=True, help="seed of the draw (recorded with the study)")
        create.add_argument("--raters", type=int, default=3, help="raters per video (k)")
        create.add_argument("--user", required=True, help="the curator creating the study")
        create.add_argument("--name", default="")
        create.add_argument("--slug", default=None)
        create.add_argument("--draft", action="store_true", help="create the study without opening it")
        report = sub.add_parser("report", help="the study's figures: correctness, depth, grammar, agreement")
        report.add_argument("--study", required=True, help="the study's slug")
        report.add_argument("--json", action="store_true", help="print the whole report as JSON")

    def handle(self, **options):
        try:
            if options["action"] == "create":
                self._create(options)
            else:
                self._report(options)
        except PermissionDenied as exc:
            raise CommandError(str(exc)) from None
        except CrowdError as exc:
            raise CommandError(exc.message) from None

    def _create(self, options):
        user = get_user_model().objects.filter(username=options["user"]).first()
        if user is None:
            raise CommandError(f"No user {options['user']!r}.")
        version = (BenchmarkVersion.objects
                   .filter(benchmark__slug=BlackSwan.slug, label=options["version"], frozen=True)
                   .select_related("benchmark").first())
        if version is None:
            raise CommandError(f"No frozen BlackSwanSuite version {options['version']!r}.")
        made = quality_study.create_quality_study(
            version, options["sample"], options["seed"], user, options["raters"], name=options["name"],
            slug=options["slug"], open_now=not options["draft"])
        sample = made.sample
        self.stdout.write(f"Study {made.study.slug}: {sample['sample_size']} of {sample['population']} videos of "
                          f"{sample['source']} (seed {sample['seed']}), {sample['raters_per_video']} raters each; "
                          f"{len(made.excluded)} video(s) left out for missing tasks")
        for video_id, why in sorted(made.excluded.items()):
            self.stdout.write(f"  {video_id}: {why}")

    def _report(self, options):
        study = Study.objects.filter(slug=options["study"]).first()
        if study is None:
            raise CommandError(f"No study {options['study']!r}.")
        report = quality_study.quality_report(study)
        if options["json"]:
            self.stdout.write(json.dumps(report, indent=2, ensure_ascii=False))
            return
        left = report["left_out"]
        self.stdout.write(f"{study.slug}: {report['n_submissions']} ratings of {report['n_videos_rated']} videos by "
                          f"{report['n_raters']} raters ({left['pending']} waiting for review and "
                          f"{left['rejected']} rejected left out)")
        for name in ("correctness", "depth"):
            figures = report[name]
            self.stdout.write(f"  {name} {_out_of_ten(figures)} (n={figures['n']}, "
                              f"{_alpha(figures['alpha_ordinal'], 'ordinal')})")
        grammar = report["grammar"]
        share = "—" if grammar["acceptable_share"] is None else f"{100 * grammar['acceptable_share']:.1f}%"
        self.stdout.write(f"  grammar acceptable {share} ({grammar['acceptable']} of {grammar['n']}, "
                          f"{_alpha(grammar['alpha_nominal'], 'nominal')})")
        paper = report["paper"]
        self.stdout.write(f"  paper (§4.2, {paper['videos']} videos): correctness {paper['correctness']}/10, "
                          f"depth {paper['depth']}/10, grammar {paper['grammar_percent']}%")
