"""What every release reader shares: the problem list, item specs, media references and `source` records.

A reader turns a release folder into `ItemSpec`s without touching the database. Whatever is wrong
with the release goes into one `Problems` list, each entry naming the file and the row or record
it concerns (`test_set.csv line 4`, `mcq.json[3]`: JSON records by 0-based index), so that one run
reports every problem at once. `annotation.importers.release` then checks the media and creates the
version, or raises `ImportFailed` with the whole list.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from annotation.benchmarks.types import as_number


class ImportFailed(Exception):
    """The release cannot be imported; `problems` lists every reason, nothing was created. `summary` holds
    lines printed after the list (the missing-media total and the hint to pass `--skip-missing-media`)."""

    def __init__(self, problems: list[str], summary: list[str] | None = None):
        super().__init__(f"{len(problems)} problem(s): " + "; ".join(problems[:3]))
        self.problems = list(problems)
        self.summary = list(summary or [])


class Problems:
    """Problems found while reading a release, plus warnings (imported as they are, but worth a look,
    e.g. a repeated row) and notes (what was chosen or skipped, not errors)."""

    def __init__(self):
        self.errors: list[str] = []
        self.warnings: list[str] = []
        self.notes: list[str] = []
        self.summary: list[str] = []

    def add(self, where: str, message: str) -> None:
        self.errors.append(f"{where}: {message}")

    def warn(self, where: str, message: str) -> None:
        self.warnings.append(f"{where}: {message}")

    def note(self, message: str) -> None:
        self.notes.append(message)

    def __bool__(self) -> bool:
        return bool(self.errors)

    def __len__(self) -> int:
        return len(self.errors)


@dataclass(frozen=True)
class MediaRef:
    """A medium an item needs: where it was found (None when it was not) and how the release names it."""

    kind: str  # "video" | "image"
    path: Path | None
    expected: str  # the name the release gives it, for messages ("videos/12.mp4")


@dataclass
class ItemSpec:
    """One item as read from the release, ready to be checked and created."""

    external_id: str
    payload: dict
    where: str  # the file and row or record it came from
    media: dict[str, MediaRef] = field(default_factory=dict)


def relative(path: Path, root: Path) -> str:
    """`path` relative to the imported folder, with forward slashes (as stored in `source`)."""
    return path.relative_to(root).as_posix()


def at_record(file: str, index: int) -> str:
    return f"{file}[{index}]"


def at_line(file: str, line: int) -> str:
    return f"{file} line {line}"


def source_record(file: str, record, *, root: Path, media: dict[str, MediaRef] | None = None, **position) -> dict:
    """The `source` entry of a payload: the release file, the record's position in it, the record as read
    and where each medium was found (paths relative to the imported folder)."""
    source = {"file": file, **position, "record": record}
    found = {role: relative(ref.path, root) for role, ref in (media or {}).items() if ref.path is not None}
    if found:
        source["media"] = found
    return source


def text(value) -> str:
    """A release value as stripped text ('' for None); numbers become their usual spelling."""
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value).strip()


number = as_number  # a release value read as a number, by the rule the payload types check


def first_duplicate(seen: dict, key, where: str) -> str | None:
    """Remember `key` at `where`; return where it was first seen when it repeats."""
    if key in seen:
        return seen[key]
    seen[key] = where
    return None
