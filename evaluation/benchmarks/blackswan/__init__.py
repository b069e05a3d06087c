"""BlackSwanSuite in the evaluation layer: how it is evaluated (`benchmark`: variants, requests, parts of
the split shown per task, prompting with +P/+PC captions, parsers, scoring with CLIP score and LLM-Match,
metric labels and series, the hard subset, human performance) and its LLM judge of open answers (`judge`,
the judge kind `llm_match`). `evaluation.benchmarks.discover` imports each of these modules, and each
registers what it declares."""
