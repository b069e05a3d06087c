"""MAIA: its item payloads (`payload`), release importer (`importer`), exporter (`exporter`) and demo
items (`demo`); statement generation (`statement_generation`, which registers its proposal kinds) and
the statement checks' job (`statement_checks`)."""

from annotation import versions
from annotation.benchmarks.maia import (  # noqa: F401  (statement_generation, statement_checks: they register kinds)
    demo,
    exporter,
    importer,
    stages,
    statement_checks,
    statement_generation,
)
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
