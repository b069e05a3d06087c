"""The platform's error body, `{"error": "<one message a client can show>", …}`, for every refusal of the
API: the exception handler below makes it from DRF's exceptions and the services' errors, and
`ErrorSerializer` describes it in the schema (`config.api_schema` adds it to every operation)."""

from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from config import uploads
from config.api_rendering import render_as_json


def exception_handler(exc, context):
    """DRF's handler, plus a top-level `error` string every client can show as is.

    Service errors that carry an HTTP `status` and a `message` (the crowd engine's, the media
    library's) become that status with the message, and their `details` when they have any.
    A refusal whose messages form a list (a list of rows, each refused) keeps them under `errors`.
    Django's refusal of a form as DRF reads it (too large: 413, too many fields or files: 400) is answered
    as the pages' guard answers it (`config.uploads`). The body is JSON also on a route that renders
    something else (a CSV download).
    """
    render_as_json(context.get("request"))
    if isinstance(exc, uploads.FORM_REFUSALS):
        status, message = uploads.form_refusal(exc)
        return Response({"error": message}, status=status)
    status = getattr(exc, "status", None)
    message = getattr(exc, "message", None)
    if isinstance(status, int) and 400 <= status < 500 and isinstance(message, str):
        body = {"error": message}
        if getattr(exc, "details", None):
            body["details"] = exc.details
        return Response(body, status=status)
    response = drf_exception_handler(exc, context)
    if response is not None and isinstance(response.data, list):
        response.data = {"error": _first_message(response.data), "errors": response.data}
    elif response is not None and isinstance(response.data, dict) and "error" not in response.data:
        response.data["error"] = _first_message(response.data)
    return response


def _first_message(data) -> str:
    if isinstance(data, dict):
        if "detail" in data:
            return str(data["detail"])
        for key, value in data.items():
            text = _first_message(value)
            if text:
                return text if key == "non_field_errors" else f"{key}: {text}"
    if isinstance(data, list):
        for value in data:
            text = _first_message(value)
            if text:
                return text
        return ""
    return str(data) if data else ""


class ErrorSerializer(serializers.Serializer):
    """The error body. Besides these keys, each refused field of the request (or filter parameter) may
    carry its messages under its own name, e.g. `{"error": "status: …", "status": ["…"]}`."""

    error = serializers.CharField(help_text="one message a client can show as is")
    detail = serializers.CharField(required=False, help_text="DRF's own message, for refusals not about a field")
    details = serializers.JSONField(required=False,
                                    help_text="what is wrong, by field or by position, where the service names it")
    errors = serializers.JSONField(required=False, help_text="every message of the refusal, by field or position")
    existing_id = serializers.IntegerField(required=False,
                                           help_text="an upload already in the library: the id of the one there")
