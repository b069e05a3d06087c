"""The one guard every JSON request body passes through, in the API and in plain Django views.

A body is refused before it reaches a view or the database when it is larger than
`JSON_BODY_MAX_BYTES` (413), is not UTF-8 JSON, is nested deeper than `JSON_BODY_MAX_DEPTH` arrays
and objects, or holds a NUL character or a lone UTF-16 surrogate in any string or key (400):
PostgreSQL stores neither in text or JSON columns, and Python's `json` lets both through as
`\\u0000` and `\\ud800` escapes. NaN and Infinity, which are not JSON, are refused as DRF's parser does.

API views get it as their JSON parser (`GuardedJSONParser`, the default in `REST_FRAMEWORK`); plain
views call `request_json(request)`. Both raise errors with an HTTP `status` and a `message`. An API view
that reads fields from its body itself takes it through `body_fields(request)`: a body that is a JSON list
or a bare value is a 400, not an error on its first `.get`.
"""

import json
from collections.abc import Mapping
from typing import Any

from django.conf import settings
from rest_framework import status
from rest_framework.exceptions import APIException, ParseError
from rest_framework.parsers import JSONParser

from config import json_text

SUSPECT_ESCAPE, BAD_CHARACTER = json_text.SUSPECT_ESCAPE, json_text.BAD_CHARACTER


class JsonBodyError(Exception):
    """A refused JSON body: `status` 400 or 413 and a `message` a client can show."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.message = message
        self.status = status


class PayloadTooLarge(APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = "The request body is too large."
    default_code = "payload_too_large"


def max_body_bytes() -> int:
    return settings.JSON_BODY_MAX_BYTES


def too_large() -> JsonBodyError:
    return JsonBodyError(f"The request body is larger than the {max_body_bytes()} bytes a JSON body may have.",
                         status=413)


def declared_length(meta) -> int:
    try:
        return max(0, int(meta.get("CONTENT_LENGTH") or 0))
    except ValueError:
        return 0


def read_limited(stream, declared: int) -> bytes:
    """Read a body of at most `max_body_bytes()`, refusing a larger one before reading it when its
    length is declared, else as soon as one byte too many arrives."""
    limit = max_body_bytes()
    if declared > limit:
        raise too_large()
    chunks, size = [], 0
    while size <= limit:
        chunk = stream.read(limit + 1 - size)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    if size > limit:
        raise too_large()
    return b"".join(chunks)


def loads(raw: bytes, encoding: str = "utf-8") -> Any:
    """Parse a JSON body and check it (see the module's docstring)."""
    try:
        text = raw.decode(encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        raise JsonBodyError(f"The request body is not valid {encoding} text.") from exc
    try:
        json_text.check_depth(text, settings.JSON_BODY_MAX_DEPTH)  # before parsing, as files are checked
        value = json.loads(text, parse_constant=_refuse_constant)
    except (json_text.JsonTooDeep, RecursionError) as exc:
        raise JsonBodyError(_too_deep()) from exc
    except ValueError as exc:
        raise JsonBodyError(f"The request body is not valid JSON: {exc}") from exc
    check_value(value, check_text=SUSPECT_ESCAPE.search(text) is not None,
                check_depth=text.count("[") + text.count("{") > settings.JSON_BODY_MAX_DEPTH)
    return value


def _refuse_constant(name: str):
    raise ValueError(f"{name} is not a JSON number")


def check_value(value: Any, *, check_text: bool = True, check_depth: bool = True) -> None:
    """Refuse nesting beyond `JSON_BODY_MAX_DEPTH` and NUL characters or lone surrogates in any
    string or key. `loads` skips a check that the raw text shows cannot fail."""
    if not (check_text or check_depth):
        return
    max_depth = settings.JSON_BODY_MAX_DEPTH
    stack: list[tuple[Any, int, tuple]] = [(value, 0, ())]
    while stack:
        node, depth, where = stack.pop()
        if isinstance(node, str):
            if check_text:
                _check_text(node, where)
            continue
        if not isinstance(node, dict | list):
            continue
        depth += 1
        if check_depth and depth > max_depth:
            raise JsonBodyError(_too_deep())
        if isinstance(node, list):
            stack.extend((item, depth, (*where, index)) for index, item in enumerate(node))
            continue
        for key, item in node.items():
            if check_text:
                _check_text(key, where, key=True)
            stack.append((item, depth, (*where, key)))


def _too_deep() -> str:
    return f"The JSON body is nested more than {settings.JSON_BODY_MAX_DEPTH} levels deep."


def _check_text(text: str, where: tuple, *, key: bool = False) -> None:
    found = BAD_CHARACTER.search(text)
    if found is None:
        return
    place = ("a key" if key else "the text") + (f" at {_path(where)}" if where else "")
    if found.group() == "\x00":
        raise JsonBodyError(f"The request body has a NUL character (\\u0000) in {place}; text may not contain it.")
    raise JsonBodyError(f"The request body has a lone surrogate (\\u{ord(found.group()):04x}) in {place}; "
                        "text must be valid Unicode.")


def _path(where: tuple) -> str:
    return "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in where).lstrip(".")


def request_json(request) -> Any:
    """The JSON body of a plain Django view's request, guarded like the API's (raises JsonBodyError);
    None when the body is empty."""
    if declared_length(request.META) > max_body_bytes():
        raise too_large()
    raw = request.body
    if len(raw) > max_body_bytes():
        raise too_large()
    return loads(raw, request.encoding or settings.DEFAULT_CHARSET) if raw else None


class GuardedJSONParser(JSONParser):
    """DRF's JSON parser with the guard: 413 for a body that is too large, 400 for a refused one."""

    def parse(self, stream, media_type=None, parser_context=None):
        parser_context = parser_context or {}
        request = parser_context.get("request")
        declared = declared_length(request.META) if request is not None else 0
        try:
            raw = read_limited(stream, declared)
            return loads(raw, parser_context.get("encoding", settings.DEFAULT_CHARSET))
        except JsonBodyError as exc:
            if exc.status == 413:
                raise PayloadTooLarge(exc.message) from exc
            raise ParseError(exc.message) from exc


def body_fields(request) -> Mapping:
    """The fields of a DRF request's body (a JSON object or a form); ParseError (400) for any other JSON."""
    data = request.data
    if not isinstance(data, Mapping):
        raise ParseError(f"The request body must be a JSON object of fields, not a {type(data).__name__}.")
    return data
