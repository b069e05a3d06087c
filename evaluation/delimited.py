"""Delimited text (CSV, TSV) written in bounded pieces, for files and streaming responses alike."""

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
