"""Files that background jobs write for people to download (the results and version exports).

A job that makes a file writes it in its own folder, `MEDIA_ROOT/exports/job-<id>/` (`job_folder`; never
served publicly), and returns `file_result(...)` as its result: where the file is, its name, size and
download URL. `job_file(job)` finds the file again for the download view, only for a finished job of a
kind that registered who may download its files (`register_download`) and only inside the export
folder. The view checks the owner (or an admin) and `may_download(user, job)`.
"""

from __future__ import annotations

import os
import zipfile
from collections.abc import Callable
from pathlib import Path

from django.conf import settings
from django.urls import NoReverseMatch, reverse

from generation.models import Job

EXPORT_FOLDER = "exports"
DOWNLOAD_URL_NAME = "export-download"

_DOWNLOADS: dict[str, Callable] = {}  # job kind → allowed(user, job) -> bool


def register_download(kind: str, allowed: Callable) -> None:
    """Let the files of jobs of `kind` be downloaded by their owner (or an admin) when `allowed(user, job)`."""
    _DOWNLOADS[kind] = allowed


def download_kinds() -> list[str]:
    return sorted(_DOWNLOADS)


def may_download(user, job: Job) -> bool:
    """Whether the job's kind lets `user` download its file (the owner check is the caller's)."""
    allowed = _DOWNLOADS.get(job.kind)
    return allowed is not None and bool(allowed(user, job))


def export_root() -> Path:
    return Path(settings.MEDIA_ROOT) / EXPORT_FOLDER


def job_folder(job: Job) -> Path:
    """The job's own folder under the export root (made if missing)."""
    folder = export_root() / f"job-{job.pk}"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def partial(path: Path) -> Path:
    """Where a file is written before it is renamed into place, beside it."""
    return path.with_name(f".{path.name}.partial")


def zip_folder(folder: Path, out: Path) -> None:
    """Pack a folder into a zip file (stored, not compressed: Parquet files and media barely compress), file by
    file, under one folder named like the zip file."""
    written = partial(out)
    try:
        with zipfile.ZipFile(written, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as archive:
            for path in sorted(folder.rglob("*")):
                if path.is_file():
                    archive.write(path, arcname=f"{out.name.removesuffix('.zip')}/{path.relative_to(folder)}")
        os.replace(written, out)
    finally:
        written.unlink(missing_ok=True)


def page_url(name: str, pk: int) -> str:
    """The URL of page `name` for object `pk`, or "" in a process without the pages' URLs (a bare worker
    configuration), for a job's result to link to."""
    try:
        return reverse(name, kwargs={"pk": pk})
    except NoReverseMatch:
        return ""


def download_url(job: Job) -> str:
    return page_url(DOWNLOAD_URL_NAME, job.pk)


def file_result(job: Job, path: Path, *, message: str, **extra) -> dict:
    """A job's result naming the file it wrote in its folder, for the download view and the pages."""
    return {
        "message": message,
        "path": path.relative_to(export_root()).as_posix(),
        "file_name": path.name,
        "bytes": path.stat().st_size,
        "download_url": download_url(job),
        **extra,
    }


def job_file(job: Job) -> Path | None:
    """The file a finished job of a downloadable kind produced, if it is still there (inside the export folder)."""
    relative = (job.result or {}).get("path")
    if job.kind not in _DOWNLOADS or job.status != Job.Status.SUCCEEDED or not isinstance(relative, str):
        return None
    return stored_file(relative)


def stored_file(relative: str) -> Path | None:
    """The file at `relative` under the export root, if it is there (never a path outside the root)."""
    root = export_root().resolve()
    path = (root / relative).resolve()
    if not path.is_relative_to(root) or not path.is_file():
        return None
    return path


def stored_name(path: Path) -> str:
    """The file's name under MEDIA_ROOT (what nginx is told to send)."""
    return f"{EXPORT_FOLDER}/{path.relative_to(export_root().resolve()).as_posix()}"
