"""NL-EYE: its item payloads (`payload`), release importer (`importer`), exporter (`exporter`), demo
items (`demo`) and the scene-writing study kind (`scenes`, registered on import)."""

from annotation.benchmarks.nleye import demo, exporter, importer, scenes  # noqa: F401 (scenes registers its kind)
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
