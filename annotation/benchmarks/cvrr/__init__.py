"""CVRR-ES: its item payloads (`payload`), release importer (`importer`), exporter (`exporter`) and
demo items (`demo`)."""

from annotation.benchmarks.cvrr import demo, exporter, importer
from annotation.benchmarks.cvrr.payload import PAYLOADS
from annotation.benchmarks.registry import BenchmarkDefinition, register


@register
class CvrrEs(BenchmarkDefinition):
    slug = "cvrr"
    name = "CVRR-ES"
    description = "Open-ended video QA across 11 dimensions, with an LLM judge and DSCP prompting."
    payloads = PAYLOADS
    importer = importer
    exporter = exporter
    demo = demo
