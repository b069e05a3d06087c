"""Exports of evaluation results for researchers: what rows to export, and writers that stream them.

Row sources (`SOURCES`, looked up with `source`):
- `predictions`: every prediction with the columns of its run, benchmark version and model, and after
  its parse columns the request's `gold`, the `outcome` the run's results give it and whether it is
  `correct` (`evaluation.prediction_scores`: the outcome sits on the sample the scorer read, the first
  without an error, and is null on later or failed samples; null gold, outcome and correct for a run
  that cannot be scored, counted in the export's `note()`);
- `runs`: evaluation runs with their settings and counts;
- `metrics`: every metric of each run (one row per metric, with its n), as `evaluation.results`
  scores it for the results pages;
- `judgments`: LLM judges' stored verdicts, with the prediction and run they judge;
- `submissions`: crowd submissions (human judgments) with their study, item, claim and review.
A selection narrows a source to runs (`runs`), to crowd studies (`studies`) or to primary keys
(`ids`). Rows come from the database in chunks (`values_list(...).iterator(chunk_size=...)`, a
server-side cursor on PostgreSQL) as plain tuples, never model instances; JSON fields are read as
the JSON text the database holds, which every writer uses as it is.

Writers take the columns and an iterator of rows and hold at most one chunk in memory:
- `csv` and `jsonl` encode line by line (`csv_chunks`, `jsonl_chunks` yield bounded pieces of text
  that a file or a streaming HTTP response can take);
- `parquet` writes record batches through `pyarrow.parquet.ParquetWriter`;
- `hf` writes a Hugging Face dataset folder that `datasets.load_dataset(folder)` opens (and the Hub
  shows): Parquet files under `data/<source>/` and a dataset card, `README.md`, with the config, its
  split and typed features in its YAML header and, in words, what the rows are, the selection and the
  columns (`annotation.exporters.hf_dataset`). JSON columns become structs and lists of their real
  types, learnt over every row while the rows are first written to an Arrow stream file beside the
  output, then read back batch by batch and parsed into those types; a column whose values share no
  type stays JSON text, and the card says so.
Metrics are the exception to one-chunk-at-a-time: each run is scored as a whole (the scorer needs all
of a run's predictions), one run after the other. Predictions are read in chunks ordered by run, then
by id (a selection by ids too), and each run's gold and outcomes are looked up once, when its first row
comes, with only the current run's lookup in memory.
JSON columns are JSON text in CSV and Parquet (field metadata `content: json` in Arrow) and JSON values
in JSON Lines. Files are written beside their target and renamed into place when complete, so a failed
export leaves nothing that looks finished.

Kit formats: a run's predictions can also be written in an evaluation kit's own layout (`evaluation.kits`:
`lmms-eval` JSON Lines, `vlmevalkit` TSV), with the gold and a `correct` column as the run's results score
them; such a file holds the predictions of one run (`kit_run`, `write_kit`).

Background exports: the `export_results` job kind (`enqueue_export`) writes its file in the job's folder
under `MEDIA_ROOT/exports/` (never served publicly; `generation.job_files`, shared with the version
exports) and records it in the job's `result`; an `hf` export is downloaded as a zip of its folder. The
download view checks owner and role (`may_download`).
"""

from __future__ import annotations

import json
import math
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from itertools import islice
from json.encoder import encode_basestring  # the json module's own string escaper
from pathlib import Path

from django.apps import apps
from django.core.exceptions import PermissionDenied
from django.db import models
from django.db.models import F, TextField
from django.db.models.functions import Cast, Coalesce
from django.utils import timezone

from annotation.crowd.access import can_read_submissions
from annotation.exporters import hf_dataset
from config.roles import ADMIN, RESEARCHER, has_role
from evaluation import kits, prediction_scores, results
from evaluation.delimited import delimited_chunks, line_chunks
from evaluation.models import EvaluationRun
from generation import job_files, jobs
from generation.jobs import job_handler

CHUNK_ROWS = 2000  # rows per database round trip
BATCH_ROWS = 10_000  # rows per Arrow record batch (Parquet, Hugging Face datasets)
TEXT_CHUNK_ROWS = 1000  # rows per piece of CSV / JSON Lines text
ID_CHUNK = 1000  # primary keys per query when a selection lists ids
PROGRESS_EVERY = 10_000  # rows between progress reports

FORMATS = {"csv": ".csv", "jsonl": ".jsonl", "parquet": ".parquet", "hf": ""}
FORMAT_LABELS = {"csv": "CSV", "jsonl": "JSON Lines", "parquet": "Parquet", "hf": "Hugging Face datasets",
                 **kits.labels()}
KIT_SOURCE = "predictions"  # what the kit formats hold
ALL_FORMATS = (*FORMATS, *kits.names())  # the row formats, then the kits' layouts of a run's predictions
KINDS = ("int", "float", "bool", "str", "datetime", "json")
EXPORT_JOB_KIND = "export_results"


class ExportError(Exception):
    """The export cannot be made as asked (unknown source or format, a bad selection, an existing folder)."""


def may_export_results(user) -> bool:
    """Researchers and admins export evaluation results."""
    return has_role(user, RESEARCHER, ADMIN)


def can_export(user, what: str | None = None) -> bool:
    """Whether `user` may export source `what` (each source names who may: `Source.allowed`); without
    `what`, whether they may export anything."""
    if what is None:
        return any(src.allowed(user) for src in SOURCES.values())
    return source(what).allowed(user)


# --- Columns and row sources ----------------------------------------------------------------------

@dataclass(frozen=True)
class Column:
    """One exported column: its name, its kind (one of KINDS) and what the database reads for it
    (a lookup path such as `run__model_id`, or an expression); a derived column is not read but made
    from the rows by its source (`Source.derive`)."""

    name: str
    kind: str
    lookup: str | models.Expression
    derived: bool = False

    def select(self):
        if self.kind == "json" and isinstance(self.lookup, str):
            return Cast(F(self.lookup), output_field=TextField())
        return self.lookup


def col(name: str, kind: str = "str", lookup=None, *, derived: bool = False) -> Column:
    if kind not in KINDS:
        raise ValueError(f"Unknown column kind {kind!r}.")
    return Column(name, kind, lookup if lookup is not None else name, derived)


@dataclass(frozen=True)
class Source:
    """Rows of one model, in `order` (its last key `pk`), with how a selection by runs or by studies reaches
    them. A computed source (`compute`) selects objects of its model and turns each into rows itself,
    instead of reading the columns from the database. A source with derived columns reads the others and
    `derive(rows, columns)` puts the derived ones in, returning rows to iterate once that also tell what
    the export should say once written (`note()`)."""

    name: str
    model_label: str  # "app_label.ModelName"
    columns: tuple[Column, ...]
    description: str = ""
    run_lookup: str | None = None  # the field that holds the run id, if rows belong to runs
    study_lookup: str | None = None  # the field that holds the crowd study's slug
    compute: Callable[[models.QuerySet], Iterator[tuple]] | None = None
    allowed: Callable = may_export_results  # allowed(user) -> bool: who may export these rows
    refusal: str = "Only researchers and admins export results."
    order: tuple[str, ...] = ("pk",)
    derive: Callable | None = None

    @property
    def model(self) -> type[models.Model]:
        return apps.get_model(self.model_label)

    @property
    def read_columns(self) -> tuple[Column, ...]:
        """The columns read from the database (all but the derived ones), in order."""
        return tuple(c for c in self.columns if not c.derived)

    def queryset(self, *, runs=None, studies=None) -> models.QuerySet:
        queryset = self.model._default_manager.all()
        if runs:
            if not self.run_lookup:
                raise ExportError(f"{self.name} do not belong to runs: select them another way.")
            queryset = queryset.filter(**{f"{self.run_lookup}__in": runs})
        if studies:
            if not self.study_lookup:
                raise ExportError(f"{self.name} do not belong to crowd studies: select them another way.")
            queryset = queryset.filter(**{f"{self.study_lookup}__in": studies})
        return queryset.order_by(*self.order)


PREDICTION_COLUMNS = (
    col("prediction_id", "int", "pk"),
    col("run_id", "int"),
    col("benchmark", "str", "run__version__benchmark__slug"),
    col("version_id", "int", "run__version_id"),
    col("version_label", "str", "run__version__label"),
    col("version_checksum", "str", "run__version__checksum"),
    col("model_id", "str", "run__model_id"),
    col("model_revision", "str", "run__model_revision"),
    col("resolved_revision", "str", "run__resolved_revision"),
    col("backend", "str", "run__backend"),
    col("input_strategy", "str", "run__input_strategy"),
    col("prompting", "str", "run__prompting"),
    col("option_order", "str", "run__option_order"),
    col("seed", "int", "run__seed"),
    col("request_id"),
    col("sample_index", "int"),
    col("item_id", "int"),
    col("item_external_id", "str", "item__external_id"),
    col("variant"),
    col("prompt", "json"),
    col("inputs", "json"),
    col("params", "json"),
    col("raw_output"),
    col("parsed_answer", "json"),
    col("parse_status"),
    col("parses", "json"),  # every parser's reading: {name: {value, status}}
    # as the run's results score it (`evaluation.prediction_scores`): the request's gold, the outcome on the
    # sample the scorer read (null on the others) and whether it is right or wrong (null where neither)
    col("gold", "json", derived=True),
    col("outcome", derived=True),
    col("correct", "bool", derived=True),
    col("latency_s", "float"),
    col("prompt_tokens", "int"),
    col("completion_tokens", "int"),
    col("from_cache", "bool"),
    col("error"),
    col("created_at", "datetime"),
)

RUN_COLUMNS = (
    col("run_id", "int", "pk"),
    col("benchmark", "str", "version__benchmark__slug"),
    col("version_id", "int"),
    col("version_label", "str", "version__label"),
    col("version_checksum", "str", "version__checksum"),
    col("model_id"),
    col("model_revision"),
    col("resolved_revision"),
    col("backend"),
    col("input_strategy"),
    col("prompting"),
    col("option_order"),
    col("frame_policy", "json"),
    col("generation_params", "json"),
    col("seed", "int"),
    col("variants", "json"),
    col("limit", "int"),
    col("n_samples", "int"),
    col("describer", "json"),
    col("status"),
    col("message"),
    col("total_requests", "int"),
    col("total_predictions", "int"),
    col("completed_predictions", "int"),
    col("cached_predictions", "int"),
    col("failed_predictions", "int"),
    col("created_at", "datetime"),
    col("started_at", "datetime"),
    col("finished_at", "datetime"),
)

SUBMISSION_COLUMNS = (
    col("submission_id", "int", "pk"),
    col("study", "str", "claim__study__slug"),
    col("step_kind", "str", "claim__study__step_kind"),
    col("item_external_id", "str", "claim__item__external_id"),
    col("item_role", "str", "claim__item__role"),
    col("benchmark_item_id", "int", "claim__item__benchmark_item_id"),
    col("proposal_id", "int", "claim__item__proposal_id"),
    col("worker_id", "int", "claim__worker_id"),
    col("claim_id", "int"),
    col("claim_status", "str", "claim__status"),
    col("presentation", "json", "claim__presentation"),
    col("data", "json"),
    col("reviewed_data", "json"),
    col("final_data", "json", Cast(Coalesce(F("reviewed_data"), F("data")), output_field=TextField())),
    col("active_seconds", "float"),
    col("wall_seconds", "float"),
    col("submitted_at", "datetime"),
    col("review_state"),
    col("review_queue"),
    col("check_passed", "bool"),
    col("reviewed_by_id", "int"),
    col("reviewed_at", "datetime"),
    col("review_reason"),
)

JUDGMENT_COLUMNS = (
    col("judgment_id", "int", "pk"),
    col("prediction_id", "int"),
    col("run_id", "int", "prediction__run_id"),
    col("benchmark", "str", "prediction__run__version__benchmark__slug"),
    col("version_label", "str", "prediction__run__version__label"),
    col("model_id", "str", "prediction__run__model_id"),
    col("request_id", "str", "prediction__request_id"),
    col("sample_index", "int", "prediction__sample_index"),
    col("item_external_id", "str", "prediction__item__external_id"),
    col("variant", "str", "prediction__variant"),
    col("kind"),
    col("judge_model"),
    col("judge_revision"),
    col("judge_backend"),
    col("reference_key"),
    col("prompt", "json"),
    col("params", "json"),
    col("raw_verdict"),
    col("verdict", "json"),
    col("parse_status"),
    col("error"),
    col("from_cache", "bool"),
    col("latency_s", "float"),
    col("prompt_tokens", "int"),
    col("completion_tokens", "int"),
    col("created_at", "datetime"),
)

METRIC_COLUMNS = (
    col("run_id", "int"),
    col("benchmark"),
    col("version_id", "int"),
    col("version_label"),
    col("model_id"),
    col("model_revision"),
    col("resolved_revision"),
    col("backend"),
    col("input_strategy"),
    col("prompting"),
    col("option_order"),
    col("seed", "int"),
    col("frames"),
    col("metric"),  # its dotted path in the run's metrics, e.g. real.counterfactual_accuracy
    col("value", "float"),
    col("n", "int"),  # the count of the metric's group
    col("computed", "bool"),
    col("reason"),  # why a metric was not computed
    col("rate", "bool"),  # a fraction in [0, 1] (accuracies, rates, drops, shares)
    col("error"),  # why the run could not be scored (then the only row of the run, without a metric)
)


def metric_rows(runs: models.QuerySet) -> Iterator[tuple]:
    """Every metric of each run, as the results pages and `manage.py score --run` compute it (scored
    once and cached by `evaluation.results`; scoring reads one run's predictions at a time)."""
    for run in runs.select_related("version__benchmark").iterator(chunk_size=100):
        head = (run.pk, run.version.benchmark.slug, run.version_id, run.version.label, run.model_id,
                run.model_revision, run.resolved_revision, run.backend, run.input_strategy, run.prompting,
                run.option_order, run.seed, results.frame_text(run))
        scored = results.run_results(run)
        if not scored.ok:
            yield (*head, "", None, None, False, "", False, scored.error)
            continue
        for cell in results.flat_metrics(scored.metrics):
            value = float(cell.value) if cell.computed and cell.value is not None else None
            yield (*head, cell.path, value, cell.n, cell.computed, cell.reason, results.is_rate(cell.path), "")


def scored_predictions(rows: Iterable[tuple], columns: tuple[Column, ...]) -> prediction_scores.ScoredRows:
    """Prediction rows (ordered by run) with their gold, outcome and correct, one run's lookup at a time."""
    read = [c.name for c in columns if not c.derived]
    return prediction_scores.ScoredRows(rows, run_at=read.index("run_id"), request_at=read.index("request_id"),
                                        sample_at=read.index("sample_index"),
                                        insert_at=next(i for i, c in enumerate(columns) if c.derived))


SOURCES: dict[str, Source] = {
    "predictions": Source("predictions", "evaluation.Prediction", PREDICTION_COLUMNS,
                          "predictions with their run, version and model, gold and outcome", run_lookup="run_id",
                          order=("run_id", "pk"), derive=scored_predictions),
    "runs": Source("runs", "evaluation.EvaluationRun", RUN_COLUMNS, "evaluation runs", run_lookup="pk"),
    "metrics": Source("metrics", "evaluation.EvaluationRun", METRIC_COLUMNS, "every metric of each run",
                      run_lookup="pk", compute=metric_rows),
    "judgments": Source("judgments", "evaluation.Judgment", JUDGMENT_COLUMNS,
                        "LLM judges' verdicts on predictions", run_lookup="prediction__run_id"),
    "submissions": Source("submissions", "annotation.Submission", SUBMISSION_COLUMNS,
                          "crowd submissions (human judgments)", study_lookup="claim__study__slug",
                          allowed=can_read_submissions,  # the one rule of the API, the admin and the pages
                          refusal="Only curators, researchers and admins export crowd submissions."),
}


def source(name: str) -> Source:
    try:
        return SOURCES[name]
    except KeyError:
        raise ExportError(f"Unknown export {name!r}; choose one of {', '.join(SOURCES)}.") from None


# --- Selections ------------------------------------------------------------------------------------

def _nothing_to_say() -> str:
    return ""


@dataclass
class Export:
    """A selection ready to write: its columns, a one-pass iterator of row tuples, how many rows (None for
    a computed source, whose rows are not counted before they are made), and what to say once the rows
    are written (`note()`: e.g. how many predictions have no gold; "" for nothing)."""

    source: Source
    columns: tuple[Column, ...]
    rows: Iterator[tuple]
    total: int | None
    selection: dict = field(default_factory=dict)
    note: Callable[[], str] = _nothing_to_say


def _rows(queryset: models.QuerySet, columns: tuple[Column, ...], chunk_rows: int) -> Iterator[tuple]:
    yield from queryset.values_list(*(c.select() for c in columns)).iterator(chunk_size=chunk_rows)


def _rows_by_ids(queryset, columns, ids: list[int], chunk_rows: int) -> Iterator[tuple]:
    for start in range(0, len(ids), ID_CHUNK):
        yield from _rows(queryset.filter(pk__in=ids[start:start + ID_CHUNK]), columns, chunk_rows)


def _ordered_ids(queryset: models.QuerySet, ids: list[int], order: tuple[str, ...]) -> list[int]:
    """The primary keys among `ids` that the queryset holds, in the source's order (whose last key is `pk`),
    so that reading them chunk by chunk keeps that order."""
    keys = []
    for start in range(0, len(ids), ID_CHUNK):
        keys += queryset.filter(pk__in=ids[start:start + ID_CHUNK]).values_list(*order)
    keys.sort()
    return [key[-1] for key in keys]


def select(what: str, *, runs=None, studies=None, ids=None, chunk_rows: int = CHUNK_ROWS) -> Export:
    """The rows of source `what`, narrowed to runs, crowd studies and/or primary keys (all if none)."""
    src = source(what)
    runs = [int(r) for r in runs or []]
    studies = [str(s) for s in studies or []]
    if runs and src.run_lookup:
        missing = sorted(set(runs) - set(EvaluationRun.objects.filter(pk__in=runs).values_list("pk", flat=True)))
        if missing:
            raise ExportError(f"No evaluation run with id {', '.join(map(str, missing))}.")
    queryset = src.queryset(runs=runs, studies=studies)
    selection = {key: value for key, value in (("runs", runs), ("studies", studies)) if value}
    if src.compute:
        if ids:
            selection["ids"] = len(ids)
            queryset = queryset.filter(pk__in=sorted({int(i) for i in ids}))
        return Export(src, src.columns, src.compute(queryset), None, selection)
    if ids:
        ids = sorted({int(i) for i in ids})
        selection["ids"] = len(ids)
        found = _ordered_ids(queryset, ids, src.order)
        total = len(found)
        rows = _rows_by_ids(queryset, src.read_columns, found, chunk_rows)
    else:
        total = queryset.count()
        rows = _rows(queryset, src.read_columns, chunk_rows)
    if src.derive is None:
        return Export(src, src.columns, rows, total, selection)
    derived = src.derive(rows, src.columns)
    return Export(src, src.columns, iter(derived), total, selection, derived.note)


# --- Encoding ---------------------------------------------------------------------------------------

def _indexes(columns, kind: str) -> list[int]:
    return [i for i, c in enumerate(columns) if c.kind == kind]


def _text_values(columns) -> Callable[[tuple], list]:
    """Row → values for text formats: datetimes in ISO 8601, everything else as read."""
    datetimes = _indexes(columns, "datetime")

    def convert(row):
        values = list(row)
        for i in datetimes:
            if values[i] is not None:
                values[i] = values[i].isoformat()
        return values

    return convert


def _json_text(raw: str | None) -> str:
    if raw is None:
        return "null"
    if "\n" in raw or "\r" in raw:  # whitespace between tokens: fine in JSON, not in JSON Lines
        return json.dumps(json.loads(raw), ensure_ascii=False)
    return raw


def _str_json(value: str | None) -> str:
    return "null" if value is None else encode_basestring(value)


def _int_json(value: int | None) -> str:
    return "null" if value is None else str(value)


def _float_json(value: float | None) -> str:
    return float.__repr__(value) if value is not None and math.isfinite(value) else "null"


def _bool_json(value: bool | None) -> str:
    return "null" if value is None else "true" if value else "false"


def _datetime_json(value) -> str:
    return "null" if value is None else '"' + value.isoformat() + '"'


JSON_TEXT = {"json": _json_text, "str": _str_json, "int": _int_json, "float": _float_json, "bool": _bool_json,
             "datetime": _datetime_json}


def json_object_encoder(columns) -> Callable[[tuple], str]:
    """Row → the text of one JSON object with the columns as keys, in order.

    Each value is turned into JSON text by its column's kind; JSON columns arrive as the JSON text
    the database stores and go in as they are. This is several times faster than building a dict
    per row for `json.dumps` (and parsing the JSON columns first), which took longer than reading
    the rows from the database. Non-finite floats become null, so every line is valid JSON.
    """
    keys = [encode_basestring(c.name) + ": " for c in columns]
    texts = [JSON_TEXT[c.kind] for c in columns]

    def to_text(row) -> str:
        return "{" + ", ".join([key + text(value) for key, text, value in zip(keys, texts, row, strict=True)]) + "}"

    return to_text


def jsonl_chunks(columns, rows: Iterable[tuple], rows_per_chunk: int = TEXT_CHUNK_ROWS) -> Iterator[str]:
    """JSON Lines, one object per row (JSON columns as JSON values), in pieces of `rows_per_chunk` lines."""
    to_text = json_object_encoder(columns)
    return line_chunks((to_text(row) for row in rows), rows_per_chunk=rows_per_chunk)


def csv_chunks(columns, rows: Iterable[tuple], rows_per_chunk: int = TEXT_CHUNK_ROWS) -> Iterator[str]:
    """CSV with a header row (JSON columns as JSON text, empty cells for nulls), in pieces."""
    convert = _text_values(columns)
    return delimited_chunks([c.name for c in columns], (convert(row) for row in rows), rows_per_chunk=rows_per_chunk)


def arrow_schema(columns):
    import pyarrow as pa

    types = {"int": pa.int64(), "float": pa.float64(), "bool": pa.bool_(), "str": pa.string(),
             "datetime": pa.timestamp("us", tz="UTC"), "json": pa.string()}
    return pa.schema([pa.field(c.name, types[c.kind], metadata={"content": "json"} if c.kind == "json" else None)
                      for c in columns])


def record_batches(columns, rows: Iterable[tuple], batch_rows: int = BATCH_ROWS) -> Iterator:
    """Arrow record batches of at most `batch_rows` rows."""
    import pyarrow as pa

    schema = arrow_schema(columns)
    iterator = iter(rows)
    while True:
        chunk = list(islice(iterator, batch_rows))
        if not chunk:
            return
        arrays = [pa.array(values, type=schema.field(i).type) for i, values in enumerate(zip(*chunk, strict=True))]
        yield pa.RecordBatch.from_arrays(arrays, schema=schema)


# --- Writing files ----------------------------------------------------------------------------------

@dataclass
class Written:
    path: Path
    format: str
    rows: int
    bytes: int


class _Counter:
    """Passes rows through, counting them and reporting every `every` rows."""

    def __init__(self, rows: Iterable[tuple], report: Callable[[int], None] | None, every: int = PROGRESS_EVERY):
        self.rows, self.report, self.every, self.count = rows, report, every, 0

    def __iter__(self):
        for row in self.rows:
            self.count += 1
            if self.report and self.count % self.every == 0:
                self.report(self.count)
            yield row


def _size(path: Path) -> int:
    if path.is_dir():
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    return path.stat().st_size


def write_text(chunks: Iterable[str], out: Path) -> None:
    partial = job_files.partial(out)
    try:
        with open(partial, "w", encoding="utf-8", newline="") as handle:
            for chunk in chunks:
                handle.write(chunk)
        os.replace(partial, out)
    finally:
        partial.unlink(missing_ok=True)


def write_parquet(columns, rows: Iterable[tuple], out: Path, batch_rows: int = BATCH_ROWS) -> None:
    import pyarrow.parquet as pq

    partial = job_files.partial(out)
    try:
        with pq.ParquetWriter(partial, arrow_schema(columns), compression="zstd") as writer:
            for batch in record_batches(columns, rows, batch_rows):
                writer.write_batch(batch)
        os.replace(partial, out)
    finally:
        partial.unlink(missing_ok=True)


def _typed_batches(batches: Iterable, types: dict[int, object]) -> Iterator:
    """Record batches with their JSON columns (`types`: column index → unified Arrow type) read into their types."""
    import pyarrow as pa

    for batch in batches:
        arrays = list(batch.columns)
        for index, data_type in types.items():
            arrays[index] = hf_dataset.read_json_texts(batch.column(index).to_pylist(), data_type)
        yield pa.RecordBatch.from_arrays(arrays, names=batch.schema.names)


def write_hf(export: Export, rows: Iterable[tuple], out: Path, batch_rows: int = BATCH_ROWS) -> None:
    """A Hugging Face dataset folder that `datasets.load_dataset(out)` reads: Parquet files under `data/`
    (config named for the source, split `train`) and a dataset card, `README.md`.

    Two passes, each holding one batch at a time: the rows go once from the database to an Arrow stream
    file beside `out`, JSON columns as their text, while `hf_dataset.JsonType` learns one type for each
    JSON column; then that file is read back batch by batch, the JSON columns parsed into their types (or
    kept as text where their values share none), and written as Parquet."""
    import pyarrow as pa

    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ExportError(f"{out} exists and is not an empty folder.")
    columns = export.columns
    work = Path(tempfile.mkdtemp(prefix=f".{out.name}.partial-", dir=out.parent))
    try:
        stream = work / "rows.arrow"
        learnt = {index: hf_dataset.JsonType() for index in _indexes(columns, "json")}
        total = 0
        with pa.OSFile(str(stream), "wb") as sink, pa.ipc.new_stream(sink, arrow_schema(columns)) as writer:
            for batch in record_batches(columns, rows, batch_rows):
                for index, json_type in learnt.items():
                    json_type.add_texts(batch.column(index).to_pylist())
                writer.write_batch(batch)
                total += batch.num_rows
        types = {index: json_type.final() for index, json_type in learnt.items()}
        typed = {index: data_type for index, data_type in types.items() if data_type is not None}
        text = [columns[index].name for index, data_type in types.items() if data_type is None]
        base = arrow_schema(columns)
        schema = hf_dataset.dataset_schema([(c.name, typed.get(i, base.field(i).type)) for i, c in enumerate(columns)],
                                           json_text=text)
        folder = hf_dataset.DatasetFolder(work / "dataset")
        folder.root.mkdir()
        with pa.OSFile(str(stream)) as source:  # read back one batch at a time
            config = folder.write_config(export.source.name, schema, _typed_batches(pa.ipc.open_stream(source), typed),
                                         rows=total, size_hint=stream.stat().st_size, default=True, json_text=text)
        folder.write_card(pretty_name=f"{export.source.name.capitalize()} exported from the benchmark platform",
                          body=card_body(export, config))
        if out.exists():
            out.rmdir()
        os.replace(folder.root, out)
    finally:
        shutil.rmtree(work, ignore_errors=True)


MAX_CARD_RUNS = 50  # runs listed by name on a dataset card; more are counted
ROW_NOUNS = {"predictions": "prediction", "runs": "evaluation run", "metrics": "metric of a run",
             "judgments": "judge's verdict", "submissions": "crowd submission"}


def _selection_text(export: Export) -> str:
    selection = export.selection
    lines = []
    if selection.get("runs"):
        runs = list(EvaluationRun.objects.filter(pk__in=selection["runs"]).select_related("version__benchmark")
                    .order_by("pk")[:MAX_CARD_RUNS])
        lines.append(f"Runs ({len(selection['runs'])}):")
        lines += [f"- run {run.pk}: {run.version.benchmark.slug} {run.version.label} · `{run.model_id}` "
                  f"({run.backend}, {run.prompting}, {run.input_strategy})" for run in runs]
        if len(selection["runs"]) > len(runs):
            lines.append(f"- and {len(selection['runs']) - len(runs)} more")
    if selection.get("studies"):
        lines.append("Crowd studies: " + ", ".join(f"`{slug}`" for slug in selection["studies"]) + ".")
    if selection.get("ids"):
        lines.append(f"Only {selection['ids']} rows picked by id.")
    return "\n".join(lines) or "Every row the platform holds (no selection)."


def card_body(export: Export, config) -> str:
    """The dataset card's text: what the rows are, which runs or studies, the columns, how to load them."""
    notes = dict.fromkeys(config.json_text, hf_dataset.JSON_TEXT_NOTE)
    notes.update({c.name: hf_dataset.JSON_TYPED_NOTE for c in export.columns
                  if c.kind == "json" and c.name not in config.json_text})
    text_note = ("" if not config.json_text else
                 "\n\nColumns kept as JSON text (read them with `json.loads`): "
                 + ", ".join(f"`{name}`" for name in config.json_text) + ".")
    return f"""# {export.source.name.capitalize()}

{export.source.description.capitalize()}: {config.rows} rows, one per {ROW_NOUNS.get(export.source.name, "row")}, \
in config `{config.name}`, split `{config.split}`. Exported from the benchmark platform \
(`{hf_dataset.PROJECT}` {hf_dataset.platform_version()}) on {timezone.now().strftime("%Y-%m-%d %H:%M UTC")}.

{_selection_text(export)}

## Loading

{hf_dataset.loading_snippet([config])}

## Columns

{hf_dataset.columns_table(config.schema, notes)}

Date-times are UTC.{text_note}
"""


def write(export: Export, fmt: str, out: Path | str, *, progress: Callable[[int], None] | None = None,
          batch_rows: int = BATCH_ROWS) -> Written:
    """Write an export to `out` (a file, or a folder for `hf`) in one pass over its rows; `batch_rows`
    is the size of Arrow record batches (and Parquet row groups)."""
    if fmt not in FORMATS:
        raise ExportError(f"Unknown format {fmt!r}; choose one of {', '.join(FORMATS)}.")
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    counted = _Counter(export.rows, progress)
    if fmt == "csv":
        write_text(csv_chunks(export.columns, counted), out)
    elif fmt == "jsonl":
        write_text(jsonl_chunks(export.columns, counted), out)
    elif fmt == "parquet":
        write_parquet(export.columns, counted, out, batch_rows)
    else:
        write_hf(export, counted, out, batch_rows)
    return Written(out, fmt, counted.count, _size(out))


def kit_run(fmt: str, runs=None, ids=None, studies=None) -> EvaluationRun:
    """The one run whose predictions a kit file holds; ExportError for any other selection."""
    runs = sorted({int(run) for run in runs or []})
    if ids or studies or len(runs) != 1:
        raise ExportError(f"A {FORMAT_LABELS[fmt]} file holds the predictions of one run: select exactly one run.")
    run = EvaluationRun.objects.select_related("version__benchmark").filter(pk=runs[0]).first()
    if run is None:
        raise ExportError(f"No evaluation run with id {runs[0]}.")
    return run


def kit_chunks(fmt: str, run: EvaluationRun) -> tuple[int, Iterator[str]]:
    """(rows, pieces of text) of a run's predictions in a kit's layout; ExportError when the run cannot be
    scored (its `correct` column comes from its results)."""
    try:
        rows = kits.run_rows(run)
    except ValueError as exc:
        raise ExportError(str(exc)) from None
    return len(rows), kits.get(fmt).prediction_chunks(rows)


def write_kit(fmt: str, run: EvaluationRun, out: Path | str) -> Written:
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    count, chunks = kit_chunks(fmt, run)
    write_text(chunks, out)
    return Written(out, fmt, count, _size(out))


# --- Background exports -----------------------------------------------------------------------------

def file_name(what: str, fmt: str) -> str:
    """The downloaded file's name: a Hugging Face datasets folder is downloaded as a zip file."""
    if fmt in kits.names():
        return f"{what}.{fmt}{kits.get(fmt).extension}"
    return f"{what}.hf.zip" if fmt == "hf" else f"{what}{FORMATS[fmt]}"


def check_request(what: str, fmt: str) -> None:
    source(what)
    if fmt in kits.names():
        if what != KIT_SOURCE:
            raise ExportError(f"{FORMAT_LABELS[fmt]} files hold {KIT_SOURCE}, not {what}: choose another format.")
        return
    if fmt not in FORMATS:
        raise ExportError(f"Unknown format {fmt!r}; choose one of {', '.join(ALL_FORMATS)}.")


def enqueue_export(user, what: str, fmt: str, *, runs=None, studies=None, ids=None):
    """Queue an export job for a user the source allows (`can_export`); returns the job."""
    check_request(what, fmt)
    if not can_export(user, what):
        raise PermissionDenied(source(what).refusal)
    if fmt in kits.names():
        kit_run(fmt, runs, ids, studies)
    params = {"what": what, "fmt": fmt}
    for key, value in (("runs", runs), ("studies", studies), ("ids", ids)):
        if value:
            params[key] = sorted(value)
    return jobs.enqueue(EXPORT_JOB_KIND, params=params, user=user)


def may_download(user, job) -> bool:
    """Who may download a results export: whoever may export its source (`can_export`)."""
    what = (job.params or {}).get("what")
    return can_export(user, what if what in SOURCES else None)


@job_handler(EXPORT_JOB_KIND, label="Export results")
def export_job(job, *, what: str, fmt: str, runs=None, studies=None, ids=None) -> dict:
    check_request(what, fmt)
    folder = job_files.job_folder(job.job)
    name = file_name(what, fmt)
    if fmt in kits.names():
        run = kit_run(fmt, runs, ids, studies)
        job.log(f"Exporting the {what} of run {run.pk} as {FORMAT_LABELS[fmt]}.")
        written = write_kit(fmt, run, folder / name)
        return _job_result(job, what, fmt, written, folder / name)
    export = select(what, runs=runs, studies=studies, ids=ids)
    job.log(f"Exporting {'the' if export.total is None else export.total} {what} as {FORMAT_LABELS[fmt]}.")

    def report(done: int) -> None:
        if export.total:
            job.progress(min(99, 100 * done / export.total), f"{done} of {export.total} rows written")
        else:
            job.progress(0, f"{done} rows written")

    if fmt == "hf":
        dataset_folder = folder / what
        written = write(export, fmt, dataset_folder, progress=report)
        job_files.zip_folder(dataset_folder, folder / name)
        shutil.rmtree(dataset_folder)
    else:
        written = write(export, fmt, folder / name, progress=report)
    note = export.note()
    if note:
        job.log(note)
    return _job_result(job, what, fmt, written, folder / name, note)


def _job_result(job, what: str, fmt: str, written: Written, path: Path, note: str = "") -> dict:
    message = " ".join(filter(None, (f"Exported {written.rows} {what} as {FORMAT_LABELS[fmt]}.", note)))
    return job_files.file_result(job.job, path, message=message, format=fmt, rows=written.rows)


job_files.register_download(EXPORT_JOB_KIND, may_download)
