"""`manage.py cvrr_assign_video`: assign a library video to a CVRR-ES dimension (seeds/003 §3.2 Stage 1).

    manage.py cvrr_assign_video --curator USER --video ID --dimension KEY --source SOURCE [--metadata TEXT]

Adds the ready library video #ID to the video pool in dimension KEY (a release folder name, e.g.
`partial_actions`) with the dataset it came from (ssv2, cater, charades, activitynet, hmdb51,
yfcc100m, internet, other) and its metadata (a JSON object or `key: value` lines), as the page
`/cvrr/videos/` does. The dimensions are made from their defaults when missing.
"""

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from annotation.benchmarks.cvrr import dimension_records, video_pool
from annotation.benchmarks.cvrr.dimensions import DIMENSIONS
from annotation.benchmarks.cvrr.payload import VIDEO_SOURCES
from annotation.benchmarks.cvrr.pools import CurationError


class Command(BaseCommand):
    help = "Assign a library video to a CVRR-ES dimension, with its source and metadata."

    def add_arguments(self, parser):
        parser.add_argument("--curator", required=True, help="username of the curator assigning it")
        parser.add_argument("--video", required=True, help="the library video's number")
        parser.add_argument("--dimension", required=True, choices=list(DIMENSIONS))
        parser.add_argument("--source", required=True, choices=list(VIDEO_SOURCES))
        parser.add_argument("--metadata", default="", help="a JSON object or key: value lines")

    def handle(self, **options):
        curator = get_user_model().objects.filter(username=options["curator"]).first()
        if curator is None:
            raise CommandError(f"There is no user {options['curator']!r}.")
        try:
            dimension_records.ensure_dimensions()
            item = video_pool.assign_video(curator, options["video"], options["dimension"], options["source"],
                                           options["metadata"])
        except CurationError as exc:
            raise CommandError(exc.message) from None
        self.stdout.write(f"Assigned video #{options['video']} as {item.external_id} (item #{item.pk}).")
