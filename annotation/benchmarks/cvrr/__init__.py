"""CVRR-ES: its item payloads (`payload`), release importer (`importer`), exporter (`exporter`) and
demo items (`demo`); its curation pipeline: the stages of a video and a QA pair (`stages`) and the expert
assessment of QA pairs (`expert_study`, which registers its study kind; `expert_sample`, `expert_report`,
`expert_group`)."""

from annotation.benchmarks.cvrr import demo, expert_study, exporter, importer  # noqa: F401  (expert_study: registers a kind)
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
