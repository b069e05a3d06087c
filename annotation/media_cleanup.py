"""Stored media files that no database row references: found, listed and removed (`clean_media`).

Writing a file and registering it cannot be one step: an upload or an import stores the file first
and commits its row after. A process killed in between (kill -9, an out-of-memory kill, a lost
machine) leaves the file behind with no row. `clean` finds such files and deletes them:

- it looks only in the folders the models' file fields store into (`videos/`, `posters/`, …, taken
  from each field's `upload_to`), never elsewhere under MEDIA_ROOT (exports, caches);
- a file is an orphan when no row of any model with a file field names it;
- it must also be older than the grace period (`MEDIA_ORPHAN_GRACE_SECONDS`, an hour by default,
  `--older-than` on the command), so that a file whose row is about to be committed is left alone;
- a running release import holds a lease (`ImportLease`, a small file under `.import-leases/`,
  renewed with every medium it stores): files written since the oldest live lease began are kept
  whatever their age, because the import commits all its rows at once at the end. A lease not renewed
  for `LEASE_TIMEOUT_SECONDS` (ten minutes; an import renews it with every file) belongs to a process
  that died; it is removed with the orphans, and stops protecting anything.

`manage.py clean_media [--dry-run] [--older-than SECONDS]` runs it; Celery beat runs the
`annotation.clean_media` task every `MEDIA_CLEAN_INTERVAL_SECONDS`.
"""

from __future__ import annotations

import os
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from django.apps import apps
from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import models
from django.utils import timezone

LEASE_FOLDER = ".import-leases"
LEASE_TIMEOUT_SECONDS = 600  # a lease not renewed for this long belongs to an import that died


@dataclass
class Orphan:
    name: str  # relative to the storage's root (MEDIA_ROOT)
    size: int
    age_seconds: float


@dataclass
class CleanReport:
    orphans: list[Orphan] = field(default_factory=list)
    stale_leases: list[str] = field(default_factory=list)
    kept_for_imports: int = 0  # unreferenced files kept because an import in progress may still register them
    deleted: bool = False

    @property
    def size(self) -> int:
        return sum(orphan.size for orphan in self.orphans)


def grace_seconds() -> float:
    return float(settings.MEDIA_ORPHAN_GRACE_SECONDS)


def file_fields() -> list[tuple[type[models.Model], models.FileField]]:
    """Every file field of every installed model (ImageField included)."""
    return [(model, found) for model in apps.get_models() for found in model._meta.concrete_fields
            if isinstance(found, models.FileField)]


def stored_folders(fields) -> list[str]:
    """The top-level folders the file fields store into, from their `upload_to`."""
    folders = {str(found.upload_to).strip("/").split("/")[0] for _model, found in fields
               if isinstance(found.upload_to, str) and found.upload_to.strip("/")}
    return sorted(folders)


def referenced_names(fields) -> set[str]:
    """The file names that rows hold, over every file field."""
    names: set[str] = set()
    for model, found in fields:
        rows = model._base_manager.exclude(**{found.name: ""}).exclude(**{f"{found.name}__isnull": True})
        names.update(rows.values_list(found.name, flat=True).iterator(chunk_size=2000))
    return names


def _walk(storage, folder: str):
    """Every file name under `folder` of `storage`, recursively."""
    if not storage.exists(folder):
        return
    dirs, files = storage.listdir(folder)
    for name in files:
        yield f"{folder}/{name}"
    for sub in dirs:
        yield from _walk(storage, f"{folder}/{sub}")


def _age(storage, name: str, now: datetime) -> float:
    return (now - storage.get_modified_time(name)).total_seconds()


def _now() -> datetime:
    return timezone.now() if settings.USE_TZ else datetime.now()


def find(*, older_than: float | None = None, storage=None) -> CleanReport:
    """What `clean` would remove now, without removing anything."""
    storage = storage or default_storage
    older_than = grace_seconds() if older_than is None else float(older_than)
    now = _now()
    live_since, stale = _leases(storage, now)
    fields = file_fields()
    folders = stored_folders(fields)
    referenced = referenced_names(fields)
    report = CleanReport(stale_leases=stale)
    for folder in folders:
        for name in _walk(storage, folder):
            if name in referenced:
                continue
            age = _age(storage, name, now)
            if age < older_than:
                continue
            if live_since is not None and storage.get_modified_time(name) >= live_since:
                report.kept_for_imports += 1
                continue
            report.orphans.append(Orphan(name=name, size=storage.size(name), age_seconds=age))
    return report


def clean(*, older_than: float | None = None, dry_run: bool = False, storage=None) -> CleanReport:
    """Find the orphans (see the module docstring) and delete them and the stale leases, unless `dry_run`."""
    storage = storage or default_storage
    report = find(older_than=older_than, storage=storage)
    if dry_run:
        return report
    for name in [orphan.name for orphan in report.orphans] + report.stale_leases:
        if storage.exists(name):
            storage.delete(name)
    report.deleted = True
    return report


# --- Leases of imports in progress ---------------------------------------------------------------

def _leases(storage, now: datetime) -> tuple[datetime | None, list[str]]:
    """(when the oldest live lease began, or None; the names of the stale ones)."""
    live_since, stale = None, []
    for name in _walk(storage, LEASE_FOLDER):
        if _age(storage, name, now) >= LEASE_TIMEOUT_SECONDS:
            stale.append(name)
            continue
        began = _lease_start(name) or storage.get_modified_time(name)
        live_since = began if live_since is None else min(live_since, began)
    return live_since, stale


def _lease_start(name: str) -> datetime | None:
    """The start written into a lease's name (`<epoch seconds>-<random>`)."""
    stamp = os.path.basename(name).split("-", 1)[0]
    if not stamp.isdigit():
        return None
    start = datetime.fromtimestamp(int(stamp), tz=UTC if settings.USE_TZ else None)
    return start - timedelta(seconds=1)  # whole seconds: keep what was written in the second it began


class ImportLease:
    """Held while an import stores media whose rows are committed only at its end (see `clean`)."""

    def __init__(self, storage=None):
        self.storage = storage or default_storage
        self.name = ""

    def __enter__(self) -> ImportLease:
        wanted = f"{LEASE_FOLDER}/{int(time.time())}-{uuid.uuid4().hex}"
        self.name = self.storage.save(wanted, ContentFile(f"import by process {os.getpid()}\n".encode()))
        return self

    def renew(self) -> None:
        """Mark the import as alive (its lease's modification time is now)."""
        try:
            os.utime(self.storage.path(self.name))
        except NotImplementedError:  # a storage without local paths: write the lease again
            self.storage.delete(self.name)
            self.storage.save(self.name, ContentFile(b"renewed\n"))

    def __exit__(self, *exc_info) -> None:
        if self.name and self.storage.exists(self.name):
            self.storage.delete(self.name)
