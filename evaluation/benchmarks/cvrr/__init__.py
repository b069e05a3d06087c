"""CVRR-ES in the evaluation layer: how it is evaluated (`benchmark`: the `qa` variant, requests, prompting
strategies, dimensions, scoring, metric labels and series) and its LLM judge (`judge`, the judge kind `cvrr`).
`evaluation.benchmarks.discover` imports each of these modules, and each registers what it declares."""
