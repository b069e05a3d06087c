"""The rows every kit format writes, in the export order: a version's requests (`version_rows`, as
`manage.py export_requests` makes them) and a stored run's predictions (`run_rows`) with their gold and
whether each is right, as the run's results score it.

A row's `position` is the request's place in that order: the kits' own row key (lmms-eval's `doc_id`,
VLMEvalKit's `index`). `correct` is the scorer's reading of the first response (`evaluation.results`
outcomes, under the default parser, with the run's stored judgments) by `results.right_or_wrong`, the
rule the predictions export shares: True or False for answers that are right or wrong (an unparsed or empty
answer is wrong), None where the metric is not a plain right/wrong (ratings, open answers no judge verdict
calls right or wrong)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from evaluation import benchmarks, request_records, results, runner, scoring
from evaluation.benchmarks.base import EvalRequest


@dataclass(frozen=True)
class RequestRow:
    position: int  # in the export order
    request: EvalRequest
    line: dict  # what `manage.py export_requests` writes for it (`request_records.request_line`)
    category: str = ""  # the benchmark's category of the request (`Benchmark.request_category`), if any


@dataclass(frozen=True)
class PredictionRow(RequestRow):
    responses: tuple[str, ...] = ()  # the raw outputs, in sample order
    parsed: Any = None  # the scorer's reading of the first response
    outcome: str = ""  # how the first response was scored (`evaluation.results.OUTCOMES`)
    correct: bool | None = None


def version_rows(version, options, variants, setting: dict) -> Iterator[RequestRow]:
    """The requests of a frozen version under `options` (a `RequestOptions`) and `variants`, in the export
    order; `setting` is what every line carries about how the requests are asked. ValueError for options
    the benchmark refuses."""
    benchmark = benchmarks.get(version.benchmark.slug)
    position = 0
    for item, requests in scoring.item_requests(version, options, variants):
        assets = request_records.item_assets(item)
        for request in requests:
            yield RequestRow(position, request, request_records.request_line(request, assets, setting),
                             benchmark.request_category(request))
            position += 1


def run_setting(run) -> dict:
    return {"input": run.input_strategy, "prompting": run.prompting, "frames": results.frame_text(run),
            "seed": run.seed, "option_order": run.option_order}


def run_rows(run) -> list[PredictionRow]:
    """The answered requests of a stored run, in its plan order (positions count every planned request);
    ValueError when the run cannot be scored. Requests without an answer (missing, or failed) have no row."""
    scored = results.run_results(run)
    if not scored.ok:
        raise ValueError(scored.error)
    benchmark = benchmarks.get(run.version.benchmark.slug)
    planned = runner.plan(run, benchmark)
    items = {item.pk: item for item in run.version.items.prefetch_related("media__video", "media__image")}
    answers: dict[str, list[str]] = {}
    for request_id, text in (run.predictions.filter(error="").order_by("request_id", "sample_index")
                             .values_list("request_id", "raw_output")):
        answers.setdefault(request_id, []).append(text)
    setting = run_setting(run)
    rows = []
    for entry in planned:
        request = entry.request
        given = answers.get(request.request_id)
        if not given:
            continue
        found = scored.outcomes.get(request.request_id) or results.Outcome(results.MISSING)
        line = request_records.request_line(request, request_records.item_assets(items[entry.item_pk]), setting)
        rows.append(PredictionRow(entry.position, request, line, benchmark.request_category(request),
                                  responses=tuple(given), parsed=found.value, outcome=found.status,
                                  correct=results.right_or_wrong(found.status)))
    return rows
