"""NL-EYE in the evaluation layer: how it is evaluated (`benchmark`: variants, requests, parsers, scoring,
metric labels and series, failure factors), its LLM judge of explanations (`judge`, the judge kind
`nleye_explanation`) and its human evaluation (`explanation_votes`, the explanation-vote study kind).
`evaluation.benchmarks.discover` imports each of these modules, and each registers what it declares."""
