"""NL-EYE: its item payloads (`payload`), release importer (`importer`), exporter (`exporter`) and demo
items (`demo`); the curation's explanation (`explanation`) and validation (`validation`), whose freeze
check keeps a curated version from being frozen before every triplet is validated."""

from django.urls import reverse

from annotation import versions
from annotation.benchmarks.nleye import demo, exporter, importer, validation
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

    def version_links(self, version) -> list[tuple[str, str]]:
        if not validation.is_gated(version):
            return []
        return [("Validation of the triplets", reverse("nleye-validation-state", kwargs={"pk": version.pk}))]


versions.register_freeze_check(validation.freeze_check, phrase=validation.REFUSAL_PHRASE)
