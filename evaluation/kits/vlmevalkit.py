"""VLMEvalKit's tables: a dataset TSV (`index`, `question`, `A`–`D`, `answer`, `category`, `split`, the images)
and its prediction file, the same rows with a `prediction` column (the kit writes it as .xlsx, .tsv or .csv).

Written, one row per request: `index` (the request's position in the export order), `request_id`, `item_id`,
`split` (the request's variant), `question` (its text, without instructions), `A`–`D` (the options shown;
empty where a request has fewer or none; letters past D get their own columns), `answer` (see below),
`answer_type`, `category` (the benchmark's category of the request, where it has one), `image_path` and
`video_path` (the media files under MEDIA_ROOT: one path, or a JSON list when there are several) and `prompt`
(the paper's full prompt). A prediction export adds `prediction` (the first response), `parsed` and
`correct` (1, 0, or empty where the metric is not a plain right/wrong).

`answer` by answer type: letter → the gold letter; yes_no → `Yes` / `No` (as VLMEvalKit's Y/N datasets
write it); number, choice_12 (NL-EYE's "1"/"2") and score_1_10 → the gold as text, with empty option
columns; free (open answers) → the reference, or a JSON list of the references when there are several.

Read: `prediction` is the response; a row is joined by its `request_id` when the cell is filled, else its
`index` (an integer) names the position.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

from evaluation.kits.registry import KitError, KitFormat, KitRow, register
from evaluation.kits.rows import PredictionRow, RequestRow
from evaluation.kits.tables import TABLE_SUFFIXES, TableError, read_table, tsv_chunks

LETTERS = ("A", "B", "C", "D")
HEAD = ("index", "request_id", "item_id", "split", "question")
TAIL = ("answer", "answer_type", "category", "image_path", "video_path", "prompt")
PREDICTION_COLUMNS = ("prediction", "parsed", "correct")
INTEGER = re.compile(r"[+-]?\d+")


def answer_text(request) -> str:
    gold = request.gold
    if gold is None:
        return ""
    if request.answer_type == "yes_no":
        return str(gold).strip().capitalize()
    if isinstance(gold, (list, tuple, dict)):
        return json.dumps(gold[0] if isinstance(gold, (list, tuple)) and len(gold) == 1 else gold,
                          ensure_ascii=False)
    return str(gold)


def _paths(row: RequestRow, kind: str) -> str:
    files = [medium["file"] for medium in row.line.get("media", []) if medium["kind"] == kind and medium["file"]]
    if not files:
        return ""
    return files[0] if len(files) == 1 else json.dumps(files, ensure_ascii=False)


def _text(value) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _correct(value: bool | None) -> str:
    return "" if value is None else "1" if value else "0"


class VlmEvalKit(KitFormat):
    name = "vlmevalkit"
    label = "VLMEvalKit (TSV)"
    extension = ".tsv"
    position_key = "index"

    @staticmethod
    def option_columns(rows: list[RequestRow]) -> list[str]:
        shown = {letter for row in rows for letter in (row.request.options or {})}
        return [*LETTERS, *sorted(shown - set(LETTERS))]

    @staticmethod
    def cells(row: RequestRow, letters: list[str]) -> list:
        request = row.request
        options = request.options or {}
        return [row.position, request.request_id, request.item_id, request.variant, request.text,
                *(options.get(letter, "") for letter in letters), answer_text(request), request.answer_type,
                row.category, _paths(row, "image"), _paths(row, "video"), request.prompt]

    def request_chunks(self, rows: Iterable[RequestRow]) -> Iterator[str]:
        rows = list(rows)
        letters = self.option_columns(rows)
        return tsv_chunks([*HEAD, *letters, *TAIL], (self.cells(row, letters) for row in rows))

    def prediction_chunks(self, rows: Iterable[PredictionRow]) -> Iterator[str]:
        rows = list(rows)
        letters = self.option_columns(rows)
        return tsv_chunks([*HEAD, *letters, *TAIL, *PREDICTION_COLUMNS],
                          ([*self.cells(row, letters), row.responses[0], _text(row.parsed), _correct(row.correct)]
                           for row in rows))

    def recognises(self, path: Path) -> bool:
        return path.suffix.lower() in TABLE_SUFFIXES

    def check(self, path: Path) -> None:
        try:
            read_table(path)[1].close()
        except TableError as exc:
            raise KitError(str(exc)) from None

    def rows(self, path: Path) -> Iterator[KitRow]:
        try:
            header, rows = read_table(path)
            missing = ["`prediction`"] if "prediction" not in header else []
            if "request_id" not in header and "index" not in header:
                missing.append("`index` (or `request_id`)")
            if missing:
                raise KitError(f"{path.name} has no {' and no '.join(missing)} column "
                               f"(its columns: {', '.join(header) or 'none'}).")
            for where, cells in rows:
                yield self.row(where, cells)
        except TableError as exc:
            raise KitError(str(exc)) from None

    @staticmethod
    def row(where: str, cells: dict[str, str]) -> KitRow:
        request_id = cells.get("request_id", "").strip() or None
        index = cells.get("index", "").strip()
        if index and not INTEGER.fullmatch(index):
            raise KitError(f"{where}: `index` must be an integer (got {index!r}).")
        if request_id is None and not index:
            raise KitError(f"{where}: no `request_id` and no `index`: it names no request.")
        position = int(index) if request_id is None else None
        return KitRow(where, request_id, position, (cells["prediction"],), "prediction")


KIT = register(VlmEvalKit())
