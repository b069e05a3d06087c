"""BlackSwanSuite: its item payloads (`payload`), release importer (`importer`), exporter (`exporter`) and
demo items (`demo`); the reviews of the staged claims a version was built from, as people's decisions on its
items (`reviews`)."""

from annotation.benchmarks.blackswan import demo, exporter, importer, reviews
from annotation.benchmarks.blackswan.payload import PAYLOADS
from annotation.benchmarks.registry import BenchmarkDefinition, register
from annotation.blackswan import staged_api, staged_kind  # noqa: F401  (staged_kind registers its study kind)


@register
class BlackSwan(BenchmarkDefinition):
    slug = "blackswan"
    name = "BlackSwanSuite"
    description = "Staged video reveal: Forecaster, Detective, Reporter (abductive and defeasible reasoning)."
    payloads = PAYLOADS
    importer = importer
    exporter = exporter
    demo = demo
    api = staged_api

    def human_decisions(self, version) -> list:
        return reviews.human_decisions(version)
