"""MAIA: its item payloads (`payload`), release importer (`importer`), exporter (`exporter`) and demo
items (`demo`)."""

from annotation import versions
from annotation.benchmarks.maia import answer_collection, demo, exporter, importer, stages
from annotation.benchmarks.maia.payload import PAYLOADS
from annotation.benchmarks.registry import BenchmarkDefinition, register


@register
class Maia(BenchmarkDefinition):
    slug = "maia"
    name = "MAIA"
    description = "Italian video statement verification and open-ended QA, aggregate accuracy."
    payloads = PAYLOADS
    importer = importer
    exporter = exporter
    demo = demo
    layouts = exporter.LAYOUTS


versions.register_freeze_check(stages.freeze_check, phrase=stages.REFUSAL_PHRASE)
