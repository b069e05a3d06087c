"""Streaming protected files with HTTP Range support, or handing them to nginx."""

import mimetypes
import os
import re

from django.conf import settings
from django.http import FileResponse, HttpResponse, StreamingHttpResponse

RANGE_RE = re.compile(r"^bytes=(\d*)-(\d*)$")
CHUNK = 256 * 1024


class RangeNotSatisfiable(Exception):
    pass


def parse_range(header: str, size: int) -> tuple[int, int] | None:
    """Return (start, end) inclusive for a single byte range, None to send the whole file.

    Multi-range and malformed headers are ignored (the whole file is sent, as RFC 9110 allows);
    a well-formed range that lies outside the file raises RangeNotSatisfiable.
    """
    match = RANGE_RE.match(header.strip())
    if not match:
        return None
    first, last = match.groups()
    if first == "" and last == "":
        return None
    if first == "":
        length = int(last)
        if length == 0 or size == 0:
            raise RangeNotSatisfiable()
        return max(0, size - length), size - 1
    start = int(first)
    end = int(last) if last else size - 1
    if start >= size or end < start:
        raise RangeNotSatisfiable()
    return start, min(end, size - 1)


def _read(path: str, start: int, length: int):
    with open(path, "rb") as handle:
        handle.seek(start)
        remaining = length
        while remaining > 0:
            data = handle.read(min(CHUNK, remaining))
            if not data:
                break
            remaining -= len(data)
            yield data


def serve_protected(request, fieldfile, download_name: str | None = None):
    """Answer a GET/HEAD for a stored file the caller has already been allowed to see."""
    path = fieldfile.path
    content_type = mimetypes.guess_type(path)[0] or "application/octet-stream"
    if settings.MEDIA_ACCEL_REDIRECT_PREFIX:
        response = HttpResponse(content_type=content_type)
        response["X-Accel-Redirect"] = settings.MEDIA_ACCEL_REDIRECT_PREFIX.rstrip("/") + "/" + fieldfile.name
        return _private(response)
    size = os.path.getsize(path)
    try:
        byte_range = parse_range(request.headers.get("Range", ""), size)
    except RangeNotSatisfiable:
        response = HttpResponse(status=416)
        response["Content-Range"] = f"bytes */{size}"
        return _private(response)
    if byte_range is None:
        response = FileResponse(open(path, "rb"), content_type=content_type)  # noqa: SIM115
        response["Content-Length"] = str(size)
    else:
        start, end = byte_range
        response = StreamingHttpResponse(_read(path, start, end - start + 1), status=206, content_type=content_type)
        response["Content-Range"] = f"bytes {start}-{end}/{size}"
        response["Content-Length"] = str(end - start + 1)
    response["Accept-Ranges"] = "bytes"
    if download_name:
        response["Content-Disposition"] = f'inline; filename="{download_name}"'
    return _private(response)


def _private(response):
    response["Cache-Control"] = "private, no-store"
    response["X-Content-Type-Options"] = "nosniff"
    return response
