"""Logging filters named in `settings.LOGGING`."""

import logging


class NoTracebackForClientErrors(logging.Filter):
    """Django logs a refused request (403, 404, …) with the exception's traceback; a client error is an
    ordinary answer, not a fault of the server, so its record keeps the one-line message only."""

    def filter(self, record: logging.LogRecord) -> bool:
        status = getattr(record, "status_code", None)
        if isinstance(status, int) and 400 <= status < 500:
            record.exc_info = None
            record.exc_text = None
        return True
