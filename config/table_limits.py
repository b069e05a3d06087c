"""Tables that people bring (CSV, TSV and .xlsx: the evaluation kits' predictions, worker attributes, study items,
release and source tables), read within limits that no real table reaches.

- `check_size`: a table is at most `IMPORT_TABLE_MAX_MB` megabytes (an .xlsx workbook once extracted:
  `config.archives` checks it with this limit);
- `Reader`: a `csv.reader` that refuses a cell longer than `IMPORT_TABLE_MAX_CELL_CHARS` characters and more than
  `IMPORT_TABLE_MAX_ROWS` rows below the header, and, unless `allow_nul`, a NUL character (PostgreSQL stores none:
  a text table holds none), naming the line; `check_row` applies the same limits to a row read otherwise (an
  .xlsx row).

A refusal is `TableRefused`, a `ValueError` whose message names the file and the line or row; readers show it as
they show their other refusals (a 400 on pages and the API, an error on the command line), before anything is
written. The cell limit is the `csv` module's, which is one for the whole process: every reader here sets it.
"""

import csv
from collections.abc import Iterator

from django.conf import settings

TOO_LONG = "field larger than field limit"  # the csv module's error for a cell past its limit


class TableRefused(ValueError):
    """A table past the limits, or holding what no table may hold: `where` (the file, and its line or row), the
    `line` when one is to blame, and `reason`; the message is "where: reason"."""

    def __init__(self, where: str, reason: str, line: int | None = None):
        super().__init__(f"{where}: {reason}.")
        self.where, self.reason, self.line = where, reason, line


def max_rows() -> int:
    return settings.IMPORT_TABLE_MAX_ROWS


def max_cell_chars() -> int:
    return settings.IMPORT_TABLE_MAX_CELL_CHARS


def max_bytes() -> int:
    return settings.IMPORT_TABLE_MAX_MB * 1024 * 1024


def check_size(size: int, name: str) -> None:
    if size > max_bytes():
        raise TableRefused(name, f"{size:,} bytes, where a table may have at most {settings.IMPORT_TABLE_MAX_MB:,} MB")


def cell_too_long(where: str, line: int | None = None) -> TableRefused:
    return TableRefused(where, f"a cell is longer than the {max_cell_chars():,} characters a cell may hold", line)


def too_many_rows(name: str) -> TableRefused:
    return TableRefused(name, f"more than {max_rows():,} rows; split it")


def check_row(cells, where: str, *, allow_nul: bool = False, line: int | None = None) -> None:
    """TableRefused naming `where` for a cell that is too long, or (unless `allow_nul`) holds a NUL character."""
    limit = max_cell_chars()
    for cell in cells:
        if isinstance(cell, str):
            if len(cell) > limit:
                raise cell_too_long(where, line)
            if not allow_nul and "\x00" in cell:
                raise TableRefused(where, "a cell holds a NUL character (is it a text table?)", line)


class Reader:
    """`csv.reader(handle, **options)` within the limits (see the module's text); `line_num` as the reader's.
    Rows come as the reader gives them; `where(line)` names a line in a refusal."""

    def __init__(self, handle, name: str, *, allow_nul: bool = False, where=None, **options):
        csv.field_size_limit(max_cell_chars())
        self._reader = csv.reader(handle, **options)
        self.name = name
        self.allow_nul = allow_nul
        self.where = where or (lambda line: f"{name} line {line}")
        self.count = 0

    @property
    def line_num(self) -> int:
        return self._reader.line_num

    def __iter__(self) -> Iterator[list[str]]:
        return self

    def __next__(self) -> list[str]:
        try:
            cells = next(self._reader)
        except csv.Error as exc:
            if TOO_LONG in str(exc):
                line = self._reader.line_num
                raise cell_too_long(self.where(line), line) from None
            raise
        self.count += 1
        if self.count > max_rows() + 1:  # the header and the rows below it
            raise too_many_rows(self.name)
        line = self._reader.line_num
        check_row(cells, self.where(line), allow_nul=self.allow_nul, line=line)
        return cells
