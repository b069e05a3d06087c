"""BlackSwanSuite: its item payloads (`payload`), release importer (`importer`) and exporter (`exporter`)."""

from annotation.benchmarks.blackswan import exporter, importer
from annotation.benchmarks.blackswan.payload import PAYLOADS
from annotation.benchmarks.registry import BenchmarkDefinition, register


@register
class BlackSwan(BenchmarkDefinition):
    slug = "blackswan"
    name = "BlackSwanSuite"
    description = "Staged video reveal: Forecaster, Detective, Reporter (abductive and defeasible reasoning)."
    payloads = PAYLOADS

    def read(self, root, problems):
        return importer.read(root, problems)

    def check_media_facts(self, spec, facts, problems):
        importer.check_media_facts(spec, facts, problems)

    def write(self, items, writer):
        exporter.write(items, writer)
