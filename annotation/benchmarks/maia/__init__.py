"""MAIA: its item payloads (`payload`), release importer (`importer`), exporter (`exporter`), demo
items and studies (`demo`) and the question-writing study kind (`question_writing`, registered on
import)."""

from annotation import versions
from annotation.benchmarks.maia import (  # noqa: F401  (question_writing registers its kind)
    demo,
    exporter,
    importer,
    question_writing,
    stages,
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
