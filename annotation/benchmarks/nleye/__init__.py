"""NL-EYE: its item payloads (`payload`), release importer (`importer`), exporter (`exporter`) and demo
items (`demo`); its curation pipeline: the scene-writing study kind (`scenes`, registered on import),
the stages of a triplet (`stages`), prompt augmentation (`prompts`, which registers the `nleye_prompts`
proposal kind) and the curation console's reads (`triplets`)."""

from annotation.benchmarks.nleye import demo, exporter, importer, prompts, scenes  # noqa: F401  (they register kinds)
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
