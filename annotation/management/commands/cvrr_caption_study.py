"""`manage.py cvrr_caption_study`: a CVRR-ES captioning study (seeds/003 §3.2 Stage 1).

    manage.py cvrr_caption_study --name NAME --curator USER [--item ID ...] [--k K] [--slug SLUG] [--open]

Creates a study of kind `cvrr_captions` over the video pool's videos that await a caption (or the
pool items named by `--item`), K annotators per video (2 by default, the paper's setup). Without
`--open` it stays a draft. Curators then merge or pick each video's caption on `/cvrr/captions/`.
"""

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from annotation.benchmarks.cvrr import captions
from annotation.crowd.errors import CrowdError


class Command(BaseCommand):
    help = "Create a CVRR-ES captioning study over the video pool's videos awaiting a caption."

    def add_arguments(self, parser):
        parser.add_argument("--name", required=True, help="the study's name")
        parser.add_argument("--curator", required=True, help="username of the curator creating it")
        parser.add_argument("--item", type=int, action="append", default=None,
                            help="a video pool item to caption (repeat it; every video awaiting a caption without it)")
        parser.add_argument("--k", type=int, default=captions.CAPTIONERS, help="annotators per video")
        parser.add_argument("--slug", default="", help="the study's address (made from the name when left out)")
        parser.add_argument("--open", action="store_true", help="open the study to annotators at once")

    def handle(self, **options):
        curator = get_user_model().objects.filter(username=options["curator"]).first()
        if curator is None:
            raise CommandError(f"There is no user {options['curator']!r}.")
        try:
            study = captions.create_caption_study(curator, options["name"], items=options["item"],
                                                  slug=options["slug"], k=options["k"],
                                                  open_now=options["open"])
        except CrowdError as exc:
            raise CommandError(exc.message) from None
        self.stdout.write(f"Created {study.get_state_display().lower()} study {study.slug} with "
                          f"{study.items.count()} video(s), {study.annotators_per_item} annotator(s) each.")
