"""MAIA in the evaluation layer: how it is evaluated (`benchmark`: the `vsv` and `oevqa` variants, their
requests, scoring per category and macro-category, metric labels and series, the pool view) and its LLM
judge of open answers (`judge`, the judge kind `maia`). `evaluation.benchmarks.discover` imports each of
these modules, and each registers what it declares."""
