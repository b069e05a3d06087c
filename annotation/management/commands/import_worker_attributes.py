from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.crowd import attribute_import
from annotation.crowd.models import WorkerProfile


class Command(BaseCommand):
    help = ("Import workers' attributes from a platform's demographics CSV (e.g. Prolific's export), matching "
            "workers by their platform id; the same as the Workers › Import page.")

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path)
        parser.add_argument("--platform", default=WorkerProfile.Platform.PROLIFIC,
                            choices=WorkerProfile.Platform.values)
        parser.add_argument("--map", action="append", default=[], metavar="Column=attribute",
                            help="a column and the attribute it fills; when given, only these columns are read")

    def handle(self, file: Path, platform: str, map: list[str], **options):
        if not file.is_file():
            raise CommandError(f"{file} is not a file.")
        try:
            mapping = attribute_import.parse_mapping(map)
            report = attribute_import.import_attributes(file.read_bytes(), platform=platform, mapping=mapping or None)
        except attribute_import.ImportRefused as exc:
            raise CommandError(exc.message) from None
        self.stdout.write("Mapping: " + ", ".join(f"{c} → {a}" for c, a in report.mapping.items()))
        for worker in report.unknown_workers:
            self.stdout.write(f"unknown worker: {worker}")
        for problem in report.problems:
            self.stdout.write(f"not imported: {problem}")
        self.stdout.write(f"{report.rows} rows: {len(report.updated)} updated, {len(report.unchanged)} unchanged, "
                          f"{len(report.unknown_workers)} unknown workers, {len(report.problems)} values not imported.")
