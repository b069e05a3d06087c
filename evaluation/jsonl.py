"""Reading JSON Lines files that people bring (predictions, human verdicts)."""

from collections.abc import Iterable, Iterator

from config import json_text


def records(lines: Iterable[str], source: str) -> Iterator[tuple[str, object]]:
    """(where, record) for each non-blank line, `where` naming it ("preds.jsonl line 3"); ValueError
    naming the line that is not JSON, or is nested too deep (`config.json_text`)."""
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{source} line {number}"
        try:
            yield where, json_text.loads(line)
        except json_text.JsonTooDeep as exc:
            raise ValueError(f"{where}: {exc}.") from None
        except ValueError as exc:
            raise ValueError(f"{where}: not JSON ({exc}).") from None
