"""Paths into a run's metrics (`triplet.consistency_accuracy`), how a metric is shown, and its `Cell`."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from evaluation import scoring


def split_path(path: str) -> list[str]:
    return [part for part in (path or "").split(".") if part]


def lookup(metrics: dict, path: str, default=None):
    node: Any = metrics
    for part in split_path(path):
        if not isinstance(node, dict) or part not in node:
            return default
        node = node[part]
    return node


_ABSENT = object()


def resolve(metrics: dict, path: str):
    """The metric at `path`; a not-computed block on the way stands for every metric below it (the
    scorer writes `{"computed": false}` in place of a whole group); _ABSENT when there is none."""
    node: Any = metrics
    for part in split_path(path):
        if scoring.is_not_computed(node):
            return node
        if not isinstance(node, dict) or part not in node:
            return _ABSENT
        node = node[part]
    return node


def is_leaf(value) -> bool:
    """A number, an empty rate (None) or a metric that was not computed."""
    return (value is None or scoring.is_not_computed(value)
            or (isinstance(value, int | float) and not isinstance(value, bool)))


def leaves(metrics: dict, prefix: str = "") -> list[tuple[str, Any]]:
    """(path, value) of every metric leaf, depth first in the scorer's order."""
    found = []
    for key, value in metrics.items():
        path = f"{prefix}.{key}" if prefix else str(key)
        if scoring.is_not_computed(value) or not isinstance(value, dict):
            if is_leaf(value):
                found.append((path, value))
        else:
            found.extend(leaves(value, path))
    return found


RATE_NAMES = ("drop", "diff", "gap", "hard_minus_easy")
SHARE_PARENTS = ("option_distribution", "gold_distribution")


def is_rate(path: str) -> bool:
    """Whether a metric is a fraction (shown as a percentage): accuracies, rates, drops, shares."""
    parts = split_path(path)
    if not parts:
        return False
    name = parts[-1]
    return (name.endswith("accuracy") or name.endswith("_rate") or name in RATE_NAMES
            or (len(parts) > 1 and parts[-2] in SHARE_PARENTS and name != "n"))


def display(value, rate: bool) -> str:
    if scoring.is_not_computed(value):
        return "not computed"
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return str(value)
    if rate:
        return f"{100 * value:.1f}%"
    return f"{value:.3f}"


def group_n(metrics: dict, path: str, n_key: str = "n"):
    """The count of the metric's nearest group: `n_key` next to it, else the closest `n` above it."""
    parts = split_path(path)
    candidate = lookup(metrics, ".".join([*parts[:-1], n_key]), _ABSENT)
    if isinstance(candidate, int) and not isinstance(candidate, bool):
        return candidate
    for depth in range(len(parts) - 1, -1, -1):
        found = lookup(metrics, ".".join([*parts[:depth], "n"]), _ABSENT)
        if isinstance(found, int) and not isinstance(found, bool):
            return found
    return None



@dataclass
class Cell:
    path: str
    value: Any
    n: int | None
    display: str
    present: bool  # the run has this metric at all (a run limited to some variants may not)
    computed: bool
    reason: str = ""


def cell(metrics: dict, path: str, *, rate: bool, n_key: str = "n") -> Cell:
    value = resolve(metrics, path)
    if value is _ABSENT or not is_leaf(value):
        return Cell(path, None, None, "—", present=False, computed=False)
    computed = not scoring.is_not_computed(value)
    return Cell(path, value if computed else None, group_n(metrics, path, n_key), display(value, rate),
                present=True, computed=computed, reason="" if computed else value.get("reason", ""))



def flat_metrics(metrics: dict) -> list[Cell]:
    """Every metric leaf of a run (the `predictions` summary aside), with its display and n."""
    return [cell(metrics, path, rate=is_rate(path)) for path, _ in leaves(metrics)
            if split_path(path)[:1] != ["predictions"]]
