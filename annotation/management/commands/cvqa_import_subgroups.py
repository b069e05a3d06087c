"""`manage.py cvqa_import_subgroups`: subgroup labels of library images for C-VQA's bias analysis
(seeds/001 §4.3; `annotation.benchmarks.cvqa.subgroups`). Its old name, `import_cvqa_subgroups`, is an
alias.

    manage.py cvqa_import_subgroups CSV [--curator USER]

CSV columns `image` (a COCO image id, a checksum or a file name) and `label` (e.g. the perceived gender
of the people shown). As the page `/cvqa/subgroups/` does: labels are set or replaced, images the
library does not hold are listed, a malformed file writes nothing.
"""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.benchmarks.cvqa.subgroups import SubgroupError, import_labels
from annotation.management.command_users import named_user


class Command(BaseCommand):
    help = "Import subgroup labels of library images (C-VQA bias analysis) from a CSV keyed by image."

    def add_arguments(self, parser):
        parser.add_argument("path", help="CSV with columns image and label")
        parser.add_argument("--curator", default="", help="username recorded as who set the labels")

    def handle(self, **options):
        user = named_user(options["curator"]) if options["curator"] else None
        try:
            report = import_labels(Path(options["path"]), user)
        except SubgroupError as exc:
            raise CommandError("Nothing imported:\n  " + "\n  ".join(exc.problems)) from None
        for line in report.unknown:
            self.stdout.write(f"not found {line}")
        counts = ", ".join(f"{label}: {n}" for label, n in sorted(report.counts.items())) or "none"
        self.stdout.write(f"{report.set} label(s) set, {report.unchanged} unchanged, {len(report.unknown)} "
                          f"image(s) not found ({counts}).")
