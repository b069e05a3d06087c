"""Worker attributes from a crowd platform's demographics export (Prolific: one CSV row per
participant, with columns such as "Participant id", "Age", "First language", "Country of birth",
"Nationality", "Country of residence", "Sex", "Status").

Each row's worker is the profile with that platform and `platform_worker_id`. The mapping names which
column fills which attribute (`DEFAULT_MAPPING`, or one given column by column); values are normalised
by `worker_attributes.normalise` ("Italian" → "it", "Italy" → "IT", "31" → 31). Unknown workers and
unreadable values are reported, never silently dropped; a row's readable values are still written.
A malformed file (not CSV, no id column, a mapped column missing, rows of the wrong width, a cell or a row count
past `config.table_limits`) raises ImportRefused (400) before anything is written.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field

from django.db import transaction

from annotation.crowd import worker_attributes
from annotation.crowd.errors import CrowdError
from annotation.crowd.models import WorkerProfile
from config import table_limits

ID_COLUMNS = ("Participant id", "participant_id", "Participant ID", "PROLIFIC_PID")
# column → attribute; the first column of an attribute that the file holds is used
DEFAULT_MAPPING = {"First language": "native_language", "Language": "native_language",
                   "Country of birth": "country_of_upbringing", "Age": "age"}
MAX_BYTES = 10 * 1024 * 1024
ID_BATCH = 1000  # worker ids looked up per query (SQLite takes a bounded number of parameters)


class ImportRefused(CrowdError):
    """A file or mapping that cannot be imported; nothing was written."""

    status = 400


@dataclass
class ImportReport:
    rows: int = 0
    updated: list[str] = field(default_factory=list)  # platform worker ids whose attributes changed
    unchanged: list[str] = field(default_factory=list)
    unknown_workers: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # "row N (id), Column: what is wrong"
    mapping: dict = field(default_factory=dict)  # the column → attribute mapping used


def parse_mapping(entries) -> dict[str, str]:
    """ "Column=attribute" entries (one a line on the page, one an option in the command) as a mapping."""
    mapping = {}
    for entry in entries:
        entry = entry.strip()
        if not entry:
            continue
        column, sep, attribute = entry.rpartition("=")
        if not sep or not column.strip() or not attribute.strip():
            raise ImportRefused(f"A mapping entry is Column=attribute (got {entry!r}).")
        mapping[column.strip()] = attribute.strip()
    return mapping


def _text(data) -> str:
    if isinstance(data, bytes):
        if len(data) > MAX_BYTES:
            raise ImportRefused(f"The file is larger than {MAX_BYTES // (1024 * 1024)} MB.")
        try:
            return data.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise ImportRefused("The file is not UTF-8 text; export it from the platform as CSV.") from None
    return data


def _read(text: str) -> tuple[list[str], list[list[str]]]:
    if "\x00" in text:
        raise ImportRefused("The file is not a CSV file (it holds NUL bytes).")
    try:
        rows = list(table_limits.Reader(io.StringIO(text), "The file"))
    except table_limits.TableRefused as exc:
        raise ImportRefused(str(exc)) from None
    except csv.Error as exc:
        raise ImportRefused(f"The file is not valid CSV: {exc}.") from None
    rows = [row for row in rows if any(cell.strip() for cell in row)]
    if not rows:
        raise ImportRefused("The file is empty.")
    header = [cell.strip() for cell in rows[0]]
    wrong = [number for number, row in enumerate(rows[1:], start=2) if len(row) != len(header)]
    if wrong:
        raise ImportRefused(f"Line{'s' if len(wrong) != 1 else ''} {', '.join(map(str, wrong[:10]))} "
                            f"{'have' if len(wrong) != 1 else 'has'} a different number of columns than the header.")
    return header, rows[1:]


def _used_mapping(header: list[str], mapping: dict | None) -> dict[str, str]:
    if mapping:
        missing = [column for column in mapping if column not in header]
        if missing:
            raise ImportRefused(f"The file has no column {', '.join(map(repr, missing))}; its columns are "
                                f"{', '.join(header)}.")
        return dict(mapping)
    used, taken = {}, set()
    for column, attribute in DEFAULT_MAPPING.items():
        if column in header and attribute not in taken:
            used[column] = attribute
            taken.add(attribute)
    if not used:
        raise ImportRefused(f"None of the columns {', '.join(DEFAULT_MAPPING)} is in the file; give a mapping.")
    return used


def import_attributes(data, *, platform: str = WorkerProfile.Platform.PROLIFIC, mapping: dict | None = None
                      ) -> ImportReport:
    """Write the file's mapped values onto the attributes of the platform's workers; see the module."""
    if platform not in WorkerProfile.Platform.values:
        raise ImportRefused(f"Unknown platform {platform!r}; choose one of {', '.join(WorkerProfile.Platform.values)}.")
    header, rows = _read(_text(data))
    id_column = next((column for column in ID_COLUMNS if column in header), None)
    if id_column is None:
        raise ImportRefused(f"The file has no participant id column ({' or '.join(ID_COLUMNS)}).")
    used = _used_mapping(header, mapping)
    report = ImportReport(rows=len(rows), mapping=used)
    ids = [row[header.index(id_column)].strip() for row in rows]
    wanted = sorted({i for i in ids if i})
    profiles = {p.platform_worker_id: p for start in range(0, len(wanted), ID_BATCH)
                for p in WorkerProfile.objects.filter(platform=platform,
                                                      platform_worker_id__in=wanted[start:start + ID_BATCH])}
    changed = []
    for number, (worker_id, row) in enumerate(zip(ids, rows, strict=True), start=2):
        profile = profiles.get(worker_id)
        if profile is None:
            report.unknown_workers.append(worker_id or f"(line {number}: no id)")
            continue
        values = dict(zip(header, row, strict=True))
        attributes = dict(profile.attributes or {})
        for column, attribute in used.items():
            try:
                attributes[attribute] = worker_attributes.normalise(attribute, values[column])
            except ValueError as exc:
                report.problems.append(f"line {number} ({worker_id}), {column}: {exc}")
        if attributes != (profile.attributes or {}):
            profile.attributes = attributes
            changed.append(profile)
            report.updated.append(worker_id)
        else:
            report.unchanged.append(worker_id)
    with transaction.atomic():
        WorkerProfile.objects.bulk_update(changed, ["attributes"])
    return report
