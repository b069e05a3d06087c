"""`manage.py cvqa_import_sources`: C-VQA source questions (image, original question, answers) into a
sources version (SPEC §2 "Source"; `annotation.benchmarks.cvqa.sources`). Its old name,
`import_cvqa_sources`, is an alias.

    manage.py cvqa_import_sources PATH --version LABEL [--format vqa|csv] [--images DIR]
                                  [--annotations FILE] [--curator USER]

PATH is a CSV (image, question, answer(s), question_id), a VQAv2 questions JSON (its annotations file
beside it, named like `*annotations*.json`, or given by --annotations) or a folder holding both. The
images are looked for under DIR (default: PATH's folder). As the page `/cvqa/sources/` does: numerical and
yes/no questions are added to the unfrozen version LABEL (made when missing), the others are skipped and
listed; a malformed file imports nothing.
"""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.benchmarks.cvqa.source_reading import FORMATS
from annotation.benchmarks.cvqa.sources import SourceImportFailed, import_sources
from annotation.management.command_users import named_user


class Command(BaseCommand):
    help = "Import C-VQA source questions (VQAv2 JSON or CSV) and their images into a sources version."

    def create_parser(self, prog_name, subcommand, **kwargs):
        # `--version` names the sources version here; it replaces Django's own --version flag.
        return super().create_parser(prog_name, subcommand, conflict_handler="resolve", **kwargs)

    def add_arguments(self, parser):
        parser.add_argument("path", help="a CSV, a VQAv2 questions JSON or a folder holding the VQAv2 pair")
        parser.add_argument("--version", required=True, dest="label", help="label of the sources version")
        parser.add_argument("--format", choices=FORMATS, default="", help="default: csv for a .csv, else vqa")
        parser.add_argument("--images", default=None, help="folder of the images (default: PATH's folder)")
        parser.add_argument("--annotations", default=None, help="the VQAv2 annotations JSON")
        parser.add_argument("--curator", default="", help="username recorded as the importer")

    def handle(self, **options):
        user = named_user(options["curator"]) if options["curator"] else None
        try:
            report = import_sources(Path(options["path"]), options["label"], fmt=options["format"],
                                    images=Path(options["images"]) if options["images"] else None,
                                    annotations=Path(options["annotations"]) if options["annotations"] else None,
                                    user=user)
        except SourceImportFailed as exc:
            raise CommandError("Nothing imported:\n  " + "\n  ".join(exc.problems)) from None
        for line in report.skipped:
            self.stdout.write(f"skipped {line}")
        counts = ", ".join(f"{n} {kind}" for kind, n in sorted(report.counts.items())) or "none"
        self.stdout.write(f"Version {report.version}: {len(report.added)} question(s) added ({counts}), "
                          f"{len(report.already)} already there, {len(report.skipped)} skipped; images: "
                          f"{report.images_added} new, {report.images_reused} already in the library.")
