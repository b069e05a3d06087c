"""Background probing of uploaded media (metadata, poster frames, thumbnails)."""

from django.core.files.base import ContentFile
from django.db import transaction

from annotation.media import discard
from annotation.models import Image, MediaAsset, Video
from config import state
from generation.jobs import job_handler
from generation.media_probe import MediaError, poster_jpeg, probe_video, thumbnail_jpeg


@job_handler("probe_video", label="Probe video metadata")
def probe_video_job(job, *, asset_id: int):
    video = Video.objects.filter(pk=asset_id).first()
    if video is None:
        raise MediaError(f"Video #{asset_id} no longer exists.")
    job.progress(5, f"Reading {video.original_name}")
    try:
        facts = probe_video(video.file.path)
        job.progress(60, "Metadata read; making the poster frame")
        poster = poster_jpeg(video.file.path)
    except MediaError as exc:
        discard(video)
        raise MediaError(f"{video.original_name} was removed: {exc}") from exc
    job.progress(90, "Saving")
    with transaction.atomic():
        for field, value in vars(facts).items():
            setattr(video, field, value)
        video.poster.save(f"{video.checksum[:2]}/{video.checksum}.jpg", ContentFile(poster), save=False)
        video.save()
        state.try_transition(video, MediaAsset.Status.READY, job.job.requested_by, "probed")
    return {"message": f"{facts.duration:.2f} s, {facts.width}×{facts.height}, {facts.fps:g} fps",
            "video_id": video.pk, **vars(facts)}


@job_handler("probe_image", label="Probe image metadata")
def probe_image_job(job, *, asset_id: int):
    image = Image.objects.filter(pk=asset_id).first()
    if image is None:
        raise MediaError(f"Image #{asset_id} no longer exists.")
    job.progress(10, f"Reading {image.original_name}")
    try:
        thumb = thumbnail_jpeg(image.file.path)
    except (OSError, ValueError) as exc:
        discard(image)
        raise MediaError(f"{image.original_name} was removed: it cannot be decoded ({exc}).") from exc
    with transaction.atomic():
        image.thumbnail.save(f"{image.checksum[:2]}/{image.checksum}.jpg", ContentFile(thumb), save=False)
        image.save()
        state.try_transition(image, MediaAsset.Status.READY, job.job.requested_by, "probed")
    return {"message": f"{image.width}×{image.height} {image.format}", "image_id": image.pk,
            "width": image.width, "height": image.height}
