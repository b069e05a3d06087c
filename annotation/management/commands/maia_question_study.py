"""`manage.py maia_question_study`: a MAIA question-writing study (seeds/004 §3.1).

    manage.py maia_question_study --name NAME --curator USER [--video ID ...] [--into LABEL]
        [--k K] [--language it|en] [--slug SLUG] [--open]

Creates a study of kind `maia_questions` over the library videos named by `--video` (more can be
added on the study's items page), K workers per video (1 by default), each writing two open questions
per category. Approved questions become question drafts of the unfrozen MAIA version LABEL
(`curation` by default, made when missing). Without `--open` it stays a draft.
"""

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from annotation.benchmarks.maia import question_writing
from annotation.crowd.errors import CrowdError


class Command(BaseCommand):
    help = "Create a MAIA question-writing study over library videos."

    def add_arguments(self, parser):
        parser.add_argument("--name", required=True, help="the study's name")
        parser.add_argument("--curator", required=True, help="username of the curator creating it")
        parser.add_argument("--video", type=int, action="append", default=[], help="a library video id (repeat it)")
        parser.add_argument("--into", default=question_writing.CURATION_LABEL, metavar="LABEL",
                            help="the unfrozen MAIA version the approved questions go to")
        parser.add_argument("--k", type=int, default=1, help="workers per video")
        parser.add_argument("--language", default=question_writing.DEFAULT_LANGUAGE, choices=["it", "en"],
                            help="the workers' language: the yes/no refusal speaks it; other than it, workers need "
                                 "the attribute native_language=LANGUAGE")
        parser.add_argument("--slug", default="", help="the study's address (made from the name when left out)")
        parser.add_argument("--open", action="store_true", help="open the study to workers at once")

    def handle(self, **options):
        curator = get_user_model().objects.filter(username=options["curator"]).first()
        if curator is None:
            raise CommandError(f"There is no user {options['curator']!r}.")
        try:
            study = question_writing.create_question_study(
                curator, options["name"], videos=question_writing.library_videos(options["video"]),
                slug=options["slug"], version=question_writing.curation_version(curator, options["into"]),
                k=options["k"], open_now=options["open"],
                required_attributes={"native_language": options["language"]} if options["language"] != "it" else {})
        except CrowdError as exc:
            raise CommandError(exc.message) from None
        self.stdout.write(f"Created {study.get_state_display().lower()} study {study.slug} with "
                          f"{study.items.count()} video(s), {study.annotators_per_item} worker(s) each; approved "
                          f"questions go to version {study.output_version.label}.")
