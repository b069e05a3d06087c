"""CVRR-ES: its item payloads (`payload`), release importer (`importer`), exporter (`exporter`) and
demo items (`demo`); its curation: the stages (`stages`), QA generation from the chosen captions
(`qa_generation`, which registers the `cvrr_qa` proposal kind), the filtration study (`filtration`,
which registers the `cvrr_filtration` study kind), the QA pool the kept pairs join (`qa_pool`) and the
noise report of the filtration (`noise_report`)."""

from annotation.benchmarks.cvrr import demo, exporter, filtration, importer, qa_generation  # noqa: F401  (filtration, qa_generation: they register kinds)
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
