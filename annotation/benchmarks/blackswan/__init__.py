"""BlackSwanSuite: its item payloads (`payload`), release importer (`importer`), exporter (`exporter`) and
demo items and studies (`demo`); the reviews of the staged claims a version was built from, as people's decisions on its
items (`reviews`). Its curation workflows: splitting library videos into the parts its tasks reveal in stages
(`splits`, the split job; `timeline`, the curator's split timeline), the staged reveal (`staged`, the
`blackswan_staged` study kind, with `staged_serializers` for its API and `reveal_guard`, the media veto and
claim check that keep a staged step's outcome from the worker everywhere else), the localization study
(`localization`, `localization_study`), the +P/+PC captions study (`caption_study`), the data quality study
(`quality_study`), the task variants built from the annotations (`variants`) and their build job and frozen
versions (`versions`); `selectors` reads its studies for the pages. Importing the package registers its study
kinds, jobs and the reveal guard."""

from django.urls import reverse

from annotation.benchmarks.blackswan import (  # noqa: F401  (they register study kinds, jobs and the reveal guard)  # noqa: F401  (staged_kind registers its study kind)
    caption_study,
    demo,
    exporter,
    importer,
    localization_study,
    reveal_guard,
    reviews,
    splits,
    staged_api,
    staged_kind,
    versions,
)
from annotation.benchmarks.blackswan.payload import PAYLOADS
from annotation.benchmarks.registry import BenchmarkDefinition, register


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

    def video_links(self, video) -> list[tuple[str, str]]:
        return [("Split for BlackSwanSuite", reverse("video-split", kwargs={"pk": video.pk}))]

    def demo_studies(self, curator, say=lambda line: None) -> list:
        return demo.demo_studies(curator, say)

    def human_decisions(self, version) -> list:
        return reviews.human_decisions(version)
