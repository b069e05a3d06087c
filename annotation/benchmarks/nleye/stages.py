"""The stages of an NL-EYE triplet under curation (`CurationRecord.stage`), in the order of the paper's
pipeline (§3, App. E; SPEC §3 Curation): the scenes written and accepted, the augmented prompts
approved, an image chosen for each of the three slots, the explanation and categories written, and
the triplet validated."""

from annotation import curation_stages

SCENES_ACCEPTED = "scenes_accepted"
PROMPTS_APPROVED = "prompts_approved"
IMAGES_CHOSEN = "images_chosen"
EXPLAINED = "explained"
VALIDATED = "validated"

STAGES = (
    (SCENES_ACCEPTED, "Scenes accepted"),
    (PROMPTS_APPROVED, "Prompts approved"),
    (IMAGES_CHOSEN, "Images chosen"),
    (EXPLAINED, "Explanation written"),
    (VALIDATED, "Validated"),
)
LABELS = dict(STAGES)

# Forward along the pipeline; approving other prompts or rejecting the ones in use takes a triplet back to
# its prompts, and a validated triplet whose checks no longer hold goes back to `explained`.
curation_stages.declare({
    SCENES_ACCEPTED: {PROMPTS_APPROVED, EXPLAINED},
    PROMPTS_APPROVED: {SCENES_ACCEPTED, IMAGES_CHOSEN, EXPLAINED},
    IMAGES_CHOSEN: {SCENES_ACCEPTED, PROMPTS_APPROVED, EXPLAINED},
    EXPLAINED: {SCENES_ACCEPTED, PROMPTS_APPROVED, VALIDATED},
    VALIDATED: {SCENES_ACCEPTED, PROMPTS_APPROVED, EXPLAINED},
})
SLOTS = ("premise", "hypothesis1", "hypothesis2")  # the item's image roles, one per scene


def label(stage: str) -> str:
    """A stage's name for people (a stage this list does not know is shown as it is stored)."""
    return LABELS.get(stage, stage)
