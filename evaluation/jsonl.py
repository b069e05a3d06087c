"""Reading JSON Lines files that people bring (predictions, human verdicts)."""

import json
from collections.abc import Iterable, Iterator


def records(lines: Iterable[str], source: str) -> Iterator[tuple[str, object]]:
    """(where, record) for each non-blank line, `where` naming it ("preds.jsonl line 3"); ValueError
    naming the line that is not JSON."""
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{source} line {number}"
        try:
            yield where, json.loads(line)
        except ValueError as exc:
            raise ValueError(f"{where}: not JSON ({exc}).") from None
