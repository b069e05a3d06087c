"""Reading release files and finding media in a release folder, with every failure added to `Problems`.

- `find_files` / `find_one`: a release file named exactly so, at the folder's top or anywhere below.
- `read_json` / `read_json_list`: JSON with the parser's line and column on a syntax error.
- `read_table`: CSV (header names normalised and matched against accepted aliases), JSON Lines or a
  JSON list of objects, row by row with the line each row starts on.
- `FileIndex`: every file under a folder, looked up by relative path, trailing path, name or stem.
"""

from __future__ import annotations

import csv
import json
import os
import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from annotation.importers.base import Problems, at_line, relative
from config import json_text, table_limits

TABLE_SUFFIXES = (".csv", ".jsonl", ".json")


def find_files(root: Path, name: str) -> list[Path]:
    """Every file called `name` under `root` (case-insensitive), the top-level one first."""
    wanted = name.lower()
    found = [Path(folder) / file for folder, _dirs, files in os.walk(root) for file in files
             if file.lower() == wanted and not file.startswith(".")]
    return sorted(found, key=lambda path: (len(path.relative_to(root).parts), str(path)))


def find_one(root: Path, name: str, problems: Problems) -> Path | None:
    """The one file called `name` under `root`; None (and a problem if there are several) otherwise."""
    found = find_files(root, name)
    if len(found) > 1:
        problems.add(relative(found[1], root), f"{name} found more than once "
                     f"({', '.join(relative(p, root) for p in found)}); import one release at a time")
        return None
    return found[0] if found else None


def read_json(path: Path, root: Path, problems: Problems):
    """The parsed file, or None after adding a problem that says where the JSON breaks."""
    where = relative(path, root)
    try:
        return json_text.load(path)
    except json.JSONDecodeError as exc:
        problems.add(where, f"not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})")
    except UnicodeDecodeError as exc:
        problems.add(where, f"not UTF-8 text ({exc.reason} at byte {exc.start})")
    except OSError as exc:
        problems.add(where, f"cannot be read ({exc.strerror or exc})")
    return None


def read_json_list(path: Path, root: Path, problems: Problems) -> list | None:
    data = read_json(path, root, problems)
    if data is None:
        return None
    if not isinstance(data, list):
        problems.add(relative(path, root), f"must hold a JSON list of records, not a {type(data).__name__}")
        return None
    return data


def normalise_header(name: str) -> str:
    """'New Query ' → 'new_query': lower case, spaces and hyphens as underscores."""
    return re.sub(r"[\s\-]+", "_", name.strip().lower())


@dataclass
class TableRow:
    where: str  # "file line N" for CSV and JSON Lines, "file[i]" for a JSON list
    position: dict  # {"line": N} or {"index": i}, stored in the payload's source
    record: dict  # the row as written: column name → value
    fields: dict  # canonical column name → value (only the columns the reader asked for)


@dataclass
class Table:
    file: str  # relative to the imported folder
    columns: list[str] | None  # CSV header as written (None for JSON tables)
    names: dict[str, str] = field(default_factory=dict)  # canonical name → the CSV's own column name
    rows: list[TableRow] = field(default_factory=list)

    def name(self, canonical: str) -> str:
        """The file's own name for a column, for messages."""
        return self.names.get(canonical, canonical)


def _column_map(names: list[str], aliases: dict[str, tuple[str, ...]]) -> dict[str, str]:
    """canonical name → the column that holds it, for the columns present."""
    by_normal = {}
    for name in names:
        by_normal.setdefault(normalise_header(name), name)
    found = {}
    for canonical, others in aliases.items():
        for candidate in (canonical, *others):
            if candidate in by_normal:
                found[canonical] = by_normal[candidate]
                break
    return found


def _missing_columns(file: str, where: str, found: dict, aliases: dict, required: tuple, problems: Problems) -> bool:
    missing = [name for name in required if name not in found]
    for name in missing:
        accepted = ", ".join(repr(a) for a in (name, *aliases.get(name, ())))
        problems.add(where, f"missing column '{name}' (accepted headers: {accepted}; any case, spaces or "
                            "underscores)")
    return bool(missing)


def read_table(path: Path, root: Path, problems: Problems, *, aliases: dict[str, tuple[str, ...]],
               required: tuple[str, ...]) -> Table | None:
    """Rows of a CSV, JSON Lines or JSON-list file; None when the file as a whole cannot be used."""
    suffix = path.suffix.lower()
    if suffix == ".csv":
        return _read_csv(path, root, problems, aliases=aliases, required=required)
    if suffix in (".jsonl", ".json"):
        return _read_json_rows(path, root, problems, aliases=aliases, required=required)
    problems.add(relative(path, root), f"unsupported table format '{suffix}' (use CSV, JSON Lines or JSON)")
    return None


def _read_csv(path, root, problems, *, aliases, required) -> Table | None:
    file = relative(path, root)
    try:
        table_limits.check_size(path.stat().st_size, file)
        handle = path.open(encoding="utf-8-sig", newline="")
    except OSError as exc:
        problems.add(file, f"cannot be read ({exc.strerror or exc})")
        return None
    except table_limits.TableRefused as exc:
        problems.add(exc.where, exc.reason)
        return None
    with handle:
        reader = table_limits.Reader(handle, file, where=lambda line: at_line(file, line))
        try:
            header = next(reader, None)
            if not header:
                problems.add(at_line(file, 1), "the file is empty: a header row is needed")
                return None
            repeated = sorted({name for name in header if header.count(name) > 1})
            if repeated:
                problems.add(at_line(file, 1), f"repeated column(s) {', '.join(repr(n) for n in repeated)}")
                return None
            found = _column_map(header, aliases)
            if _missing_columns(file, at_line(file, 1), found, aliases, required, problems):
                return None
            table = Table(file=file, columns=list(header), names=found)
            while True:
                line = reader.line_num + 1
                values = next(reader, None)
                if values is None:
                    break
                if not any(value.strip() for value in values):
                    continue
                where = at_line(file, line)
                if len(values) != len(header):
                    problems.add(where, f"malformed row: {len(values)} values but the header has "
                                        f"{len(header)} columns")
                    continue
                record = dict(zip(header, values, strict=True))
                table.rows.append(TableRow(where=where, position={"line": line}, record=record,
                                           fields={canonical: record[column] for canonical, column in found.items()}))
        except table_limits.TableRefused as exc:
            problems.add(exc.where, exc.reason)
            return None
        except csv.Error as exc:
            problems.add(at_line(file, reader.line_num), f"malformed CSV ({exc})")
            return None
        except UnicodeDecodeError as exc:
            problems.add(file, f"not UTF-8 text ({exc.reason} at byte {exc.start})")
            return None
    return table


def _read_json_rows(path, root, problems, *, aliases, required) -> Table | None:
    file = relative(path, root)
    if path.suffix.lower() == ".json":
        data = read_json_list(path, root, problems)
        if data is None:
            return None
        entries = [(f"{file}[{index}]", {"index": index}, value) for index, value in enumerate(data)]
    else:
        entries = []
        try:
            lines = path.read_text(encoding="utf-8-sig").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            problems.add(file, f"cannot be read as UTF-8 text ({exc})")
            return None
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                entries.append((at_line(file, number), {"line": number}, json_text.loads(line)))
            except json.JSONDecodeError as exc:
                problems.add(at_line(file, number), f"not valid JSON ({exc.msg} at column {exc.colno})")
    table = Table(file=file, columns=None)
    for where, position, value in entries:
        if not isinstance(value, dict):
            problems.add(where, f"malformed row: a JSON object is needed, not a {type(value).__name__}")
            continue
        found = _column_map(list(value), aliases)
        missing = [name for name in required if name not in found]
        if missing:
            problems.add(where, "missing field(s) " + ", ".join(f"'{name}'" for name in missing))
            continue
        table.rows.append(TableRow(where=where, position=position, record=value,
                                   fields={canonical: value[key] for canonical, key in found.items()}))
    return table


class FileIndex:
    """Every (non-hidden) file under a folder, for resolving the names a release gives its media."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.files: list[Path] = sorted(
            Path(base) / name for base, dirs, names in os.walk(folder)
            if not any(part.startswith(".") for part in Path(base).relative_to(folder).parts)
            for name in names if not name.startswith(".")
        )
        self._by_name: dict[str, list[Path]] = defaultdict(list)
        self._by_stem: dict[str, list[Path]] = defaultdict(list)
        for path in self.files:
            self._by_name[path.name.lower()].append(path)
            self._by_stem[path.stem.lower()].append(path)

    def by_relative_path(self, name: str) -> Path | None:
        if ".." in Path(name).parts:
            return None
        candidate = self.folder / name
        return candidate if candidate.is_file() else None

    def by_trailing_path(self, name: str) -> list[Path]:
        """Files whose path ends with `name` ('val/x.jpg' matches 'images/val/x.jpg')."""
        parts = tuple(part.lower() for part in Path(name).parts)
        return [path for path in self._by_name.get(parts[-1], [])
                if tuple(p.lower() for p in path.parts[-len(parts):]) == parts] if parts else []

    def by_name(self, name: str) -> list[Path]:
        return list(self._by_name.get(name.lower(), []))

    def by_stem(self, stem: str, suffixes) -> list[Path]:
        return [path for path in self._by_stem.get(stem.lower(), []) if path.suffix.lower() in suffixes]
