"""CVRR-ES: its item payloads (`payload`), release importer (`importer`), exporter (`exporter`) and
demo items (`demo`); its curation pipeline (seeds/003 §3.2): the dimensions as data (`dimensions`,
`dimension_records`), the video pool and videos assigned to dimensions (`pools`, `video_pool`), the
captioning study kind (`captions`, registered on import), the caption used for QA generation
(`caption_choice`), QA generation from the chosen captions (`qa_generation`, which registers the
`cvrr_qa` proposal kind), the filtration study (`filtration`, which registers the `cvrr_filtration`
study kind), the QA pool the kept pairs join (`qa_pool`, which also reads people's decisions on them),
the noise report of the filtration (`noise_report`), the expert assessment of QA pairs (`expert_study`,
which registers its study kind; `expert_sample`, `expert_report`, `expert_group`) and the stages of an item
(`stages`)."""

from django.urls import reverse

from annotation.benchmarks.cvrr import (  # noqa: F401  (captions, expert_study, filtration, qa_generation: they register kinds)
    captions,
    demo,
    expert_study,
    exporter,
    filtration,
    importer,
    qa_generation,
    qa_pool,
)
from annotation.benchmarks.cvrr.payload import PAYLOADS
from annotation.benchmarks.cvrr.pools import VIDEO_POOL_LABEL
from annotation.benchmarks.registry import BenchmarkDefinition, register


@register
class CvrrEs(BenchmarkDefinition):
    slug = "cvrr"
    name = "CVRR-ES"
    description = "Open-ended video QA across 11 dimensions, with an LLM judge and DSCP prompting."
    payloads = PAYLOADS
    importer = importer
    exporter = exporter
    demo = demo

    def version_links(self, version) -> list[tuple[str, str]]:
        if version.label != VIDEO_POOL_LABEL:
            return []
        return [("CVRR-ES curation", reverse("cvrr-curation")), ("Videos in dimensions", reverse("cvrr-videos"))]

    def human_decisions(self, version) -> list:
        return qa_pool.human_decisions(version)
