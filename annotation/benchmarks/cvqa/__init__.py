"""C-VQA: its item payloads (`payload`), release importer (`importer`) and exporter (`exporter`); source
questions under curation (`sources`, never frozen: its freeze check is registered here) and the images'
subgroup labels for the bias analysis (`subgroups`); counterfactual proposals (`counterfactual_generation`,
which registers its proposal kind, with the groups' examples in `counterfactual_groups`) and the
counterfactual items they and curators write (`counterfactuals`, whose freeze check waits for
verification); the two-person verification study kind (`verification`, which also reads people's decisions
on the items); the grammar pass over counterfactual questions (`grammar`, which registers its proposal kind);
the demo's synthetic version and verification study (`demo`)."""

from django.urls import reverse

from annotation import versions
from annotation.benchmarks.cvqa import (  # noqa: F401  (imported so that its proposal kind registers)
    counterfactual_generation,
    counterfactuals,
    demo,
    exporter,
    grammar,
    importer,
    sources,
    verification,
)
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
    demo = demo

    def version_links(self, version) -> list[tuple[str, str]]:
        links = [("Subgroup labels of the images", reverse("cvqa-subgroups"))]
        if version.items.filter(payload__kind="source").exists():
            links[:0] = [("Source questions", reverse("cvqa-sources")),
                         ("Counterfactuals", reverse("cvqa-counterfactual-console", kwargs={"version_id": version.pk}))]
        elif grammar.holds_counterfactuals(version):
            if not version.frozen:
                links[:0] = [("Verification", reverse("cvqa-verification-version", kwargs={"version_id": version.pk}))]
            links.append(("Grammar pass", reverse("cvqa-grammar-console", kwargs={"version_id": version.pk})))
        return links

    def human_decisions(self, version) -> list:
        return verification.human_decisions(version)


versions.register_freeze_check(sources.freeze_check, phrase=sources.REFUSAL_PHRASE)
versions.register_freeze_check(counterfactuals.freeze_check, phrase=counterfactuals.REFUSAL_PHRASE)
