"""A word-level diff of two texts, for people who check that a rewrite kept the content of its source.

`word_diff(before, after)` compares the words (runs of letters and digits, and each punctuation mark
on its own) with `difflib.SequenceMatcher`, case-sensitively, and returns the pieces to show in
order: kept words, words the rewrite added and words it dropped, each with the spacing that followed
it in its own text, so that the kept and added pieces put together give `after` back word for word.
A rewrite that only adds details (the paper's "the boy" → "the curly redhead boy") shows insertions
alone; one that changes the content ("the boy" → "the teenager") shows a deletion, which the diff
also lists on its own (`WordDiff.removed`).
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

EQUAL, INSERT, DELETE = "equal", "insert", "delete"
_TOKEN = re.compile(r"(\w+(?:['’]\w+)*|[^\w\s])(\s*)")


@dataclass(frozen=True)
class Piece:
    """One word of the diff and the spacing after it; `op` is equal, insert or delete."""

    op: str
    text: str
    space: str = ""


@dataclass(frozen=True)
class WordDiff:
    pieces: tuple[Piece, ...]

    @property
    def removed(self) -> list[str]:
        """The words of the source the rewrite dropped or replaced, in order."""
        return [piece.text for piece in self.pieces if piece.op == DELETE]

    @property
    def added(self) -> list[str]:
        return [piece.text for piece in self.pieces if piece.op == INSERT]

    @property
    def changed(self) -> bool:
        return any(piece.op != EQUAL for piece in self.pieces)


def words(text: str) -> list[tuple[str, str]]:
    """(word, the spacing after it) for each word and punctuation mark of `text`."""
    return [(match.group(1), match.group(2)) for match in _TOKEN.finditer(str(text or ""))]


def word_diff(before: str, after: str) -> WordDiff:
    """The words of `after` against those of `before` (see the module docstring)."""
    old, new = words(before), words(after)
    matcher = difflib.SequenceMatcher(a=[w for w, _ in old], b=[w for w, _ in new], autojunk=False)
    pieces: list[Piece] = []
    for op, a1, a2, b1, b2 in matcher.get_opcodes():
        if op == "equal":
            pieces += [Piece(EQUAL, word, space) for word, space in new[b1:b2]]
            continue
        if op in ("delete", "replace"):
            pieces += [Piece(DELETE, word, space or " ") for word, space in old[a1:a2]]
        if op in ("insert", "replace"):
            pieces += [Piece(INSERT, word, space) for word, space in new[b1:b2]]
    return WordDiff(tuple(pieces))
