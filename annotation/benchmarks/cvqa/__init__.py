"""C-VQA: its item payloads (`payload`), release importer (`importer`) and exporter (`exporter`); source
questions under curation (`sources`, never frozen: its freeze check is registered here) and the images'
subgroup labels for the bias analysis (`subgroups`)."""

from django.urls import reverse

from annotation import versions
from annotation.benchmarks.cvqa import exporter, importer, sources
from annotation.benchmarks.cvqa.payload import PAYLOADS
from annotation.benchmarks.registry import BenchmarkDefinition, register


@register
class Cvqa(BenchmarkDefinition):
    slug = "cvqa"
    name = "C-VQA"
    description = "Counterfactual VQA on real and synthetic images."
    payloads = PAYLOADS
    importer = importer
    exporter = exporter

    def version_links(self, version) -> list[tuple[str, str]]:
        links = [("Subgroup labels of the images", reverse("cvqa-subgroups"))]
        if version.items.filter(payload__kind="source").exists():
            links.insert(0, ("Source questions", reverse("cvqa-sources")))
        return links


versions.register_freeze_check(sources.freeze_check, phrase=sources.REFUSAL_PHRASE)
