"""`export_benchmark <benchmark> --version <label> [--layout <layout>] <out>`: a benchmark version → its release
layout in a new folder; `--layout` picks one of the benchmark's other layouts (its `layouts`), or `hf`, which
every benchmark has: a Hugging Face dataset folder that `datasets.load_dataset` opens."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.benchmarks import registry
from annotation.exporters import ExportFailed, export_version


class Command(BaseCommand):
    help = ("Write a benchmark version in its public release's layout (files and media), or as a Hugging Face "
            "dataset (--layout hf), into a new folder.")

    def create_parser(self, prog_name, subcommand, **kwargs):
        # `--version` names the benchmark version here; it replaces Django's own --version flag.
        return super().create_parser(prog_name, subcommand, conflict_handler="resolve", **kwargs)

    def add_arguments(self, parser):
        parser.add_argument("benchmark", choices=registry.slugs(),
                            help="The benchmark (one of the registered ones: %(choices)s).")
        parser.add_argument("--version", dest="label", required=True, help="Label of the version to export.")
        parser.add_argument("--layout", default="",
                            help="hf: a Hugging Face dataset folder (Parquet files per record kind, media under "
                                 "media/, a README.md dataset card) that datasets.load_dataset opens; or one of the "
                                 "benchmark's release layouts, where it has several ("
                                 + "; ".join(f"{slug}: {', '.join(registry.get(slug).layouts)}"
                                             for slug in registry.slugs() if registry.get(slug).layouts)
                                 + "); by default items go back to the layout they were imported from.")
        parser.add_argument("out", type=Path, help="Output folder; must not exist yet or be empty.")

    def handle(self, benchmark, label, out, layout="", **options):
        try:
            result = export_version(benchmark, label, out, layout=layout)
        except ExportFailed as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(self.style.SUCCESS(
            f"Exported {result.version} to {result.folder}: {result.items} items in {len(result.files)} file(s), "
            f"{result.media} media file(s)."))
