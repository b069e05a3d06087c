"""lmms-eval's per-sample logs (what `--log_samples` writes: `samples_<task>_<time>.jsonl`, older releases
`<task>_samples.jsonl`): one JSON object a line per document.

Written (requests and predictions alike): `doc_id` (the request's position in the export order), `doc`
(the request as `manage.py export_requests` writes it, less `gold` and `prompt`: request_id, item_id,
variant, text, options, media with their files, answer type, setting), `target` (the gold), `arguments`
([the prompt]), `resps` (per request instance, the list of its responses: `[[sample 0, sample 1, …]]`),
`filtered_resps` (per instance, the response the metrics read: `[sample 0]`), `doc_hash`, `prompt_hash`
and `target_hash` (SHA-256, as lmms-eval computes them), and the platform's `request_id`. A request export
has empty `resps` and `filtered_resps`; a prediction export adds the per-sample metric keys `correct`
(true, false or null), `parsed` (the scorer's reading) and `outcome`.

Read: the row's request id is its `request_id`, else `doc.request_id`, else its `doc_id` (an integer) names
the position. The first response is `filtered_resps[0]` when there is one, else `resps[0][0]` (which one is
recorded); `resps[0][1:]` are further samples. A row with both lists empty has no answer.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator
from pathlib import Path

from config import json_text
from evaluation import jsonl
from evaluation.delimited import line_chunks
from evaluation.kits.registry import KitError, KitFormat, KitRow, register
from evaluation.kits.rows import PredictionRow, RequestRow

CHUNK_LINES = 1000
LEFT_OUT_OF_DOC = ("gold", "prompt")  # they are `target` and `arguments`
SUFFIXES = (".jsonl", ".json")


def hash_string(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _lines(records: Iterable[dict]) -> Iterator[str]:
    return line_chunks((json.dumps(record, ensure_ascii=False, default=str) for record in records),
                       rows_per_chunk=CHUNK_LINES)


def _strings(value, where: str, key: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(text, str) for text in value):
        raise KitError(f"{where}: `{key}` must hold the responses as strings.")
    return value


class LmmsEval(KitFormat):
    name = "lmms-eval"
    label = "lmms-eval samples (JSON Lines)"
    extension = ".jsonl"
    position_key = "doc_id"

    @staticmethod
    def sample(row: RequestRow) -> dict:
        doc = {key: value for key, value in row.line.items() if key not in LEFT_OUT_OF_DOC}
        target, prompt = row.request.gold, row.request.prompt
        return {"doc_id": row.position, "doc": doc, "target": target, "arguments": [prompt], "resps": [],
                "filtered_resps": [],
                "doc_hash": hash_string(json.dumps(doc, indent=2, ensure_ascii=False, default=str)),
                "prompt_hash": hash_string(prompt), "target_hash": hash_string(str(target)),
                "request_id": row.request.request_id}

    def request_chunks(self, rows: Iterable[RequestRow]) -> Iterator[str]:
        return _lines(self.sample(row) for row in rows)

    def prediction_chunks(self, rows: Iterable[PredictionRow]) -> Iterator[str]:
        return _lines({**self.sample(row), "resps": [list(row.responses)], "filtered_resps": [row.responses[0]],
                       "correct": row.correct, "parsed": row.parsed, "outcome": row.outcome} for row in rows)

    def recognises(self, path: Path) -> bool:
        """By the keys of the first line; KitError naming the line when it is nested too deep to be read."""
        if path.suffix.lower() not in SUFFIXES:
            return False
        try:
            with open(path, encoding="utf-8") as lines:
                number, first = next(((n, line) for n, line in enumerate(lines, start=1) if line.strip()), (1, ""))
            record = json_text.loads(first, keep_nul=True)
        except json_text.JsonTooDeep as exc:
            raise KitError(f"{path.name} line {number}: {exc}.") from None
        except (OSError, ValueError):
            return False
        return isinstance(record, dict) and "response" not in record and bool(
            {"doc_id", "resps", "filtered_resps"} & set(record))

    def rows(self, path: Path) -> Iterator[KitRow]:
        with open(path, encoding="utf-8") as lines:
            try:
                for where, record in jsonl.records(lines, path.name, keep_nul=True):
                    yield self.row(where, record)
            except UnicodeDecodeError:
                raise KitError(f"{path.name}: not UTF-8 text.") from None
            except KitError:
                raise
            except ValueError as exc:
                raise KitError(str(exc)) from None

    @staticmethod
    def row(where: str, record) -> KitRow:
        if not isinstance(record, dict):
            raise KitError(f"{where}: a sample must be a JSON object.")
        doc = record.get("doc")
        request_id = record.get("request_id")
        if request_id is None and isinstance(doc, dict):
            request_id = doc.get("request_id")
        if request_id is not None and (not isinstance(request_id, str) or not request_id):
            raise KitError(f"{where}: `request_id` must be a non-empty string.")
        doc_id = record.get("doc_id")
        if "doc_id" in record and (isinstance(doc_id, bool) or not isinstance(doc_id, int)):
            raise KitError(f"{where}: `doc_id` must be an integer (got {doc_id!r}).")
        if request_id is None and doc_id is None:
            raise KitError(f"{where}: no `request_id` and no `doc_id`: it names no request.")
        if "filtered_resps" not in record and "resps" not in record:
            raise KitError(f"{where}: no `filtered_resps` and no `resps`: it holds no response.")
        filtered, raw = record.get("filtered_resps") or [], record.get("resps") or []
        if not isinstance(filtered, list) or not isinstance(raw, list):
            raise KitError(f"{where}: `filtered_resps` and `resps` must be lists.")
        samples = []
        if raw:
            samples = _strings(raw if isinstance(raw[0], str) else raw[0], where, "resps")
        first, source = None, ""
        if filtered:
            first = filtered[0]
            if isinstance(first, list):  # a filter that keeps every sample
                first = first[0] if first else None
            if first is not None and not isinstance(first, str):
                raise KitError(f"{where}: `filtered_resps` must hold the responses as strings.")
            source = "filtered_resps" if first is not None else ""
        if first is None and samples:
            first, source = samples[0], "resps"
        responses = (first, *samples[1:]) if first is not None else ()
        return KitRow(where, request_id, doc_id if request_id is None else None, tuple(responses), source)


KIT = register(LmmsEval())
