"""`manage.py nleye_scene_writing_study`: an NL-EYE scene-writing study (SPEC §3 "Curation" 1). Its old
name, `scene_writing_study`, is an alias.

    manage.py nleye_scene_writing_study --name NAME --curator USER [--pool LABEL] [--k K] [--slug SLUG] [--open]

Creates a study of kind `nleye_scenes` over the writing slots (one brief per reasoning category and
time shift), whose accepted triplets go to the unfrozen NL-EYE version LABEL (made when missing;
`scene-pool` by default). Without `--open` it stays a draft. Curators then filter the written
triplets in the study's review queue and follow the pool's spread on its page.
"""

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from annotation.benchmarks.nleye import scene_pool, scenes
from annotation.crowd.errors import CrowdError


class Command(BaseCommand):
    help = "Create an NL-EYE scene-writing study whose accepted triplets go to a pool version."

    def add_arguments(self, parser):
        parser.add_argument("--name", required=True, help="the study's name")
        parser.add_argument("--curator", required=True, help="username of the curator creating it")
        parser.add_argument("--pool", default=scene_pool.POOL_LABEL,
                            help="label of the unfrozen NL-EYE version accepted triplets go to (made when missing)")
        parser.add_argument("--k", type=int, default=3, help="authors per writing slot")
        parser.add_argument("--slug", default="", help="the study's address (made from the name when left out)")
        parser.add_argument("--open", action="store_true", help="open the study to authors at once")

    def handle(self, **options):
        curator = get_user_model().objects.filter(username=options["curator"]).first()
        if curator is None:
            raise CommandError(f"There is no user {options['curator']!r}.")
        try:
            with transaction.atomic():
                pool = scene_pool.pool_version(curator, options["pool"])
                study = scenes.create_scene_study(curator, options["name"], pool=pool, slug=options["slug"],
                                                  k=options["k"], open_now=options["open"])
        except CrowdError as exc:
            raise CommandError(exc.message) from None
        self.stdout.write(f"Created {study.get_state_display().lower()} study {study.slug} with "
                          f"{study.items.count()} writing slots; accepted triplets go to {pool}.")
