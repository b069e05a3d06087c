"""One module per benchmark: its variants and the requests it makes of a model (see `base`).

`get("nleye")` imports `evaluation.benchmarks.nleye` and returns its `BENCHMARK`.
"""

from importlib import import_module

SLUGS = ("blackswan", "cvqa", "nleye", "cvrr", "maia")


def get(slug: str):
    if slug not in SLUGS:
        raise KeyError(f"Unknown benchmark {slug!r}; known: {', '.join(SLUGS)}.")
    return import_module(f"evaluation.benchmarks.{slug}").BENCHMARK
