"""The stages of CVRR-ES curation (`CurationRecord.stage`), in the order of the paper's pipeline
(seeds/003 §3.2; SPEC §4 Curation).

Videos under curation are `video` items of an unfrozen video pool version (never frozen); the QA
pairs people kept are `qa` items, in the importer's shape, of an unfrozen QA pool version that is
frozen into the benchmark.
"""

from annotation import curation_stages

# a video item
VIDEO_ASSIGNED = "video_assigned"  # in a dimension, with its source and metadata
CAPTIONED = "captioned"  # a curator merged or picked the caption used for QA generation
# a QA item
FILTERED = "filtered"  # kept or fixed in the filtration study
EXPERT_CHECKED = "expert_checked"  # experts assessed it and found its answer correct
RETURNED = "returned_to_filtration"  # experts found its answer wrong: back to the filtration queue

STAGES = (
    (VIDEO_ASSIGNED, "Assigned to a dimension"),
    (CAPTIONED, "Caption chosen"),
    (FILTERED, "Kept in filtration"),
    (EXPERT_CHECKED, "Checked by experts"),
    (RETURNED, "Back to filtration"),
)
LABELS = dict(STAGES)

curation_stages.declare({
    VIDEO_ASSIGNED: {CAPTIONED},
    CAPTIONED: set(),
    FILTERED: {EXPERT_CHECKED, RETURNED},
    EXPERT_CHECKED: {RETURNED},  # a curator may still send a checked pair back
    RETURNED: {FILTERED},  # kept again when the returned-pairs study reviews it
})
