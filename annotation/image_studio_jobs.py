"""The image studio's job: generate one attempt's image on a worker of the `gpu` queue.

The worker keeps loaded pipelines between jobs (`generation.diffusion` caches them per process), so
a designer's next attempt with the same model starts at once. The device is the worker's GPU when it
has one, else its CPU. Inpainting keeps the parent's pixels outside the mask exactly (the diffusion
service pastes them back).
"""

from django.core.files.base import ContentFile
from django.db import transaction

from annotation.curation_models import ImageAttempt
from annotation.image_studio import (
    JOB_KIND,
    StudioError,
    build_request,
    open_mask,
    parent_of,
    png_bytes,
    settings_of,
)
from generation import diffusion
from generation.jobs import JobCancelled, JobContext, job_handler


class AttemptFailed(Exception):
    """The attempt could not be generated; its row says why."""


@job_handler(JOB_KIND, queue="gpu", label="Generate a studio image")
def run_attempt_job(job: JobContext, *, attempt: int) -> dict:
    row = ImageAttempt.objects.filter(pk=attempt).select_related("item", "parent", "parent_image").first()
    if row is None:
        raise AttemptFailed(f"Image attempt #{attempt} no longer exists.")
    started = ImageAttempt.objects.filter(pk=row.pk, status=ImageAttempt.Status.QUEUED).update(
        status=ImageAttempt.Status.RUNNING)
    if not started:
        return {"message": f"Attempt #{row.pk} was already {row.status}", "attempt": row.pk}
    try:
        job.progress(5, f"Reading the inputs of attempt #{row.pk}")
        parent = parent_of(row)
        init_image = parent.open() if parent else None
        mask = open_mask(row)
        request = build_request(settings_of(row), init_image=init_image, mask=mask)
        job.progress(10, f"Generating with {row.model_id} ({diffusion.mode_of(request)}, {request.steps} steps)")
        made = diffusion.generate(request)
        picture = made.image.convert("RGB")
        job.progress(95, "Saving the image")
        _store(row, picture, made)
    except JobCancelled:
        ImageAttempt.objects.filter(pk=row.pk).update(status=ImageAttempt.Status.FAILED, error="Cancelled.")
        raise
    except Exception as exc:  # noqa: BLE001 - every failure is the attempt's, told on its row and its job
        message = exc.message if isinstance(exc, StudioError) else (str(exc) or exc.__class__.__name__)
        ImageAttempt.objects.filter(pk=row.pk).update(status=ImageAttempt.Status.FAILED, error=message[:2000])
        job.log(f"attempt #{row.pk} failed: {message}")
        raise AttemptFailed(message) from exc
    job.log(f"attempt #{row.pk}: {made.seconds:.2f} s with {row.model_id}"
            f"{' (pipeline already loaded)' if made.reused_pipeline else ''}")
    return {"message": f"Attempt #{row.pk}: {picture.width}×{picture.height} in {made.seconds:.1f} s",
            "attempt": row.pk, "seconds": made.seconds, "reused_pipeline": made.reused_pipeline,
            "width": picture.width, "height": picture.height}


def _store(row: ImageAttempt, picture, made) -> None:
    """Write the image file and the finished row together; the file is removed again if the row is not."""
    provenance = dict(made.provenance or {})
    revision = str(provenance.get("revision") or row.revision or "")
    storage = ImageAttempt.image.field.storage
    name = None
    try:
        with transaction.atomic():
            row.image.save(f"{row.item_id}-{row.slot}-{row.pk}.png", ContentFile(png_bytes(picture)), save=False)
            name = row.image.name
            saved = ImageAttempt.objects.filter(pk=row.pk, status=ImageAttempt.Status.RUNNING).update(
                image=name, status=ImageAttempt.Status.DONE, provenance=provenance, revision=revision[:100],
                duration_s=made.seconds, error="")
            if not saved:
                raise AttemptFailed(f"Attempt #{row.pk} changed while it was generated; its image was not kept.")
    except BaseException:
        if name and storage.exists(name):
            storage.delete(name)
        raise
