"""NL-EYE: its item payloads (`payload`), release importer (`importer`), exporter (`exporter`), demo
items (`demo`) and the API of its triplets under curation (`api`); its curation pipeline: the
scene-writing study kind (`scenes`, registered on import), the stages of a triplet (`stages`), prompt
augmentation (`prompts`, which registers the `nleye_prompts` proposal kind), the curation console's
reads (`triplets`), the explanation and categorization (`explanation`) and the validation
(`validation`), whose freeze check keeps a pool from being frozen before every triplet is validated and
whose checks are people's decisions on the triplets."""

from django.urls import reverse

from annotation import versions
from annotation.benchmarks.nleye import api, demo, exporter, importer, prompts, scenes, validation  # noqa: F401  (prompts, scenes: they register kinds)
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
    api = api
    image_slots = ("premise", "hypothesis1", "hypothesis2")  # one generated image per scene (App. E.1)

    def version_links(self, version) -> list[tuple[str, str]]:
        if not validation.is_gated(version):
            return []
        return [("Validation of the triplets", reverse("nleye-validation-state", kwargs={"pk": version.pk}))]

    def human_decisions(self, version) -> list:
        return validation.human_decisions(version)


versions.register_freeze_check(validation.freeze_check, phrase=validation.REFUSAL_PHRASE)
