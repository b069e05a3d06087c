"""JSON that people bring in files (imports, uploads, JSON typed into a form, command options), read with
one guard against nesting and against text the database cannot store.

Python's parser recurses once per level: a line nested 200,000 deep raises RecursionError, which no reader
expects. `loads` refuses text nested deeper than `IMPORT_JSON_MAX_DEPTH` arrays and objects (a depth real
data never reaches) before parsing it, with `JsonTooDeep`: a `json.JSONDecodeError` (so a `ValueError`)
whose `msg`, `lineno` and `colno` name the first level too many, as a syntax error names where it breaks.
It also refuses a string or key holding a NUL character or a lone UTF-16 surrogate (written as `\\u0000`,
`\\ud800` escapes), which PostgreSQL stores in no text or JSON value (`JsonNotStorable`, placed likewise),
unless the reader reads model output (`keep_nul`), whose NUL characters are removed and counted where it is
stored (`generation.model_text`). `load` reads a whole file the same way. JSON request bodies have their own
guard (`config.json_bodies`), which shares these patterns.
"""

import json
import re
from pathlib import Path
from typing import Any

from django.conf import settings

_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_INNERMOST = re.compile(r"[\[{][\]}]")
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.S)
# the only ways a NUL or a lone surrogate gets into parsed JSON: raw ones are invalid JSON or UTF-8
SUSPECT_ESCAPE = re.compile(r"\\u(?:0000|[dD][89a-fA-F][0-9a-fA-F]{2})")
BAD_CHARACTER = re.compile("[\x00\ud800-\udfff]")


class JsonTooDeep(json.JSONDecodeError):
    """JSON nested deeper than the limit, refused before it is parsed."""

    def __init__(self, limit: int, doc: str, pos: int):
        super().__init__(f"nested more than {limit} levels deep", doc, pos)
        where = f"column {self.colno}" if self.lineno == 1 else f"line {self.lineno}, column {self.colno}"
        self.args = (f"{self.msg} (at {where})",)


class JsonNotStorable(json.JSONDecodeError):
    """JSON holding a NUL character or a lone surrogate in a string or key."""

    def __init__(self, character: str, doc: str, pos: int):
        what = ("a NUL character (\\u0000), which cannot be stored" if character == "\x00" else
                f"a lone surrogate (\\u{ord(character):04x}), which is not valid Unicode")
        super().__init__(f"holds {what}", doc, pos)
        where = f"column {self.colno}" if self.lineno == 1 else f"line {self.lineno}, column {self.colno}"
        self.args = (f"{self.msg} (at {where})",)


def max_depth() -> int:
    return settings.IMPORT_JSON_MAX_DEPTH


def loads(text: str, *, limit: int | None = None, keep_nul: bool = False) -> Any:
    """`json.loads(text)`, refusing nesting deeper than `limit` (`IMPORT_JSON_MAX_DEPTH`) with `JsonTooDeep` and,
    unless `keep_nul`, a NUL character or a lone surrogate with `JsonNotStorable`."""
    limit = limit or max_depth()
    check_depth(text, limit)
    try:
        value = json.loads(text)
    except RecursionError:  # a limit set above what the parser can take
        raise JsonTooDeep(limit, text, 0) from None
    if not keep_nul:
        check_storable(value, text)
    return value


def load(path: Path, *, encoding: str = "utf-8-sig", limit: int | None = None) -> Any:
    """The JSON file at `path`, read as `loads` reads text (OSError, UnicodeDecodeError or a JSONDecodeError)."""
    return loads(Path(path).read_text(encoding=encoding), limit=limit)


def check_storable(value: Any, text: str) -> None:
    """JsonNotStorable when a string or key of `value` (parsed from `text`) holds a NUL character or a lone
    surrogate, placed at the first escape in `text` that can write one."""
    escape = SUSPECT_ESCAPE.search(text)
    if escape is None:
        return
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            stack.extend(node.keys())
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, str) and (found := BAD_CHARACTER.search(node)):
            raise JsonNotStorable(found.group(), text, escape.start())


def check_depth(text: str, limit: int) -> None:
    """JsonTooDeep when `text` opens more than `limit` arrays and objects inside one another (brackets in
    strings do not count). Each pass removes the innermost pairs, so it takes as many passes as the text is
    deep, at most `limit`; only text that is deeper (or does not close what it opens) is scanned token by
    token to find where."""
    if text.count("[") + text.count("{") <= limit:
        return
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    for _ in range(limit):
        brackets, removed = _INNERMOST.subn("", brackets)
        if not brackets:
            return
        if not removed:
            break
    position = _first_too_deep(text, limit)
    if position is not None:
        raise JsonTooDeep(limit, text, position)


def _first_too_deep(text: str, limit: int) -> int | None:
    depth = 0
    for token in _TOKEN.finditer(text):
        mark = token.group()
        if mark in "[{":
            depth += 1
            if depth > limit:
                return token.start()
        elif mark in "]}":
            depth -= 1
    return None
