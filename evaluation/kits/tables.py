"""Tables of the kits: TSV written in pieces (as pandas' `to_csv(sep="\\t")` writes it, which VLMEvalKit
reads), and .tsv, .csv or .xlsx tables read back as (where, {column: text}) rows, within the limits of
`config.table_limits` (size, rows, cell length; an .xlsx workbook's archive within `config.archives`). An .xlsx
file needs openpyxl, which is optional: without it the reader says so. Rows are named like a spreadsheet's: the
header is row 1."""

from __future__ import annotations

import csv
import importlib
from collections.abc import Iterable, Iterator
from pathlib import Path

from config import archives, table_limits
from evaluation.delimited import TEXT_CHUNK_ROWS, delimited_chunks

TABLE_SUFFIXES = (".tsv", ".csv", ".xlsx")


class TableError(ValueError):
    """A table that cannot be read, naming its row."""


def tsv_chunks(columns: list[str], rows: Iterable[list], rows_per_chunk: int = TEXT_CHUNK_ROWS) -> Iterator[str]:
    """A header and one line per row (None as an empty cell), tab-separated, quoted where a cell needs it."""
    cells = (["" if value is None else value for value in row] for row in rows)
    return delimited_chunks(columns, cells, delimiter="\t", rows_per_chunk=rows_per_chunk)


def read_table(path: Path) -> tuple[list[str], Iterator[tuple[str, dict[str, str]]]]:
    """(header, rows) of a .tsv, .csv or .xlsx file; each row is (where, {column: cell text}). TableError for
    an unknown extension, a missing openpyxl, a file that is no table of its kind (not UTF-8 text, not a
    workbook, a damaged one), an empty file, a repeated column, a row whose cells do not match the header, or
    a table past the limits; OSError when the file cannot be opened."""
    suffix = path.suffix.lower()
    if suffix not in TABLE_SUFFIXES:
        raise TableError(f"{path.name}: a table is read from {', '.join(TABLE_SUFFIXES)} files.")
    if suffix != ".xlsx":
        _within_limits(table_limits.check_size, path.stat().st_size, path.name)
    lines = _xlsx_lines(path) if suffix == ".xlsx" else _text_lines(path, "\t" if suffix == ".tsv" else ",")
    try:
        number, header = next(lines)
    except StopIteration:
        raise TableError(f"{path.name} is empty: it has no header row.") from None
    header = [str(name).strip() for name in header]
    while header and not header[-1]:  # a spreadsheet's empty cells right of the header
        header.pop()
    repeated = sorted({name for name in header if header.count(name) > 1 and name})
    if repeated:
        raise TableError(f"{path.name} row {number}: the column {repeated[0]!r} comes twice.")
    return header, _rows(path.name, header, lines, padded=suffix == ".xlsx")


def _rows(name: str, header: list[str], lines, padded: bool) -> Iterator[tuple[str, dict[str, str]]]:
    """Rows as dicts; a spreadsheet's rows are cut or padded to the header where the cells are empty."""
    for number, cells in lines:
        if not any(str(cell).strip() for cell in cells):
            continue
        if padded:
            while len(cells) > len(header) and cells[-1] == "":
                cells.pop()
            cells = cells + [""] * (len(header) - len(cells))
        if len(cells) != len(header):
            raise TableError(f"{name} row {number}: {len(cells)} cells where the header has {len(header)} "
                             f"(is it {'comma' if name.lower().endswith('.csv') else 'tab'}-separated?).")
        yield f"{name} row {number}", dict(zip(header, cells, strict=True))


def _within_limits(check, *args):
    try:
        return check(*args)
    except table_limits.TableRefused as exc:
        raise TableError(str(exc)) from None


def _text_lines(path: Path, delimiter: str) -> Iterator[tuple[int, list[str]]]:
    with open(path, encoding="utf-8-sig", newline="") as handle:
        # a response with a NUL character is kept: model text is cleaned where it is stored (generation.model_text)
        reader = table_limits.Reader(handle, path.name, allow_nul=True, delimiter=delimiter, strict=True,
                                     where=lambda line: f"{path.name} line {line}")
        number = 0
        try:
            for number, cells in enumerate(reader, start=1):
                yield number, cells
        except table_limits.TableRefused as exc:
            raise TableError(str(exc)) from None
        except csv.Error as exc:
            raise TableError(f"{path.name} row {number + 1} (line {reader.line_num}): not a valid "
                             f"{'TSV' if delimiter == chr(9) else 'CSV'} row ({exc}).") from None
        except UnicodeDecodeError:
            raise TableError(f"{path.name}: not UTF-8 text.") from None


def _xlsx_lines(path: Path) -> Iterator[tuple[int, list[str]]]:
    try:
        openpyxl = importlib.import_module("openpyxl")  # optional: only .xlsx files need it
    except ImportError:
        raise TableError(f"{path.name}: reading .xlsx files needs openpyxl (pip install openpyxl), or give the "
                         "table as .tsv or .csv.") from None
    with open(path, "rb") as handle:  # its archive within the limits before openpyxl inflates any of it
        try:
            archives.open_zip(handle, path.name, byte_limit=table_limits.max_bytes()).close()
        except archives.ArchiveDamaged as exc:
            raise TableError(f"{path.name}: not an .xlsx workbook ({exc.reason}).") from None
        except archives.ArchiveRefused as exc:
            raise TableError(str(exc)) from None
    try:
        book = openpyxl.load_workbook(path, read_only=True, data_only=True)
    except OSError:
        raise
    except Exception as exc:  # openpyxl raises zipfile, XML and its own errors for a file that is not a workbook
        raise TableError(f"{path.name}: not an .xlsx workbook ({exc}).") from None
    number = 0
    try:
        for number, values in enumerate(book.worksheets[0].iter_rows(values_only=True), start=1):
            if number > table_limits.max_rows() + 1:
                raise TableError(str(table_limits.too_many_rows(path.name)))
            cells = ["" if value is None else _cell_text(value) for value in values]
            _within_limits(table_limits.check_row, cells, f"{path.name} row {number}")
            yield number, cells
    except TableError:
        raise
    except Exception as exc:  # a damaged member or sheet shows only when it is read
        raise TableError(f"{path.name} row {number + 1}: the workbook cannot be read ({exc}).") from None
    finally:
        book.close()


def _cell_text(value) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)
