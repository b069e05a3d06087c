"""The registry of how each benchmark is evaluated: one package per benchmark (see `base`).

Each benchmark's package `evaluation/benchmarks/<slug>/` holds its `benchmark` module, which declares a
`Benchmark` subclass (its variants, the requests it makes of a model, its scorer, parsers, metric labels
and series, drill-down rules, consistency views, and the judges, baselines and human evaluations it
supports) and registers it with `register`, as a class decorator (`@register`) or on an instance
(`BENCHMARK = register(NleyeBenchmark())`), beside its judge (`judge`) and its human-evaluation study
kinds, each of which registers itself too. A benchmark not moved into a package yet is a single module,
`evaluation/benchmarks/<slug>.py`. `EvaluationConfig.ready` imports every module of every package here,
and every single module (`discover`), so a new benchmark is a new package and nothing else; a package's
`__init__` stays small and imports nothing (the generic judges still import a benchmark's `judge`
module, which must not pull the whole package in). Code outside the package (a test's toy benchmark)
registers the same way.

`get(slug)` gives the registered benchmark (KeyError naming the known ones for any other slug),
`slugs()` the registered slugs in alphabetical order, `registered()` the benchmarks themselves.
Every list of benchmarks in the evaluation layer (command choices and help, admin filters, results
pages) reads these.
"""

from __future__ import annotations

import pkgutil
from importlib import import_module

from evaluation.benchmarks.base import Benchmark

_REGISTRY: dict[str, Benchmark] = {}
SUPPORT_MODULES = frozenset({"base"})  # modules of the package that declare no benchmark


def register(benchmark):
    """Register a `Benchmark` instance, or a `Benchmark` subclass (an instance of it is made), under its
    slug; returns what it was given, so that it works as a class decorator. Registering a second,
    different benchmark under a slug that is taken is refused (ValueError); registering the same class
    again (a module imported twice) replaces the first."""
    instance = benchmark() if isinstance(benchmark, type) else benchmark
    if not isinstance(instance, Benchmark):
        raise TypeError(f"Only Benchmark subclasses can be registered (got {benchmark!r}).")
    slug = instance.slug
    if not slug:
        raise ValueError(f"{type(instance).__name__} has no slug.")
    found = _REGISTRY.get(slug)
    if found is not None and type(found).__qualname__ != type(instance).__qualname__:
        raise ValueError(f"Benchmark {slug!r} is already registered by {type(found).__module__}.")
    _REGISTRY[slug] = instance
    return benchmark


def unregister(slug: str) -> None:
    """Forget a registered benchmark (nothing happens for an unknown slug)."""
    _REGISTRY.pop(slug, None)


def get(slug: str) -> Benchmark:
    """The registered benchmark `slug`; KeyError with the known slugs for any other."""
    try:
        return _REGISTRY[slug]
    except (KeyError, TypeError):
        raise KeyError(f"Unknown benchmark {slug!r}; known: {', '.join(slugs()) or 'none'}.") from None


def find(slug: str) -> Benchmark | None:
    """The registered benchmark `slug`, or None (through `get`, so that replacing `get` takes effect)."""
    try:
        return get(slug)
    except KeyError:
        return None


def slugs() -> tuple[str, ...]:
    return tuple(sorted(_REGISTRY))


def registered() -> list[Benchmark]:
    """The registered benchmarks, by slug."""
    return [_REGISTRY[slug] for slug in slugs()]


def supporting(attribute: str, name: str) -> list[str]:
    """The slugs of the registered benchmarks whose `attribute` (judge_kinds, baselines,
    human_evaluations) names `name`."""
    return [benchmark.slug for benchmark in registered() if name in getattr(benchmark, attribute)]


def discover() -> list[str]:
    """Import every benchmark of this package: each module of a benchmark's package, or its single module
    (each registers what it declares); the benchmarks' names."""
    found = [info for info in pkgutil.iter_modules(__path__)
             if info.name not in SUPPORT_MODULES and not info.name.startswith("_")]
    for info in found:
        module = import_module(f"{__name__}.{info.name}")
        if info.ispkg:
            for inner in pkgutil.iter_modules(module.__path__):
                if not inner.name.startswith("_"):
                    import_module(f"{module.__name__}.{inner.name}")
    return [info.name for info in found]
