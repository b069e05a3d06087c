"""`manage.py blackswan_captions`: BlackSwanSuite's +P/+PC captions study (SPEC §1 "Ablations"; seeds/000 App. H.1).

    manage.py blackswan_captions create --videos ID,ID,... --user CURATOR [--k 1] [--name NAME] [--slug SLUG] [--open]
    manage.py blackswan_captions apply --version LABEL --user CURATOR

`create` opens a study of kind `blackswan_captions` over the library videos `--videos` (each by its
current finished split), K writers per video: workers see V_pre and V_post and write a caption of
each and a comparison of the two. Without `--open` it stays a draft. `apply` fills the accepted
captions (the latest approved submission per video) into the `video` items of the unfrozen
BlackSwanSuite version LABEL where they have none (`annotation.benchmarks.blackswan.caption_study`).
"""

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from annotation.benchmarks.blackswan import caption_study
from annotation.crowd.errors import CrowdError


def _ids(raw: str) -> list[int]:
    values = [part.strip() for part in (raw or "").split(",") if part.strip()]
    bad = [value for value in values if not value.isdigit()]
    if bad or not values:
        raise CommandError(f"--videos takes library video ids separated by commas (got {raw!r}).")
    return [int(value) for value in values]


class Command(BaseCommand):
    help = "Create a BlackSwanSuite +P/+PC captions study, or apply its accepted captions to a version."

    def add_arguments(self, parser):
        actions = parser.add_subparsers(dest="action", required=True)
        create = actions.add_parser("create", help="a captions study over split library videos")
        create.add_argument("--videos", required=True, help="library video ids, comma-separated")
        create.add_argument("--user", required=True, help="username of the curator creating it")
        create.add_argument("--k", type=int, default=1, help="writers per video (1 by default)")
        create.add_argument("--name", default="", help="the study's name")
        create.add_argument("--slug", default="", help="the study's address (made from the name when left out)")
        create.add_argument("--open", action="store_true", help="open the study to annotators at once")
        apply = actions.add_parser("apply", help="fill accepted captions into an unfrozen version")
        apply.add_argument("--version", required=True, help="label of an unfrozen BlackSwanSuite version")
        apply.add_argument("--user", required=True, help="username of the curator applying them")

    def handle(self, **options):
        user = get_user_model().objects.filter(username=options["user"]).first()
        if user is None:
            raise CommandError(f"There is no user {options['user']!r}.")
        try:
            if options["action"] == "create":
                study = caption_study.create_caption_study(
                    user, _ids(options["videos"]), options["k"], name=options["name"], slug=options["slug"],
                    open_now=options["open"])
                self.stdout.write(f"Created {study.get_state_display().lower()} study {study.slug} with "
                                  f"{study.items.count()} video(s), {study.annotators_per_item} writer(s) each.")
            else:
                self.stdout.write(caption_study.apply_captions(options["version"], user).message)
        except CrowdError as exc:
            details = exc.details if isinstance(exc.details, list) else []
            raise CommandError("; ".join([exc.message, *map(str, details)])) from None
