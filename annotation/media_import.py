"""Importing a folder of media files from the command line (also used by the demo seed)."""

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from annotation.media import MediaRejected, incoming_from_path, ingest, kind_for_name
from annotation.models import MediaAsset
from generation import jobs


@dataclass
class ImportReport:
    added: list = field(default_factory=list)
    duplicates: list = field(default_factory=list)
    rejected: list = field(default_factory=list)  # (path, reason)
    skipped: list = field(default_factory=list)  # not media by name


def media_files(folder: Path, recursive: bool = True) -> list[Path]:
    pattern = "**/*" if recursive else "*"
    return sorted(p for p in folder.glob(pattern) if p.is_file())


def probe_here(asset, *, user=None):
    """Run an asset's probe job in this process (command-line tools wait for it); return the job."""
    job = jobs.create(f"probe_{asset.__class__.__name__.lower()}", params={"asset_id": asset.pk}, user=user)
    asset.__class__.objects.filter(pk=asset.pk).update(probe_job=job)
    return jobs.run_job(job.pk)


def import_files(paths: Iterable[Path], *, user=None, probe_now: bool = True,
                 say: Callable[[str], None] = lambda line: None) -> ImportReport:
    """Ingest each file; with `probe_now` the probe jobs run here instead of on a worker."""
    report = ImportReport()
    for path in paths:
        if kind_for_name(path.name) is None:
            report.skipped.append(path)
            continue
        incoming = incoming_from_path(path)
        try:
            asset = ingest(incoming, user=user, source=MediaAsset.Source.IMPORT, probe=not probe_now)
        except MediaRejected as exc:
            if exc.status == 409:
                report.duplicates.append(path)
                say(f"= {path.name}: already in the library")
            else:
                report.rejected.append((path, exc.message))
                say(f"✗ {path.name}: {exc.message}")
            continue
        finally:
            incoming.fileobj.close()
        if probe_now:
            job = probe_here(asset, user=user)
            if job.status != job.Status.SUCCEEDED:
                report.rejected.append((path, job.message))
                say(f"✗ {path.name}: {job.message}")
                continue
            say(f"+ {path.name}: {job.message}")
        else:
            say(f"+ {path.name}: queued for probing (job #{asset.probe_job_id})")
        report.added.append(asset)
    return report
