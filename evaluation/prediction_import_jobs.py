"""Predictions uploaded to the version's results page or the API, imported as a run by a background job (the
`import_predictions` kind), so that a large file does not hold a web worker.

`enqueue_import` runs in the request: the checks that need no file's content (`imported_runs.check_import`:
the model's name, a frozen version, options the benchmark takes; `check_upload_size`: the upload limit),
then it stores the upload in the job's own folder (`generation.job_files.job_folder`, under
`MEDIA_ROOT/exports/`, never served publicly), tells or checks its format there (`imported_runs.detect_format`)
and queues the job with the version, the options, the model's name, the format and the stored file's path
relative to the export root; a refusal (`ImportRefused`, also for a file that is no file of its format at all:
`imported_runs.check_file`) keeps neither the job nor the file. The job
(`import_job`) calls `imported_runs.import_run` on the stored file, as `manage.py import_run` does, records the
new run's id and the link to its results page in its result (`run`, `run_url`), and removes the stored file
when it ends, imported or refused; a malformed file fails the job with the refusal's message and leaves no
run.
"""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

from django.db import transaction

from annotation.models import BenchmarkVersion
from evaluation import imported_runs
from evaluation.imported_runs import ImportOptions, ImportRefused
from generation import job_files, jobs
from generation.jobs import job_handler
from generation.models import Job

IMPORT_JOB_KIND = "import_predictions"
RUN_URL_NAME = "results-run"


def enqueue_import(version: BenchmarkVersion, upload, *, model_id: str, fmt: str | None = None,
                   options: ImportOptions | None = None, user=None) -> Job:
    """Check what can be checked without reading the file, store the upload in the job's folder and queue the
    job that imports it; ImportRefused (no job, no file kept) for what cannot be imported."""
    options = options or ImportOptions()
    model_id, _ = imported_runs.check_import(version, model_id, options)
    imported_runs.check_upload_size(upload)
    folder = None
    try:
        with transaction.atomic():
            job = jobs.enqueue(IMPORT_JOB_KIND, user=user, params={})
            folder = job_files.job_folder(job)
            path = folder / imported_runs.upload_name(upload.name)
            with open(path, "wb") as copy:
                for chunk in upload.chunks():
                    copy.write(chunk)
            fmt = imported_runs.detect_format(path, fmt)
            imported_runs.check_file(path, fmt)
            job.params = {"version": version.pk, "model_id": model_id, "fmt": fmt,
                          "options": _options_params(options),
                          "path": path.relative_to(job_files.export_root()).as_posix()}
            job.save(update_fields=["params"])
    except BaseException:
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)
        raise
    return job


def _options_params(options: ImportOptions) -> dict:
    found = dataclasses.asdict(options)
    found["variants"] = list(found["variants"])
    return found


def _stored_file(relative: str) -> Path:
    """The stored upload at `relative` (under the export root, never outside it)."""
    path = job_files.stored_file(relative)
    if path is None:
        raise ImportRefused(f"The uploaded file {Path(relative).name} is no longer stored; upload it again.")
    return path


def run_url(run_id: int) -> str:
    return job_files.page_url(RUN_URL_NAME, run_id)


@job_handler(IMPORT_JOB_KIND, label="Import predictions made elsewhere")
def import_job(job, *, version: int, model_id: str, fmt: str, options: dict, path: str) -> dict:
    try:
        found = BenchmarkVersion.objects.select_related("benchmark").filter(pk=version).first()
        if found is None:
            raise ImportRefused(f"No benchmark version with id {version}.")
        stored = _stored_file(path)
        job.log(f"Importing {stored.name} ({fmt}) as {model_id} on {found}.")
        job.progress(5, f"Reading {stored.name}")
        chosen = ImportOptions(**{**options, "variants": tuple(options.get("variants") or ())})
        run = imported_runs.import_run(found, stored, model_id=model_id, fmt=fmt, options=chosen,
                                       user=job.job.requested_by)
    finally:
        shutil.rmtree(job_files.job_folder(job.job), ignore_errors=True)  # the stored upload, imported or not
    text = imported_runs.summary(run)
    job.log(f"Run {run.pk}: {text}")
    return {"message": f"Run #{run.pk}: {text}", "run": run.pk, "run_url": run_url(run.pk)}
