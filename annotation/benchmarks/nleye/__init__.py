"""NL-EYE: its item payloads (`payload`), release importer (`importer`), exporter (`exporter`) and demo
items (`demo`)."""

from annotation.benchmarks.nleye import demo, exporter, importer
from annotation.benchmarks.nleye.payload import PAYLOADS
from annotation.benchmarks.registry import BenchmarkDefinition, register


@register
class NlEye(BenchmarkDefinition):
    slug = "nleye"
    name = "NL-EYE"
    description = "Image triplets for abductive NLI, with explanation voting."
    payloads = PAYLOADS
    importer = importer
    exporter = exporter
    demo = demo
    image_slots = ("premise", "hypothesis1", "hypothesis2")  # one generated image per scene (App. E.1)
