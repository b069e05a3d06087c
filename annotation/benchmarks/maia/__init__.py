"""MAIA: its item payloads (`payload`), release importer (`importer`) and exporter (`exporter`)."""

from annotation.benchmarks.maia import exporter, importer
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
