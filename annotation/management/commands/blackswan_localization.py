"""`manage.py blackswan_localization`: BlackSwanSuite's localization study and its split suggestions.

    manage.py blackswan_localization create --videos ID,ID,... --user CURATOR [--k 3] [--name NAME] [--slug SLUG]
        [--draft]
    manage.py blackswan_localization report SLUG [--rule authors|spread]

`create` opens a study in which K annotators per video mark when the unexpected event happens in the
library videos ID,...; `report` prints, as JSON, each video's marks, the time the authors' rule gives,
the agreement, the poor-agreement flag and the suggested split (see
`annotation.benchmarks.blackswan.localization_study`); `--rule spread` reads agreeing marks as all within 0.5 s of each
other instead of the authors' std ≤ 0.5 s.
"""

import json

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from annotation.benchmarks.blackswan import localization, localization_study
from annotation.crowd.errors import CrowdError
from annotation.crowd.models import Study


def _ids(text: str) -> list[int]:
    parts = [part.strip() for part in (text or "").split(",") if part.strip()]
    if not parts or not all(part.isdigit() for part in parts):
        raise CommandError(f"--videos takes library video ids separated by commas (got {text!r}).")
    return [int(part) for part in parts]


class Command(BaseCommand):
    help = "Open a BlackSwanSuite localization study over library videos (create), or report it as JSON."

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True)
        create = sub.add_parser("create", help="open a study marking the unexpected event in library videos")
        create.add_argument("--videos", required=True, help="library video ids, separated by commas")
        create.add_argument("--user", required=True, help="the curator creating the study")
        create.add_argument("--k", type=int, default=localization_study.K, help="annotators per video")
        create.add_argument("--name", default="")
        create.add_argument("--slug", default=None)
        create.add_argument("--draft", action="store_true", help="create the study without opening it")
        report = sub.add_parser("report", help="each video's marks, time, agreement and suggested split (JSON)")
        report.add_argument("slug", help="the study's slug")
        report.add_argument("--rule", default=localization.DEFAULT_RULE, choices=list(localization.RULES),
                            help="when the kept marks agree: authors (std ≤ 0.5 s, the default) or spread "
                                 "(all within 0.5 s of each other)")

    def handle(self, **options):
        try:
            if options["action"] == "create":
                self._create(options)
            else:
                self._report(options)
        except CrowdError as exc:
            raise CommandError(exc.message) from None

    def _create(self, options):
        videos = _ids(options["videos"])
        user = get_user_model().objects.filter(username=options["user"]).first()
        if user is None:
            raise CommandError(f"No user {options['user']!r}.")
        study = localization_study.create_localization_study(
            user, videos, options["k"], name=options["name"], slug=options["slug"], open_now=not options["draft"])
        self.stdout.write(f"Study {study.slug}: {len(videos)} video(s), {study.annotators_per_item} annotator(s) "
                          f"each ({study.get_state_display().lower()})")

    def _report(self, options):
        study = Study.objects.filter(slug=options["slug"], step_kind=localization_study.STUDY_KIND).first()
        if study is None:
            raise CommandError(f"No localization study {options['slug']!r}.")
        report = localization_study.localization_report(study, options["rule"])
        self.stdout.write(json.dumps(report, indent=2, ensure_ascii=False))
