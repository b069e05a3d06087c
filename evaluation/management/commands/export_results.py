"""`manage.py export_results`: write predictions, runs, metrics, LLM judgments or crowd submissions to CSV,
JSON Lines, Parquet or a Hugging Face dataset folder (Parquet files and a dataset card that
`datasets.load_dataset` opens), streaming rows from the database (see `evaluation.exports`; predictions
carry their gold, outcome and correct, and the command says how many have none); or one run's
predictions in an evaluation kit's layout (`--format lmms-eval` or `vlmevalkit`, with `--what predictions
--run ID`: gold and `correct` columns, see `evaluation.kits`)."""

import sys
import time
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from evaluation import exports, kits


class Command(BaseCommand):
    help = ("Export evaluation results for analysis: predictions (with run, version and model columns, gold, "
            "outcome and correct), runs, "
            "metrics, judgments or crowd submissions, as csv, jsonl, parquet or hf (a Hugging Face dataset folder: "
            "Parquet files and a README.md card that datasets.load_dataset opens).")

    def add_arguments(self, parser):
        parser.add_argument("--what", required=True, choices=list(exports.SOURCES),
                            help="; ".join(f"{name}: {src.description}" for name, src in exports.SOURCES.items()))
        parser.add_argument("--run", dest="runs", type=int, nargs="+", action="extend", default=[], metavar="ID",
                            help="only these runs (their predictions, metrics or judgments, or the runs themselves)")
        parser.add_argument("--study", dest="studies", nargs="+", action="extend", default=[], metavar="SLUG",
                            help="only the submissions of these crowd studies")
        parser.add_argument("--id", dest="ids", type=int, nargs="+", action="extend", default=[], metavar="ID",
                            help="only the rows with these primary keys")
        parser.add_argument("--format", dest="fmt", choices=exports.ALL_FORMATS,
                            help="output format; by default read from --out's extension. lmms-eval and vlmevalkit "
                                 "write one run's predictions in the kit's layout")
        parser.add_argument("--out", required=True,
                            help="output file (a folder for hf); '-' writes csv or jsonl to standard output")
        parser.add_argument("--chunk-size", type=int, default=exports.CHUNK_ROWS,
                            help="rows fetched from the database per round trip")

    def handle(self, *, what, runs, studies, ids, fmt, out, chunk_size, verbosity, **options):
        fmt = fmt or self._format_of(out)
        started = time.monotonic()
        note = ""
        try:
            exports.check_request(what, fmt)
            if fmt in kits.names():
                written = self._kit(fmt, runs, studies, ids, out)
            else:
                export = exports.select(what, runs=runs, studies=studies, ids=ids, chunk_rows=chunk_size)
                written = self._rows(export, fmt, out)
                note = export.note()
        except exports.ExportError as exc:
            raise CommandError(str(exc)) from exc
        if verbosity and written is not None:
            sys.stderr.write(f"Wrote {written.rows} {what} to {written.path} ({exports.FORMAT_LABELS[fmt]}, "
                             f"{written.bytes / 1e6:.1f} MB) in {time.monotonic() - started:.1f} s.\n")
        if verbosity and note:
            sys.stderr.write(note + "\n")

    def _rows(self, export, fmt: str, out: str):
        """The selected rows in a row format; None when they went to standard output."""
        if out != "-":
            return exports.write(export, fmt, Path(out))
        if fmt not in ("csv", "jsonl"):
            raise CommandError("Only csv and jsonl can be written to standard output.")
        encode = exports.csv_chunks if fmt == "csv" else exports.jsonl_chunks
        for chunk in encode(export.columns, export.rows):
            self.stdout.write(chunk, ending="")
        return None

    def _kit(self, fmt: str, runs, studies, ids, out: str):
        """One run's predictions in a kit's layout; None when they went to standard output."""
        run = exports.kit_run(fmt, runs, ids, studies)
        if out != "-":
            return exports.write_kit(fmt, run, Path(out))
        _, chunks = exports.kit_chunks(fmt, run)
        for chunk in chunks:
            self.stdout.write(chunk, ending="")
        return None

    @staticmethod
    def _format_of(out: str) -> str:
        suffix = Path(out).suffix.lower()
        for fmt, extension in exports.FORMATS.items():
            if extension and suffix == extension:
                return fmt
        raise CommandError(f"Cannot tell the format from {out!r}: give --format ({', '.join(exports.FORMATS)}).")
