"""C-VQA in the evaluation layer: how it is evaluated (`benchmark`: the original and counterfactual variants,
requests, the authors' answer parser, scoring with the drop per group, template and subgroup, metric labels
and series). `evaluation.benchmarks.discover` imports it, and it registers what it declares."""
