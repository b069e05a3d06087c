"""Metrics that need a scoring model, kept with their run: BlackSwan's CLIP score and MAIA's BERTScore
are computed only by `manage.py score --run RUN_ID --clip-model/--bertscore-model` (results pages do
not load models), so `store` keeps what that computed (`RunModelMetric`: model id, parser, time) and
`overlay` puts it back into the run's metrics wherever the results pages score the run.

A stored value is shown only while the run's predictions are those it was computed from
(`predictions_state`); after the run gained or replaced predictions the metric reads "not computed"
with the reason, until `score --run` computes it again.
"""

from __future__ import annotations

from django.db.models import Count, Max

from evaluation import scoring
from evaluation.models import EvaluationRun, RunModelMetric

# scoring model → the metric names (last path segment) it produces
KEYS: dict[str, tuple[str, ...]] = {
    "clip": ("clip_score", "clip_score_all_pairs"),
    "bertscore": ("bertscore", "bertscore_model"),
}


def predictions_state(run: EvaluationRun) -> str:
    stats = run.predictions.aggregate(n=Count("id"), last=Max("id"), at=Max("created_at"))
    return f"{stats['n']}|{stats['last']}|{stats['at'].isoformat() if stats['at'] else '-'}"


def extract(metrics: dict, kind: str, prefix: str = "") -> dict:
    """metric path → value of every computed metric of `kind` in a run's metrics."""
    found = {}
    for key, value in metrics.items():
        path = f"{prefix}.{key}" if prefix else str(key)
        if key in KEYS[kind]:
            if not scoring.is_not_computed(value) and value is not None:
                found[path] = value
        elif isinstance(value, dict) and not scoring.is_not_computed(value):
            found.update(extract(value, kind, path))
    return found


def store(run: EvaluationRun, metrics: dict, models: dict[str, str], parser: str) -> list[RunModelMetric]:
    """Keep the model metrics `score --run` computed (`models`: kind → model id used) with the run."""
    state = predictions_state(run)
    stored = []
    for kind, model_id in models.items():
        values = extract(metrics, kind) if kind in KEYS and model_id else {}
        if values:
            row, _ = RunModelMetric.objects.update_or_create(
                run=run, kind=kind, defaults={"model_id": model_id, "parser": parser, "values": values,
                                              "predictions_state": state})
            stored.append(row)
    return stored


def put(metrics: dict, path: str, value) -> bool:
    """Set the metric at a dotted path in place (False when its parent is not there)."""
    return _set(metrics, path, value)


def _set(metrics: dict, path: str, value) -> bool:
    *parents, last = path.split(".")
    node = metrics
    for key in parents:
        node = node.get(key) if isinstance(node, dict) else None
    if not isinstance(node, dict):
        return False
    node[last] = value
    return True


def overlay(run: EvaluationRun, metrics: dict) -> list[dict]:
    """Put the run's stored model metrics into `metrics` (in place); what was used, for the pages."""
    rows = list(RunModelMetric.objects.filter(run=run))
    if not rows:
        return []
    state = predictions_state(run)
    used = []
    for row in rows:
        current = row.predictions_state == state
        stale = scoring.not_computed(
            f"{row.kind} ({row.model_id}) was computed on {row.computed_at:%Y-%m-%d %H:%M} before the run's "
            f"predictions changed; run `manage.py score --run {run.pk} --{row.kind}-model …` again")
        for path, value in row.values.items():
            if current:
                _set(metrics, path, value)
            elif not path.endswith("_model"):
                _set(metrics, path, stale)
        used.append({"kind": row.kind, "model": row.model_id, "parser": row.parser,
                     "computed_at": row.computed_at.isoformat(), "current": current})
    return used
