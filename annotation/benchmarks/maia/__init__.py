"""MAIA: its item payloads (`payload`), release importer (`importer`), exporter (`exporter`), demo
items and studies (`demo`); the question-writing and answer-collection study kinds (`question_writing`,
`answer_collection`), the pool checks (`pool_checks`, whose reviews are people's decisions on the questions)
and their background job (`pool_check_job`), statement generation
(`statement_generation`, which registers its proposal kinds) and the statement checks' job
(`statement_checks`): all registered on import."""

from annotation import versions
from annotation.benchmarks.maia import (  # noqa: F401  (imported so that their kinds register)
    answer_collection,
    demo,
    exporter,
    importer,
    pool_check_job,
    pool_checks,
    question_writing,
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

    def human_decisions(self, version) -> list:
        return pool_checks.human_decisions(version)


versions.register_freeze_check(stages.freeze_check, phrase=stages.REFUSAL_PHRASE)
