"""Stored readings of a run's predictions: `Prediction.parses` keeps every parser's reading by name
(`parsed_answer` / `parse_status` hold the default parser's). Scoring a run with a parser
(`manage.py score --run … --parser NAME`) stores that parser's reading beside the others, and fills
the default reading of predictions written before readings were stored."""

from __future__ import annotations

from evaluation import named_parsers, scoring
from evaluation.models import EvaluationRun, Prediction

BATCH = 500


def store_readings(run: EvaluationRun, requests, parser: str = named_parsers.DEFAULT) -> int:
    """Store `parser`'s (and the default parser's) reading on each answered prediction of the run whose
    requests are given; the number of predictions whose stored readings changed."""
    by_id = {request.request_id: request for request in requests}
    slug = run.version.benchmark.slug
    changed = []
    rows = run.predictions.filter(error="").only(
        "id", "request_id", "raw_output", "parsed_answer", "parse_status", "parses", "error")
    for prediction in rows.iterator(chunk_size=BATCH):
        if prediction.request_id not in by_id:
            continue
        before = (dict(prediction.parses or {}), prediction.parsed_answer, prediction.parse_status)
        scoring.parse_prediction(prediction, by_id[prediction.request_id], slug, (parser,))
        if (prediction.parses, prediction.parsed_answer, prediction.parse_status) != before:
            changed.append(prediction)
    Prediction.objects.bulk_update(changed, ["parses", "parsed_answer", "parse_status"], batch_size=BATCH)
    return len(changed)
