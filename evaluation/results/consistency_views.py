"""Consistency views of a run (computed when it is scored): items asked twice (`PairView`) and pools of
requests that count together (`PoolView`). Each benchmark declares its own views by name in its module
(`Benchmark.consistency_views`); `views_of(benchmark)` reads them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from evaluation import scoring
from evaluation.results.outcomes import CORRECT, Outcome
from evaluation.results.paths import display


def _rates(**rates) -> dict:
    """The rates, and `shown`: each as a percentage for the page."""
    return {**rates, "shown": {name: display(value, True) for name, value in rates.items()}}


@dataclass(frozen=True)
class PairView:
    """Each item asked twice (two sides, told apart by `side`): how often both, only one, or neither is
    right. `cells` keeps the item ids of each outcome for the drill-down."""

    title: str
    path: str  # the metric whose requests the view's cells narrow (drill-down)
    variants: tuple[str, ...]
    side: Callable
    sides: tuple
    side_labels: tuple[str, str]

    def compute(self, requests, outcomes: dict[str, Outcome]) -> dict:
        right: dict[str, dict] = {}
        for request in requests:
            if request.variant in self.variants:
                right.setdefault(request.item_id, {})[self.side(request)] = (
                    outcomes[request.request_id].status == CORRECT)
        first, second = self.sides
        cells: dict[str, list[str]] = {"both": [], "first_only": [], "second_only": [], "neither": []}
        for item_id, found in sorted(right.items()):
            a, b = found.get(first, False), found.get(second, False)
            cells["both" if a and b else "first_only" if a else "second_only" if b else "neither"].append(item_id)
        n = len(right)
        counts = {name: len(ids) for name, ids in cells.items()}
        return {"kind": "pairs", "title": self.title, "path": self.path, "labels": list(self.side_labels), "n": n,
                "counts": counts, "cells": cells,
                **_rates(first_accuracy=scoring.fraction(counts["both"] + counts["first_only"], n),
                         second_accuracy=scoring.fraction(counts["both"] + counts["second_only"], n),
                         both_accuracy=scoring.fraction(counts["both"], n))}


@dataclass(frozen=True)
class PoolView:
    """Pools of requests that count together (MAIA: the eight statement pairs of a question): the
    independent accuracy, the pool accuracy, and how many pools have k of their requests right."""

    title: str
    path: str
    variants: tuple[str, ...]
    pool: Callable

    def compute(self, requests, outcomes: dict[str, Outcome]) -> dict:
        pools: dict[str, list[bool]] = {}
        for request in requests:
            if request.variant in self.variants:
                pools.setdefault(self.pool(request), []).append(outcomes[request.request_id].status == CORRECT)
        size = max((len(found) for found in pools.values()), default=0)
        cells: dict[str, list[str]] = {str(k): [] for k in range(size + 1)}
        for pool, found in sorted(pools.items()):
            cells[str(sum(found))].append(pool)
        pairs = sum(len(found) for found in pools.values())
        return {"kind": "pools", "title": self.title, "path": self.path, "n": len(pools), "pairs": pairs, "size": size,
                "cells": cells, "counts": {k: len(ids) for k, ids in cells.items()},
                **_rates(independent_accuracy=scoring.fraction(sum(sum(found) for found in pools.values()), pairs),
                         pool_accuracy=scoring.fraction(sum(all(found) for found in pools.values()), len(pools)))}


def views_of(benchmark) -> dict[str, PairView | PoolView]:
    """The benchmark's consistency views, by name ({} when it declares none)."""
    return dict(getattr(benchmark, "consistency_views", None) or {})
