"""Predictions made outside the platform, brought in as an evaluation run: a researcher who ran a model with
lmms-eval, VLMEvalKit or a script of their own over a version's exported requests
(`evaluation.request_exports`) imports the answers, and the run is scored, judged, shown on the results
pages and the leaderboard, drilled into and exported like any other.

`import_run(version, path, model_id=..., fmt=..., <request options>)` reads a predictions file in any of the
formats `manage.py score --predictions` reads (the platform's JSON lines `request_id` / `response` /
`sample` / `judgment`, or a kit's output: `evaluation.kits`, joined to the requests by request id or by
position) for the requests that the given options make (input strategy, prompting, seed, variants, option
order: the ones the requests were exported with). It makes an `EvaluationRun` with backend `imported`
(`runs.IMPORTED_BACKEND`), the given model name, the options, status succeeded (with its history: pending →
running → succeeded), and its `Prediction` rows as the runner writes them: one per request and sample, the
raw output the file's response (NUL characters removed and counted in its `params`: `generation.model_text`),
read by the parsers (`scoring.parse_prediction`); a request the file does
not answer gets a failed row per sample (`error` "no answer in <file>"), as the runner records a request
whose call failed, so it counts as missing. Each prediction's `prompt` is the request's prompt as the
export gives it (the media as placeholders) and `inputs` names the file. `backend_options` records where
the answers came from: the file's name, format, SHA-256 checksum and size, its rows, how they were joined
(`joined_by`) and which field each first response came from (`responses_from`), the answered and unanswered
requests, and the rows that named no request.

As `score` does, rows that name no request of the version under these options are left out and reported
(`unknown_requests`, the first `scoring.UNKNOWN_SHOWN` ids in `unknown_request_ids`); a file none of whose
rows names a request is refused. Judge verdicts in the platform's `judgment` field are not imported (a
run's verdicts are the judges' stored judgments, `evaluation.judges`): their count is recorded and the
judges run from the run's results page. Everything happens in one transaction: a malformed file (named by
line or row, as `score` names it), a version that is not frozen, options the benchmark refuses, an empty
file or one with no answer leave nothing behind (`ImportRefused`). Rows are read as a stream and written in
batches of `BATCH` predictions. `check_import` and `check_upload_size` are the checks that need no file's
content (the model's name, a frozen version, the options, the platform's upload limit `MEDIA_MAX_UPLOAD_MB`):
a file uploaded to a page or the API is checked with them in the request, then imported by a background job
(`evaluation.prediction_import_jobs`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from django.core.exceptions import SuspiciousFileOperation
from django.db import transaction
from django.utils.text import get_valid_filename

from annotation.media import max_upload_bytes
from evaluation import kits, request_options, runner, runs, scoring
from evaluation.models import EvaluationRun, Prediction
from evaluation.request_exports import FORMAT_LABELS, FORMATS, PLATFORM_FORMAT
from generation import model_text

BATCH = 1000  # predictions per INSERT
MAX_SAMPLE = 32767  # the largest sample index a prediction holds (a small integer column)
MODEL_ID_LENGTH = EvaluationRun._meta.get_field("model_id").max_length
CHECKSUM_BLOCK = 1024 * 1024


class ImportRefused(ValueError):
    """The file or the options cannot be imported; nothing was written. The message says why."""


@dataclass
class ImportOptions:
    """How the requests the file answers were exported (as `manage.py export_requests` takes them)."""

    input_strategy: str = "default"
    prompting: str = "standard"
    seed: int = 0
    variants: tuple[str, ...] = ()
    option_order: str = "release"


@dataclass
class _Reading:
    """What was read of the file so far: rows, how they were joined and where their responses came from."""

    fmt: str
    joiner: kits.Joiner | None = None
    rows: int = 0
    responses_from: dict[str, int] = field(default_factory=dict)
    judgments: int = 0  # platform lines that carried a judge verdict (not imported)

    def report(self) -> dict:
        if self.joiner is not None:
            found = self.joiner.report
            return {"rows": found["rows"], "joined_by": found["joined_by"], "responses_from": found["responses_from"]}
        return {"rows": self.rows, "joined_by": {"request_id": self.rows}, "responses_from": dict(self.responses_from)}


def checksum(path: Path) -> tuple[str, int]:
    """("sha256:<hex>", size in bytes) of a file, read in blocks."""
    digest, size = hashlib.sha256(), 0
    with open(path, "rb") as handle:
        while block := handle.read(CHECKSUM_BLOCK):
            digest.update(block)
            size += len(block)
    return f"sha256:{digest.hexdigest()}", size


def detect_format(path: Path, fmt: str | None = None) -> str:
    """The format asked for, else the one told from the file (`kits.detect`), else the platform's JSON lines;
    ImportRefused for an unknown format or a file whose first line cannot be read."""
    try:
        fmt = fmt or kits.detect(path) or PLATFORM_FORMAT
    except kits.KitError as exc:
        raise ImportRefused(str(exc)) from None
    if fmt not in FORMATS:
        raise ImportRefused(f"Unknown predictions format {fmt!r}; known: {', '.join(FORMATS)}.")
    return fmt


def check_file(path: Path, fmt: str) -> None:
    """ImportRefused for a file that is no file of its kit's at all (`KitFormat.check`: the wrong type, a damaged
    workbook, not UTF-8 text), before a job reads its rows."""
    if fmt == PLATFORM_FORMAT:
        return
    try:
        kits.get(fmt).check(path)
    except kits.KitError as exc:
        raise ImportRefused(str(exc)) from None
    except OSError as exc:
        raise ImportRefused(f"Cannot read {path.name}: {exc.strerror}.") from None


def _predictions(path: Path, reading: _Reading, requests: list) -> Iterator[dict]:
    """The file's predictions (request id, response, sample, judgment) one at a time, kit rows joined to
    `requests` (in the export order) as `score` joins them."""
    if reading.fmt == PLATFORM_FORMAT:
        with open(path, encoding="utf-8") as lines:
            for prediction in scoring.iter_predictions(lines, source=path.name):
                reading.rows += 1
                source = "response" if prediction["response"] is not None else "none"
                reading.responses_from[source] = reading.responses_from.get(source, 0) + 1
                reading.judgments += prediction["judgment"] is not None
                yield prediction
        return
    kit = kits.get(reading.fmt)
    reading.joiner = kits.Joiner(kit, requests)
    for row in kit.rows(path):
        yield from reading.joiner.predictions(row)


def _prompt(request) -> list[dict]:
    """The request's prompt as the export gives it, in the shape of a stored prompt (media as placeholders)."""
    media = [{"type": medium.kind, "role": medium.role, "asset_id": medium.asset_id} for medium in request.media]
    return [{"role": "user", "content": [*media, {"type": "text", "text": request.prompt}]}]


class _Writer:
    """Writes a run's predictions in batches as they come, then a failed row per sample of every request left
    unanswered; counts what it wrote and what named no request."""

    def __init__(self, run: EvaluationRun, planned: list, source: str):
        self.run = run
        self.planned = {entry.request.request_id: entry for entry in planned}
        self.order = [entry.request.request_id for entry in planned]
        self.slug = run.version.benchmark.slug
        self.inputs = {"imported": {"file": source, "format": run.backend_options["format"]}}
        self.source = source
        self.batch: list[Prediction] = []
        self.seen: set[tuple[str, int]] = set()
        self.answered: set[str] = set()
        self.unknown: set[str] = set()
        self.written = 0
        self.failed = 0

    def add(self, prediction: dict) -> None:
        request_id, sample = prediction["request_id"], prediction.get("sample", 0)
        if (request_id, sample) in self.seen:
            raise ImportRefused(f"Two predictions for request {request_id!r} sample {sample}.")
        self.seen.add((request_id, sample))
        entry = self.planned.get(request_id)
        if entry is None:
            self.unknown.add(request_id)
            return
        if sample > MAX_SAMPLE:
            raise ImportRefused(f"Request {request_id!r}: sample {sample} is beyond the last one a run keeps "
                                f"({MAX_SAMPLE}).")
        request = entry.request
        response, removed = model_text.without_nul(prediction.get("response") or "")
        row = Prediction(run=self.run, request_id=request_id, sample_index=sample, item_id=entry.item_pk,
                         variant=request.variant, prompt=_prompt(request), inputs=self.inputs,
                         raw_output=response, params=model_text.noted({}, removed))
        self.batch.append(scoring.parse_prediction(row, request, self.slug))
        self.answered.add(request_id)
        self.written += 1
        if len(self.batch) >= BATCH:
            self.flush()

    def flush(self) -> None:
        Prediction.objects.bulk_create(self.batch)
        self.batch = []

    def unanswered(self) -> list[str]:
        return [request_id for request_id in self.order if request_id not in self.answered]

    def finish(self) -> None:
        """The failed rows of the requests the file does not answer, as the runner records a request that got
        no answer."""
        for request_id in self.unanswered():
            entry = self.planned[request_id]
            request = entry.request
            for sample in range(runner.samples_for(self.run, request)):
                self.batch.append(Prediction(run=self.run, request_id=request_id, sample_index=sample,
                                             item_id=entry.item_pk, variant=request.variant, prompt=_prompt(request),
                                             inputs=self.inputs, error=f"no answer in {self.source}"))
                self.failed += 1
                if len(self.batch) >= BATCH:
                    self.flush()
        self.flush()


def _refusal_without_answers(source: str, reading: _Reading, writer: _Writer, version) -> str:
    rows = reading.report()["rows"]
    if not rows:
        return f"{source} is empty: it holds no predictions."
    if writer.unknown:  # every answer it holds is for a request these options do not make
        shown = ", ".join(sorted(writer.unknown)[:3])
        return (f"No row of {source} names a request of {version} under these options (e.g. {shown}): check the "
                f"version, and give the options the requests were exported with.")
    return (f"No row of {source} holds an answer (is it the requests file as exported, before a model answered "
            f"it?).")


def _check_model(model_id: str) -> str:
    model_id = (model_id or "").strip()
    if not model_id:
        raise ImportRefused("Give the model's name: the imported run is listed under it.")
    if len(model_id) > MODEL_ID_LENGTH:
        raise ImportRefused(f"The model's name is {len(model_id)} characters long; at most {MODEL_ID_LENGTH}.")
    return model_id


def check_import(version, model_id: str, options: ImportOptions) -> tuple[str, tuple]:
    """The checks that need no file: the model's name (stripped) and the version's request options
    (`request_options.check`: benchmark, input strategy, prompting, option order, variants), for a frozen
    version; ImportRefused otherwise."""
    model_id = _check_model(model_id)
    if not version.frozen:
        raise ImportRefused(f"Version {version} is not frozen: predictions are imported for a frozen version only.")
    try:
        return model_id, request_options.check(
            version, input_strategy=options.input_strategy, prompting=options.prompting,
            option_order=options.option_order, variants=options.variants)
    except request_options.RunConfigError as exc:
        raise ImportRefused(str(exc)) from None


def import_run(version, path: Path | str, *, model_id: str, fmt: str | None = None,
               options: ImportOptions | None = None, user=None) -> EvaluationRun:
    """A succeeded run of backend `imported` on a frozen `version` holding the predictions of the file at
    `path` (format `fmt`, or told from the file), for the requests `options` make; ImportRefused (nothing
    written) for what cannot be imported. See the module docstring."""
    path = Path(path)
    options = options or ImportOptions()
    model_id, checked = check_import(version, model_id, options)
    benchmark, input_strategy, prompting, option_order, variants = (
        checked.benchmark, checked.input_strategy, checked.prompting, checked.option_order, checked.variants)
    fmt = detect_format(path, fmt)
    try:
        file_checksum, size = checksum(path)
    except OSError as exc:
        raise ImportRefused(f"Cannot read {path.name}: {exc.strerror}.") from None
    run = EvaluationRun(version=version, model_id=model_id, backend=runs.IMPORTED_BACKEND,
                        input_strategy=input_strategy, prompting=prompting, option_order=option_order,
                        seed=int(options.seed), variants=variants,
                        created_by=user if user is not None and user.pk else None,
                        backend_options={"file": path.name, "format": fmt, "checksum": file_checksum, "bytes": size})
    try:
        planned = runner.plan(run, benchmark)
    except ValueError as exc:
        raise ImportRefused(f"The version's requests cannot be made with these options: {exc}") from None
    if not planned:
        raise ImportRefused(f"No requests: {version} has no items for variants {', '.join(variants) or 'all'} under "
                            f"input strategy {input_strategy!r}.")
    reading = _Reading(fmt)
    with transaction.atomic():
        run.save()
        writer = _Writer(run, planned, path.name)
        try:
            for prediction in _predictions(path, reading, [entry.request for entry in planned]):
                writer.add(prediction)
        except UnicodeDecodeError:
            raise ImportRefused(f"{path.name}: not UTF-8 text.") from None
        except OSError as exc:
            raise ImportRefused(f"Cannot read {path.name}: {exc.strerror}.") from None
        except ValueError as exc:  # a malformed line or row (kits.KitError too), named by the reader
            raise ImportRefused(str(exc)) from None
        if not writer.answered:
            raise ImportRefused(_refusal_without_answers(path.name, reading, writer, version))
        writer.finish()
        unknown = sorted(writer.unknown)
        report = {**run.backend_options, "format_label": FORMAT_LABELS[fmt], **reading.report(),
                  "predictions": writer.written, "answered_requests": len(writer.answered),
                  "unanswered_requests": len(planned) - len(writer.answered), "unknown_requests": len(unknown),
                  "unknown_request_ids": unknown[:scoring.UNKNOWN_SHOWN]}
        if reading.judgments:
            report["judgments_not_imported"] = reading.judgments
        EvaluationRun.objects.filter(pk=run.pk).update(
            backend_options=report, total_requests=len(planned), total_predictions=writer.written + writer.failed,
            completed_predictions=writer.written, failed_predictions=writer.failed)
        runs.transition(run, EvaluationRun.Status.RUNNING, reason=f"Importing {path.name} ({FORMAT_LABELS[fmt]})",
                        by=user)
        runs.transition(run, EvaluationRun.Status.SUCCEEDED, by=user, reason=(
            f"Imported {writer.written} predictions of {len(writer.answered)} of {len(planned)} requests from "
            f"{path.name}; {report['unanswered_requests']} unanswered, {len(unknown)} unknown requests left out"))
    run.refresh_from_db()
    return run


def upload_name(name: str) -> str:
    """An uploaded file's own name (its extension tells a table from JSON lines), safe as a file name."""
    try:
        return get_valid_filename(Path(name or "").name)
    except SuspiciousFileOperation:  # "", "." or "..": nothing of the name is usable
        return "predictions"


def check_upload_size(upload) -> None:
    """ImportRefused when an uploaded file (a Django `UploadedFile`) is larger than the platform's upload limit."""
    limit = max_upload_bytes()
    if upload.size > limit:
        raise ImportRefused(f"{upload.name} is {upload.size:,} bytes; the limit is {limit // (1024 * 1024)} MB "
                            f"({limit:,} bytes).")


def summary(run: EvaluationRun) -> str:
    """One sentence on what an imported run holds, from its `backend_options`."""
    found = run.backend_options or {}
    text = (f"Imported {found.get('predictions', 0)} predictions from {found.get('file', '?')} "
            f"({found.get('format_label', found.get('format', '?'))}): {found.get('answered_requests', 0)} requests "
            f"answered, {found.get('unanswered_requests', 0)} without an answer (counted as missing)")
    if found.get("unknown_requests"):
        shown = ", ".join(found.get("unknown_request_ids", [])[:3])
        unknown = found["unknown_requests"]
        text += (f"; left out: answers to {unknown} request{'s' if unknown != 1 else ''} the version does not have "
                 f"under these options (e.g. {shown})")
    if found.get("judgments_not_imported"):
        text += (f"; {found['judgments_not_imported']} judge verdicts in the file were not imported (run the judge "
                 f"from the run's results page)")
    return text + "."
