from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.media_import import import_files, media_files


class Command(BaseCommand):
    help = "Import every video and image under a folder into the media library (duplicates are skipped)."

    def add_arguments(self, parser):
        parser.add_argument("folder", type=Path)
        parser.add_argument("--no-recursive", action="store_true", help="Only the folder itself, not subfolders.")
        parser.add_argument("--background", action="store_true",
                            help="Queue the probes for the workers instead of running them here.")
        parser.add_argument("--strict", action="store_true", help="Exit with an error if any file was rejected.")

    def handle(self, folder: Path, no_recursive: bool, background: bool, strict: bool, **options):
        if not folder.is_dir():
            raise CommandError(f"{folder} is not a folder.")
        paths = media_files(folder, recursive=not no_recursive)
        report = import_files(paths, probe_now=not background, say=self.stdout.write)
        self.stdout.write(
            f"{len(report.added)} added, {len(report.duplicates)} already present, "
            f"{len(report.rejected)} rejected, {len(report.skipped)} not media."
        )
        if strict and report.rejected:
            raise CommandError(f"{len(report.rejected)} file(s) rejected.")
