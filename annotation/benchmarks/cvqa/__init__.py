"""C-VQA: its item payloads (`payload`), release importer (`importer`) and exporter (`exporter`)."""

from annotation.benchmarks.cvqa import exporter, importer
from annotation.benchmarks.cvqa.payload import PAYLOADS
from annotation.benchmarks.registry import BenchmarkDefinition, register


@register
class Cvqa(BenchmarkDefinition):
    slug = "cvqa"
    name = "C-VQA"
    description = "Counterfactual VQA on real and synthetic images."
    payloads = PAYLOADS
    importer = importer
    exporter = exporter
