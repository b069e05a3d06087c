"""How large a request body may be, and the refusal of one that is larger, before it is read.

- Declared length: a body whose Content-Length is over its limit is answered 413 before any of it is read
  (`RefuseOversizedBodiesMiddleware`, `config.middleware`). A multipart upload may be as large as the upload limit
  (`MEDIA_MAX_UPLOAD_MB`) plus `DATA_UPLOAD_MAX_MEMORY_SIZE` for its other fields; a JSON body
  `JSON_BODY_MAX_BYTES` (`config.json_bodies`); any other body `DATA_UPLOAD_MAX_MEMORY_SIZE`.
- While a multipart body is read (a length can be missing or wrong), `CappedUploadHandler`, the first of
  `FILE_UPLOAD_HANDLERS`, stops at the first chunk of a file past the upload limit: 413, and the part of the
  file read so far is closed and deleted; no view sees it.
- Django's own refusals of a form (`RequestDataTooBig`: fields over `DATA_UPLOAD_MAX_MEMORY_SIZE`, 413;
  `TooManyFieldsSent`, `TooManyFilesSent`: 400) get the same answer: the API's error body under /api/
  (`config.api_errors`), a page elsewhere.
"""

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent, TooManyFilesSent
from django.core.files.uploadhandler import FileUploadHandler

from config import json_bodies

MULTIPART_TYPE = "multipart/form-data"
FORM_REFUSALS = (RequestDataTooBig, TooManyFieldsSent, TooManyFilesSent)


class UploadTooLarge(RequestDataTooBig):
    """A body or an uploaded file over its limit: `status` 413 and a `message` a client can show."""

    status = 413

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


def max_upload_bytes() -> int:
    """The platform's upload limit: the largest file one request may upload."""
    return settings.MEDIA_MAX_UPLOAD_MB * 1024 * 1024


def is_json(content_type: str) -> bool:
    return content_type == "application/json" or content_type.endswith("+json")


def max_body_bytes(content_type: str) -> int | None:
    """The largest body of this content type (None: no limit)."""
    if content_type == MULTIPART_TYPE:
        return max_upload_bytes() + (settings.DATA_UPLOAD_MAX_MEMORY_SIZE or 0)
    if is_json(content_type):
        return json_bodies.max_body_bytes()
    return settings.DATA_UPLOAD_MAX_MEMORY_SIZE


def declared_too_large(request) -> UploadTooLarge | None:
    """The refusal of a request whose declared length is over its limit; None when it is not."""
    content_type = request.content_type or ""
    limit = max_body_bytes(content_type)
    if limit is None or json_bodies.declared_length(request.META) <= limit:
        return None
    if content_type == MULTIPART_TYPE:
        return UploadTooLarge(_upload_message())
    if is_json(content_type):
        return UploadTooLarge(json_bodies.too_large().message)
    return UploadTooLarge(f"The request body is larger than the {limit} bytes the platform accepts.")


def form_refusal(exc: Exception) -> tuple[int, str]:
    """(status, message) for Django's refusal of a form (`FORM_REFUSALS`) or an `UploadTooLarge`."""
    if isinstance(exc, UploadTooLarge):
        return exc.status, exc.message
    if isinstance(exc, RequestDataTooBig):
        return 413, (f"The form's fields are larger than the {settings.DATA_UPLOAD_MAX_MEMORY_SIZE} bytes "
                     "the platform accepts (files aside).")
    if isinstance(exc, TooManyFilesSent):
        return 400, f"The form sends more than {settings.DATA_UPLOAD_MAX_NUMBER_FILES} files."
    return 400, f"The form sends more than {settings.DATA_UPLOAD_MAX_NUMBER_FIELDS} fields."


def _upload_message() -> str:
    return f"The upload is larger than the {settings.MEDIA_MAX_UPLOAD_MB} MB the platform accepts."


class CappedUploadHandler(FileUploadHandler):
    """The first upload handler: refuses a multipart body whose declared length is over the limit before
    reading it, and stops reading a file at its first chunk past the upload limit."""

    def handle_raw_input(self, input_data, META, content_length, boundary, encoding=None):
        limit = max_body_bytes(MULTIPART_TYPE)
        if content_length > limit:
            raise UploadTooLarge(_upload_message())

    def receive_data_chunk(self, raw_data, start):
        if start + len(raw_data) > max_upload_bytes():
            self._drop_partial_files()
            raise UploadTooLarge(f"'{self.file_name}' is larger than the {settings.MEDIA_MAX_UPLOAD_MB} MB "
                                 "the platform accepts.")
        return raw_data

    def file_complete(self, file_size):
        return None

    def _drop_partial_files(self):
        """Close (and so delete) what the other handlers wrote of the file so far."""
        for handler in getattr(self.request, "upload_handlers", []):
            partial = getattr(handler, "file", None)
            if handler is not self and partial is not None:
                partial.close()
