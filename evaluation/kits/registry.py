"""The formats of the evaluation kits, by name: each kit module (`lmms_eval`, `vlmevalkit`) defines a
`KitFormat` and registers it here. A format writes a version's requests and a run's predictions
(`request_chunks`, `prediction_chunks`: pieces of text) and reads a kit's output back (`rows`: the rows one
at a time, each with the request id or the position it names, and its responses; `read`: all of them)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from evaluation.kits.rows import PredictionRow, RequestRow


class KitError(ValueError):
    """A kit file that cannot be read (naming its line or row), or an export that cannot be made."""


@dataclass(frozen=True)
class KitRow:
    """One row of a kit's output: where it is ("preds.tsv row 3"), the request id it carries (or None) and
    else its position in the export order, and its responses in sample order (empty: no answer)."""

    where: str
    request_id: str | None
    position: int | None
    responses: tuple[str, ...] = ()
    response_from: str = ""  # the field the first response was read from


@dataclass
class KitRead:
    """What `read` found: the rows of a kit's output, in file order."""

    rows: list[KitRow] = field(default_factory=list)


class KitFormat:
    name = ""
    label = ""
    extension = ""  # of the files it writes
    position_key = ""  # the kit's name for a row's position in the export order (doc_id, index)

    def request_chunks(self, rows: list[RequestRow]) -> Iterator[str]:
        raise NotImplementedError

    def prediction_chunks(self, rows: list[PredictionRow]) -> Iterator[str]:
        raise NotImplementedError

    def recognises(self, path: Path) -> bool:
        """Whether a file looks like this kit's output (by its extension, or its first line); KitError for a first
        line that cannot be read at all."""
        raise NotImplementedError

    def check(self, path: Path) -> None:
        """KitError when the file is no file of this kit's at all (the wrong type, damaged, not UTF-8 text), from
        what its start shows; its rows are checked as they are read."""

    def rows(self, path: Path) -> Iterator[KitRow]:
        """The rows of a kit's output file one at a time, as they are read (a large file is never held whole);
        KitError naming the line or row of what is malformed, when the reading reaches it."""
        raise NotImplementedError

    def read(self, path: Path) -> KitRead:
        """Every row of a kit's output file; KitError naming the line or row of what is malformed."""
        return KitRead(list(self.rows(path)))


_FORMATS: dict[str, KitFormat] = {}


def register(kit: KitFormat) -> KitFormat:
    _FORMATS[kit.name] = kit
    return kit


def names() -> tuple[str, ...]:
    return tuple(_FORMATS)


def get(name: str) -> KitFormat:
    try:
        return _FORMATS[name]
    except KeyError:
        raise KitError(f"Unknown kit format {name!r}; known: {', '.join(_FORMATS)}.") from None


def labels() -> dict[str, str]:
    return {name: kit.label for name, kit in _FORMATS.items()}


def detect(path: Path) -> str | None:
    """The one kit format whose output the file looks like, or None (none, or more than one); KitError for a file
    whose first line cannot be read at all (nested too deep)."""
    found = [name for name, kit in _FORMATS.items() if kit.recognises(path)]
    return found[0] if len(found) == 1 else None
