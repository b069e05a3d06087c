"""`import_benchmark <benchmark> <path> --version <label>`: a release folder → a frozen benchmark version."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.benchmarks import registry
from annotation.importers import ImportFailed, import_release


class Command(BaseCommand):
    help = ("Import a benchmark's public release folder as a new, frozen benchmark version. Every problem in the "
            "release is reported at once and nothing is created unless the whole release imports.")

    def create_parser(self, prog_name, subcommand, **kwargs):
        # `--version` names the benchmark version here; it replaces Django's own --version flag.
        return super().create_parser(prog_name, subcommand, conflict_handler="resolve", **kwargs)

    def add_arguments(self, parser):
        parser.add_argument("benchmark", choices=registry.slugs(),
                            help="The benchmark (one of the registered ones: %(choices)s).")
        parser.add_argument("path", type=Path, help="The release folder.")
        parser.add_argument("--version", dest="label", required=True, help="Label of the new version.")
        parser.add_argument("--skip-missing-media", action="store_true",
                            help="Leave out (and list) the items whose media the release lacks instead of failing.")
        parser.add_argument("--no-freeze", action="store_true", help="Leave the new version as an editable draft.")
        parser.add_argument("--description", default="", help="Description stored on the version.")

    def handle(self, benchmark, path, label, skip_missing_media, no_freeze, description, **options):
        say = self.stdout.write if options.get("verbosity", 1) > 1 else (lambda line: None)
        try:
            result = import_release(benchmark, path, label, skip_missing_media=skip_missing_media,
                                    freeze=not no_freeze, description=description, say=say)
        except ImportFailed as exc:
            lines = "\n".join([*(f"  - {problem}" for problem in exc.problems), *exc.summary])
            raise CommandError(f"{len(exc.problems)} problem(s) in {path}; nothing was imported:\n{lines}") from exc
        for warning in result.warnings:
            self.stdout.write(self.style.WARNING(f"warning: {warning}"))
        for note in result.notes:
            self.stdout.write(f"note: {note}")
        for line in result.missing:
            self.stdout.write(line)
        version = result.version
        state = f"frozen, checksum {version.checksum[:12]}" if version.frozen else "draft (not frozen)"
        self.stdout.write(self.style.SUCCESS(
            f"Imported {version}: {result.items} items, {result.media_added} media added, "
            f"{result.media_reused} already in the library, {result.skipped} items skipped; {state}."))
