"""Model text as the database can keep it.

PostgreSQL keeps no NUL character (U+0000) in a text column nor in a jsonb value, so a single NUL in a model's
reply (the tiny Qwen2-VL writes some) would make it refuse the whole batch of rows written with it. Every model
reply is cleaned where it enters the platform: `ChatResult` (`generation.backends.base`) removes NUL from the
texts of every backend, before the response cache, predictions, judgments, proposals or captions see them, and
the importers of outputs made elsewhere (predictions, proposals) clean what they read the same way. Values parsed
from model text (a judge's verdict, a proposal's fields) may hold NUL again when the text wrote it as a `\\u0000`
escape; writers clean those with `json_without_nul`.

The count is kept: a writer records the NUL characters removed from a row's text under `NUL_KEY` in the row's
`params` (`noted`), only when there were some; a run sums its predictions' (`evaluation.runs.nul_removed`).
"""

from __future__ import annotations

NUL = "\x00"
NUL_KEY = "nul_removed"


def without_nul(text: str) -> tuple[str, int]:
    """`text` without NUL characters, and how many were removed."""
    if not isinstance(text, str) or NUL not in text:
        return text, 0
    return text.replace(NUL, ""), text.count(NUL)


def json_without_nul(value):
    """(value, removed): a JSON value (dicts, lists, strings, numbers) with NUL removed from every string and key,
    and how many were removed. The value is returned as it was when it holds none."""
    if isinstance(value, str):
        return without_nul(value)
    if not isinstance(value, dict | list):
        return value, 0
    stack = [value]
    found = False
    while stack and not found:  # most values hold none: look before copying
        node = stack.pop()
        if isinstance(node, str):
            found = NUL in node
        elif isinstance(node, dict):
            found = any(isinstance(key, str) and NUL in key for key in node)
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return _cleaned(value) if found else (value, 0)


def _cleaned(value) -> tuple[object, int]:
    """A cleaned copy of `value`, built without recursion (values parsed from text may nest deeply)."""
    removed = 0
    root: list = [None]
    stack: list[tuple[object, object, object]] = [(value, root, 0)]
    while stack:
        node, parent, key = stack.pop()
        if isinstance(node, str):
            text, count = without_nul(node)
            removed += count
            parent[key] = text
        elif isinstance(node, dict):
            made: dict = {}
            parent[key] = made
            for name, item in node.items():
                clean_name, count = without_nul(name) if isinstance(name, str) else (name, 0)
                removed += count
                made[clean_name] = None
                stack.append((item, made, clean_name))
        elif isinstance(node, list):
            made_list: list = [None] * len(node)
            parent[key] = made_list
            stack.extend((item, made_list, index) for index, item in enumerate(node))
        else:
            parent[key] = node
    return root[0], removed


def texts_without_nul(texts) -> tuple[list[str], list[int]]:
    """Each text without NUL characters, and the count removed from each."""
    cleaned = [without_nul(text) for text in texts]
    return [text for text, _ in cleaned], [count for _, count in cleaned]


def noted(params: dict | None, removed: int) -> dict:
    """`params` with the count of NUL characters removed from the row's text, when there were any."""
    params = dict(params or {})
    if removed:
        params[NUL_KEY] = params.get(NUL_KEY, 0) + removed
    return params
