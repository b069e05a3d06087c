"""Items for a study from the curators' page: a selection from the media library, a frozen benchmark
version, or an uploaded CSV / JSON Lines file, each checked row by row before anything is written.

Every source gives item rows (as `assignment.add_items` takes them) and problems, each naming the row
it is about. `add` checks the rows under the REST API's rules for `POST /api/studies/<slug>/items/`
(a closed study takes no items; external ids unique in the batch and in the study; an answer key as
`answer_keys` describes it, with "fields" on gold and attention items; a staged study's item names a
finished split `{"split_id": …}`, one per video; a kind with its own items, `StudyKind.item_row`,
resolves or refuses each row) and writes them all, or nothing: a dry run, or any problem, writes
nothing and reports every problem by row.

Uploaded files:
- JSON Lines: one object per line, `{"external_id": …, "payload": {…}, "role": …, "answer_key": {…}}`
  (role and answer_key optional); blank lines are skipped.
- CSV with a header row: `external_id` is required; `payload` (a JSON object) and `answer_key` (JSON)
  and `role` are read when present, and every other column becomes a payload key.
"""

import csv
import io
import json
from collections.abc import Iterator
from dataclasses import dataclass, field

from django.db import transaction

from annotation.benchmarks.blackswan import staged
from annotation.crowd import answer_keys, assignment, kinds
from annotation.crowd.errors import CrowdError, InvalidSubmission
from annotation.crowd.models import Study, StudyItem
from annotation.models import BenchmarkVersion, Image, Video
from config import json_text, table_limits

MAX_UPLOAD_BYTES = 5 * 1024 * 1024
MAX_ROWS = 10_000
EXTERNAL_ID_LENGTH = StudyItem._meta.get_field("external_id").max_length
CSV_KNOWN = ("external_id", "payload", "role", "answer_key")


@dataclass
class Batch:
    """Item rows with the number of the row each came from, and the problems found so far."""

    rows: list[dict] = field(default_factory=list)
    numbers: list[int] = field(default_factory=list)
    problems: list[dict] = field(default_factory=list)

    def problem(self, row: int | None, text: str) -> None:
        self.problems.append({"row": row, "problem": text})

    def add(self, number: int, row: dict) -> None:
        self.numbers.append(number)
        self.rows.append(row)


@dataclass
class Outcome:
    rows: int
    problems: list[dict]
    created: int = 0
    dry_run: bool = False


# --- Sources -----------------------------------------------------------------------------------------

def _decode(raw: bytes, batch: Batch) -> str | None:
    if len(raw) > MAX_UPLOAD_BYTES:
        batch.problem(None, f"the file is larger than {MAX_UPLOAD_BYTES // (1024 * 1024)} MB")
        return None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        batch.problem(None, "the file is not UTF-8 text")
        return None


def _json_value(text: str, name: str):
    try:
        return json_text.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{name} is not valid JSON ({exc.msg})") from None


def _jsonl_rows(text: str, batch: Batch) -> None:
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = _json_value(line, "the line")
        except ValueError as exc:
            batch.problem(number, str(exc))
            continue
        if not isinstance(row, dict):
            batch.problem(number, "each line must be a JSON object")
            continue
        batch.add(number, row)


def _csv_records(text: str, batch: Batch) -> Iterator[tuple[int, dict]]:
    """(line, {column: value}) of each row below the header, as `csv.DictReader` makes them (a short row's missing
    values None; blank lines skipped), within `config.table_limits`; a malformed file is a problem of the batch."""
    reader = table_limits.Reader(io.StringIO(text), "the file", where=lambda line: f"line {line}")
    try:
        header = next(reader, None)
        if not header or "external_id" not in header:
            batch.problem(1, "the header row needs an 'external_id' column")
            return
        for values in reader:
            if not values:
                continue
            if len(values) > len(header):
                yield reader.line_num, {None: values[len(header):]}
            else:
                yield reader.line_num, dict(zip(header, values + [None] * (len(header) - len(values)), strict=True))
    except table_limits.TableRefused as exc:
        batch.problem(exc.line, exc.reason)
    except csv.Error as exc:
        batch.problem(reader.line_num, f"not valid CSV ({exc})")


def _csv_rows(text: str, batch: Batch) -> None:
    for number, record in _csv_records(text, batch):
        if None in record:
            batch.problem(number, "more values than columns")
            continue
        payload = {key: value for key, value in record.items() if key not in CSV_KNOWN}
        row = {"external_id": record["external_id"], "payload": payload}
        try:
            if record.get("payload"):
                extra = _json_value(record["payload"], "payload")
                row["payload"] = {**payload, **extra} if isinstance(extra, dict) else extra
            if record.get("answer_key"):
                row["answer_key"] = _json_value(record["answer_key"], "answer_key")
        except ValueError as exc:
            batch.problem(number, str(exc))
            continue
        if record.get("role"):
            row["role"] = record["role"]
        batch.add(number, row)


def from_upload(name: str, raw: bytes) -> Batch:
    """Rows of an uploaded file: `.csv` is read as CSV, anything else as JSON Lines."""
    batch = Batch()
    text = _decode(raw, batch)
    if text is None:
        return batch
    (_csv_rows if name.lower().endswith(".csv") else _jsonl_rows)(text, batch)
    if not batch.rows and not batch.problems:
        batch.problem(None, "the file holds no rows")
    return batch


def from_media(video_ids, image_ids) -> Batch:
    """One item per chosen video and image of the library, its title in the payload."""
    batch = Batch()
    number = 0
    for model, ids, kind in ((Video, video_ids, "video"), (Image, image_ids, "image")):
        found = model.objects.in_bulk([int(i) for i in ids if str(i).isdigit()])
        for ident in ids:
            number += 1
            asset = found.get(int(ident)) if str(ident).isdigit() else None
            if asset is None:
                batch.problem(number, f"there is no {kind} #{ident}")
                continue
            batch.add(number, {"external_id": f"{kind}-{asset.pk}", "payload": {"title": asset.title}, kind: asset})
    if not batch.rows and not batch.problems:
        batch.problem(None, "choose at least one video or image")
    return batch


def from_version(version_id) -> Batch:
    """One item per item of a frozen benchmark version: its payload, its first video and image."""
    batch = Batch()
    version = BenchmarkVersion.objects.filter(pk=version_id).first() if str(version_id).isdigit() else None
    if version is None or not version.frozen:
        batch.problem(None, "choose a frozen benchmark version")
        return batch
    for number, item in enumerate(version.items.prefetch_related("media").order_by("id"), start=1):
        media = list(item.media.all())
        batch.add(number, {
            "external_id": item.external_id, "payload": item.payload, "benchmark_item": item,
            "video": next((m.video for m in media if m.video_id), None),
            "image": next((m.image for m in media if m.image_id), None)})
    if not batch.rows:
        batch.problem(None, f"version {version} has no items")
    return batch


# --- Checks and writing ------------------------------------------------------------------------------

def _row_problem(row: dict, study: Study) -> str | None:
    external_id = row.get("external_id")
    if not isinstance(external_id, str | int) or isinstance(external_id, bool) or not str(external_id).strip():
        return "external_id is missing"
    if len(str(external_id)) > EXTERNAL_ID_LENGTH:
        return f"external_id is longer than {EXTERNAL_ID_LENGTH} characters"
    if not isinstance(row.get("payload", {}), dict):
        return "payload must be a JSON object"
    role = row.get("role", StudyItem.Role.REGULAR)
    if role not in StudyItem.Role.values:
        return f"role must be one of {', '.join(StudyItem.Role.values)}"
    found = answer_keys.problems(row.get("answer_key", {}), role=role, study=study)
    return "; ".join(found) if found else None


def _staged_row(study: Study, row: dict, videos: set) -> str | None:
    """Turn a staged study's `{"split_id": …}` row into its video's item row (in place)."""
    if set(row.get("payload", {})) != {"split_id"}:
        return 'items of a staged study are {"payload": {"split_id": …}}'
    try:
        found = staged.item_rows([row["payload"]["split_id"]], study)[0]
    except InvalidSubmission as exc:
        return "; ".join(exc.details) if isinstance(exc.details, list) else exc.message
    if found["video"].pk in videos:
        return f"video #{found['video'].pk} is named twice (one item per video)"
    videos.add(found["video"].pk)
    row.update(payload=found["payload"], video=found["video"])
    return None


def check(study: Study, batch: Batch) -> list[dict]:
    """Every problem of the batch for this study, by row (the rows of a staged study are resolved)."""
    problems = list(batch.problems)
    taken = set(StudyItem.objects.filter(study=study).values_list("external_id", flat=True))
    seen, videos = {}, set()
    for number, row in zip(batch.numbers, batch.rows, strict=True):
        text = _row_problem(row, study)
        external_id = str(row.get("external_id", "")).strip()
        if text is None and external_id in taken:
            text = f"the study already has an item {external_id!r}"
        if text is None and external_id in seen:
            text = f"external_id {external_id!r} is also on row {seen[external_id]}"
        if text is None and staged.is_staged(study):
            text = _staged_row(study, row, videos)
        elif text is None and kinds.of(study).item_row is not None:
            text = kinds.of(study).item_row(study, row)
        seen.setdefault(external_id, number)
        if text:
            problems.append({"row": number, "problem": text})
    if len(batch.rows) > MAX_ROWS:
        problems.append({"row": None, "problem": f"at most {MAX_ROWS} rows at a time"})
    return sorted(problems, key=lambda p: (p["row"] is not None, p["row"] or 0))


def add(study: Study, batch: Batch, *, dry_run: bool = False) -> Outcome:
    """Check the batch and, unless it is a dry run or has problems, add all its rows in one go.
    CrowdError (409) for a closed study."""
    with transaction.atomic():
        study = Study.objects.select_for_update().get(pk=study.pk)  # one batch at a time: no video twice
        if study.state == Study.State.CLOSED:
            raise CrowdError("A closed study takes no new items.", status=409)
        problems = check(study, batch)
        if dry_run or problems:
            return Outcome(rows=len(batch.rows), problems=problems, dry_run=dry_run)
        rows = [{**row, "external_id": str(row["external_id"]).strip()} for row in batch.rows]
        created = assignment.add_items(study, rows)
    return Outcome(rows=len(batch.rows), problems=[], created=len(created))
