"""Bringing media into the library: validate, store, deduplicate, then probe in the background.

Every check that can reject a file runs before anything is written. If writing the row fails,
the stored file is removed again, so a rejected upload leaves no row and no file behind.
"""

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.core.files.base import File
from django.db import IntegrityError, transaction

from annotation.models import Image, MediaAsset, Video
from config.uploads import max_upload_bytes  # the platform's upload limit; also imported from here
from generation import jobs
from generation.media_probe import (
    IMAGE_EXTENSIONS,
    VIDEO_EXTENSIONS,
    MediaError,
    check_image,
    check_video,
    sniff_kind,
)

CHUNK = 1024 * 1024


class MediaRejected(Exception):
    """An upload the library refuses; `status` is the HTTP status that describes it best."""

    def __init__(self, message: str, status: int = 400, existing=None):
        super().__init__(message)
        self.message = message
        self.status = status
        self.existing = existing


@dataclass
class Incoming:
    """A file on its way in: a readable binary file object plus the name it came with."""

    fileobj: object
    name: str
    size: int


def kind_for_name(name: str) -> str | None:
    ext = Path(name).suffix.lower()
    if ext in VIDEO_EXTENSIONS:
        return "video"
    if ext in IMAGE_EXTENSIONS:
        return "image"
    return None


def ingest(incoming: Incoming, *, user=None, title: str = "", expected_kind: str | None = None,
           source: str = MediaAsset.Source.UPLOAD, probe: bool = True):
    """Validate and store one file; return the new Video or Image (its probe job is queued)."""
    name = os.path.basename(incoming.name or "").strip()
    if not name:
        raise MediaRejected("The file has no name.")
    kind = kind_for_name(name)
    if kind is None:
        allowed = ", ".join(sorted(VIDEO_EXTENSIONS | IMAGE_EXTENSIONS))
        raise MediaRejected(f"Unsupported file type '{Path(name).suffix or name}'. Allowed: {allowed}.", status=415)
    if expected_kind and kind != expected_kind:
        raise MediaRejected(f"'{name}' is not a{'n' if expected_kind == 'image' else ''} {expected_kind} file.",
                            status=415)
    if incoming.size == 0:
        raise MediaRejected(f"'{name}' is empty (0 bytes).")
    if incoming.size > max_upload_bytes():
        raise MediaRejected(
            f"'{name}' is {incoming.size / 1e6:.1f} MB; the limit is {settings.MEDIA_MAX_UPLOAD_MB} MB.", status=413
        )
    fileobj = incoming.fileobj
    fileobj.seek(0)
    head = fileobj.read(32)
    sniffed = sniff_kind(head)
    if sniffed != kind:
        raise MediaRejected(f"'{name}' does not contain {'a video' if kind == 'video' else 'an image'} "
                            f"(its content does not match its {Path(name).suffix} extension).", status=415)
    checksum = _sha256(fileobj)
    model = Video if kind == "video" else Image
    existing = model.objects.filter(checksum=checksum).first()
    if existing is not None:
        raise MediaRejected(f"'{name}' is already in the library as “{existing.title}” (#{existing.pk}).",
                            status=409, existing=existing)
    fileobj.seek(0)
    try:
        facts = check_video(fileobj) if kind == "video" else check_image(fileobj)
    except MediaError as exc:
        raise MediaRejected(f"'{name}': {exc}") from exc
    fileobj.seek(0)
    return _store(model, fileobj, name=name, size=incoming.size, checksum=checksum, user=user,
                  title=title or Path(name).stem, source=source, facts=facts, probe=probe)


def _sha256(fileobj) -> str:
    fileobj.seek(0)
    digest = hashlib.sha256()
    for chunk in iter(lambda: fileobj.read(CHUNK), b""):
        digest.update(chunk)
    return digest.hexdigest()


def _store(model, fileobj, *, name, size, checksum, user, title, source, facts, probe):
    ext = Path(name).suffix.lower()
    asset = model(title=title[:255], original_name=name[:255], size_bytes=size, checksum=checksum,
                  uploaded_by=user if user is not None and user.pk else None, source=source)
    if model is Image and facts is not None:
        asset.width, asset.height, asset.format = facts.width, facts.height, facts.format
    stored_name = None
    try:
        with transaction.atomic():
            asset.file.save(f"{checksum[:2]}/{checksum}{ext}", File(fileobj), save=False)
            stored_name = asset.file.name
            asset.save()
            if probe:
                job = jobs.enqueue(f"probe_{model.__name__.lower()}", params={"asset_id": asset.pk}, user=user)
                model.objects.filter(pk=asset.pk).update(probe_job=job)
                asset.probe_job = job
    except IntegrityError as exc:
        _remove_file(asset.file.storage, stored_name)
        if model.objects.filter(checksum=checksum).exists():
            raise MediaRejected(f"'{name}' is already in the library.", status=409) from exc
        raise
    except BaseException:
        _remove_file(asset.file.storage, stored_name)
        raise
    return asset


def _remove_file(storage, name):
    if name and storage.exists(name):
        storage.delete(name)


def discard(asset) -> None:
    """Remove an asset together with its stored files (used when a background probe fails)."""
    files = [asset.file]
    files.append(asset.poster if isinstance(asset, Video) else asset.thumbnail)
    with transaction.atomic():
        asset.delete()
    for field in files:
        if field and field.name:
            _remove_file(field.storage, field.name)


def incoming_from_upload(uploaded) -> Incoming:
    return Incoming(fileobj=uploaded, name=uploaded.name, size=uploaded.size)


def incoming_from_path(path: Path) -> Incoming:
    return Incoming(fileobj=open(path, "rb"), name=path.name, size=path.stat().st_size)  # noqa: SIM115
