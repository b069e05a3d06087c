from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler


def exception_handler(exc, context):
    """DRF's handler, plus a top-level `error` string every client can show as is.

    Service errors that carry an HTTP `status` and a `message` (the crowd engine's, the media
    library's) become that status with the message, and their `details` when they have any.
    """
    status = getattr(exc, "status", None)
    message = getattr(exc, "message", None)
    if isinstance(status, int) and 400 <= status < 500 and isinstance(message, str):
        body = {"error": message}
        if getattr(exc, "details", None):
            body["details"] = exc.details
        return Response(body, status=status)
    response = drf_exception_handler(exc, context)
    if response is not None and isinstance(response.data, dict) and "error" not in response.data:
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
    if isinstance(data, list) and data:
        return _first_message(data[0])
    return str(data) if data else ""
