"""Background exports of a benchmark version, started from the version's page (or the API): the release's own
layout, one of the benchmark's other layouts, or the `hf` Hugging Face dataset folder, written by
`annotation.exporters.export_version` in the job's own folder (`generation.job_files`, as the results
exports are), zipped and downloaded through the export download, by whoever asked (or an admin) while their
role lets them export versions (curators, researchers, admins)."""

from __future__ import annotations

import shutil

from django.core.exceptions import PermissionDenied

from annotation.benchmarks import registry
from annotation.exporters import export_version, layouts_of
from annotation.exporters.base import safe_name
from annotation.exporters.hf import LAYOUT as HF_LAYOUT
from annotation.models import BenchmarkVersion
from config.roles import STAFF_ROLES, has_role
from generation import job_files, jobs
from generation.jobs import job_handler

VERSION_EXPORT_JOB_KIND = "export_version"
RELEASE = "release"  # the release's own layout (`export_version` without a layout)
REFUSAL = "Only curators, researchers and admins export benchmark versions."


class VersionExportError(Exception):
    """The export cannot be started as asked (an unknown layout)."""


def may_export_versions(user) -> bool:
    return has_role(user, *STAFF_ROLES)


def layout_choices(version: BenchmarkVersion) -> list[tuple[str, str]]:
    """(layout, label) of the exports a version offers: the Hugging Face dataset, the release layout and the
    benchmark's other release layouts."""
    try:
        benchmark = registry.get(version.benchmark.slug)
    except registry.UnknownBenchmark:
        return []
    choices = [(HF_LAYOUT, "Hugging Face dataset (Parquet files and a dataset card)"),
               (RELEASE, "the release's layout")]
    return choices + [(layout, f"release layout “{layout}”") for layout in layouts_of(benchmark)
                      if layout != HF_LAYOUT]


def enqueue_version_export(user, version: BenchmarkVersion, layout: str):
    """Queue the export of `version` in `layout` (one of `layout_choices`) for a user who may export versions."""
    if not may_export_versions(user):
        raise PermissionDenied(REFUSAL)
    known = [name for name, _ in layout_choices(version)]
    if layout not in known:
        raise VersionExportError(f"Choose a layout: {', '.join(known)} (got {layout!r}).")
    return jobs.enqueue(VERSION_EXPORT_JOB_KIND, params={"version": version.pk, "layout": layout}, user=user)


def file_stem(version: BenchmarkVersion, layout: str) -> str:
    """The exported folder's name (and its zip's, with `.zip`): benchmark, label and layout."""
    return f"{version.benchmark.slug}-{safe_name(version.label, str(version.pk))}.{layout}"


@job_handler(VERSION_EXPORT_JOB_KIND, label="Export a benchmark version")
def version_export_job(job, *, version: int, layout: str) -> dict:
    found = BenchmarkVersion.objects.select_related("benchmark").filter(pk=version).first()
    if found is None:
        raise VersionExportError(f"No benchmark version with id {version}.")
    folder = job_files.job_folder(job.job)
    stem = file_stem(found, layout)
    job.log(f"Exporting {found} in the {layout} layout.")
    try:
        result = export_version(found.benchmark.slug, found.label, folder / stem,
                                layout="" if layout == RELEASE else layout)
        job.progress(90, f"{result.items} items written; packing the zip file")
        archive = folder / f"{stem}.zip"
        job_files.zip_folder(result.folder, archive)
        shutil.rmtree(result.folder)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)  # nothing half-written stays behind
        raise
    return job_files.file_result(job.job, archive, message=f"Exported {result.items} items of {found} ({layout}).",
                                 items=result.items, layout=layout)


def may_download(user, job) -> bool:
    return may_export_versions(user)


job_files.register_download(VERSION_EXPORT_JOB_KIND, may_download)
