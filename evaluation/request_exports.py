"""A frozen version's requests as a file, for models run outside the platform: the platform's JSON lines
(`evaluation.request_records.request_line`) or an evaluation kit's layout (`evaluation.kits`: lmms-eval's
per-sample JSON Lines, VLMEvalKit's dataset TSV), in the export order, written in pieces of text.
`manage.py export_requests` writes them to a file, the results page of a version streams them as a download
(`request_export`); the predictions made from them come back with `manage.py score` or as an imported run
(`evaluation.imported_runs`)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import chain

from django.utils.text import get_valid_filename

from evaluation import benchmarks, kits, request_options
from evaluation.benchmarks.base import RequestOptions
from evaluation.delimited import line_chunks
from generation.frames import FramePolicy

PLATFORM_FORMAT = "jsonl"  # the platform's own JSON lines (`evaluation.request_records.request_line`)
FORMATS = (PLATFORM_FORMAT, *kits.names())
FORMAT_LABELS = {PLATFORM_FORMAT: "the platform's JSON lines", **kits.labels()}
CONTENT_TYPES = {".jsonl": "application/x-ndjson; charset=utf-8", ".tsv": "text/tab-separated-values; charset=utf-8"}


class Counted:
    """Passes a version's request rows through, counting them and their items."""

    def __init__(self, rows: Iterable):
        self.rows, self.count, self.items = rows, 0, set()

    def __iter__(self):
        for row in self.rows:
            self.count += 1
            self.items.add(row.request.item_id)
            yield row


@dataclass
class RequestExport:
    """The pieces of text of one export (`chunks`, made as they are read) and what they hold (`counted`, filled
    as the pieces are made)."""

    fmt: str
    chunks: Iterator[str]
    counted: Counted
    file_name: str  # a name for the downloaded file

    @property
    def content_type(self) -> str:
        return CONTENT_TYPES.get("." + self.file_name.rsplit(".", 1)[-1], "text/plain; charset=utf-8")


def platform_chunks(rows: Iterable) -> Iterator[str]:
    return line_chunks(json.dumps(row.line, ensure_ascii=False) for row in rows)


def file_name(version, fmt: str) -> str:
    stem = get_valid_filename(f"{version.benchmark.slug}-{version.label}-requests")
    if fmt == PLATFORM_FORMAT:
        return f"{stem}.jsonl"
    kit = kits.get(fmt)
    return f"{stem}.{kit.name}{kit.extension}" if kit.extension == ".jsonl" else f"{stem}{kit.extension}"


def request_export(version, options: RequestOptions, variants=(), fmt: str = PLATFORM_FORMAT,
                   frames: str = "") -> RequestExport:
    """The requests of a frozen version under `options` and `variants` in format `fmt`, every line carrying
    how they are asked (input, prompting, frames: `frames` or the benchmark's policy, seed, option order).
    ValueError for an unknown format or frame policy; a variant or option the benchmark refuses raises
    ValueError when the requests are read (with the first piece, or at once for a layout that needs every
    row before it writes, as VLMEvalKit's option columns do)."""
    if fmt not in FORMATS:
        raise ValueError(f"Unknown requests format {fmt!r}; known: {', '.join(FORMATS)}.")
    benchmark = benchmarks.get(version.benchmark.slug)
    frames = FramePolicy.parse(frames or benchmark.default_frame_policy).spec()
    setting = {"input": benchmark.resolve_input_strategy(options), "prompting": options.prompting,
               "frames": frames, "seed": options.seed, "option_order": options.option_order}
    counted = Counted(kits.version_rows(version, options, tuple(variants), setting))
    write = platform_chunks if fmt == PLATFORM_FORMAT else kits.get(fmt).request_chunks
    return RequestExport(fmt, write(counted), counted, file_name(version, fmt))


def checked_request_export(version, *, input_strategy: str = "default", prompting: str = "standard", seed: int = 0,
                           option_order: str = "release", variants=(), fmt: str = PLATFORM_FORMAT,
                           frames: str = "") -> RequestExport:
    """`request_export` with the options checked against the version's benchmark first
    (`request_options.check`) and its first piece already made, so that whatever the options make the
    export refuse is a ValueError here, before anything is sent."""
    checked = request_options.check(version, input_strategy=input_strategy, prompting=prompting,
                                    option_order=option_order, variants=variants)
    export = request_export(version, RequestOptions(input_strategy=checked.input_strategy, prompting=checked.prompting,
                                                    seed=seed, option_order=checked.option_order),
                            checked.variants, fmt, frames)
    first = next(export.chunks, "")
    export.chunks = chain([first], export.chunks)
    return export


def offered_options(version) -> dict | None:
    """The request options a version's benchmark offers, for the pages' forms (input and prompting strategies,
    variants, whether options can be shuffled, the frame policy exports name, the formats); None when the
    benchmark is not registered."""
    benchmark = benchmarks.find(version.benchmark.slug)
    if benchmark is None:
        return None
    return {"input_strategies": list(benchmark.input_strategies),
            "prompting_strategies": list(benchmark.prompting_strategies), "variants": list(benchmark.variants),
            "shuffles_options": benchmark.shuffles_options, "default_frames": benchmark.default_frame_policy,
            "formats": list(FORMAT_LABELS.items())}
