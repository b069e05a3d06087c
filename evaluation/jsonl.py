"""Reading JSON Lines files that people bring (predictions, human verdicts)."""

from collections.abc import Iterable, Iterator

from config import json_text


def records(lines: Iterable[str], source: str, *, keep_nul: bool = False) -> Iterator[tuple[str, object]]:
    """(where, record) for each non-blank line, `where` naming it ("preds.jsonl line 3"); ValueError
    naming the line that is not JSON, is nested too deep or holds what cannot be stored (`config.json_text`;
    `keep_nul` for model output, whose NUL characters are removed and counted where it is stored)."""
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{source} line {number}"
        try:
            yield where, json_text.loads(line, keep_nul=keep_nul)
        except (json_text.JsonTooDeep, json_text.JsonNotStorable) as exc:
            raise ValueError(f"{where}: {exc}.") from None
        except ValueError as exc:
            raise ValueError(f"{where}: not JSON ({exc}).") from None
