"""Text written in bounded pieces, for files and streaming responses alike: delimited rows (CSV, TSV) and
lines (JSON Lines)."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Iterator

TEXT_CHUNK_ROWS = 1000  # rows per piece of text


def delimited_chunks(header: list[str], rows: Iterable, *, delimiter: str = ",",
                     rows_per_chunk: int = TEXT_CHUNK_ROWS) -> Iterator[str]:
    """A header line and one line per row (cells as given: convert them first), quoted where a cell needs it,
    yielded every `rows_per_chunk` rows."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, delimiter=delimiter, lineterminator="\n")
    writer.writerow(header)
    count = 0
    for row in rows:
        writer.writerow(row)
        count += 1
        if count >= rows_per_chunk:
            yield buffer.getvalue()
            buffer.seek(0)
            buffer.truncate()
            count = 0
    yield buffer.getvalue()


def line_chunks(lines: Iterable[str], *, rows_per_chunk: int = TEXT_CHUNK_ROWS) -> Iterator[str]:
    """The given lines (without their line ends), each ended by a newline, yielded every `rows_per_chunk` lines."""
    batch = []
    for line in lines:
        batch.append(line)
        if len(batch) >= rows_per_chunk:
            yield "\n".join(batch) + "\n"
            batch = []
    if batch:
        yield "\n".join(batch) + "\n"
