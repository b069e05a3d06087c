"""The stages of an NL-EYE triplet under curation (`CurationRecord.stage`), in the order of the paper's
pipeline (§3, App. E; SPEC §3 Curation): the scenes written and accepted, the augmented prompts
approved, an image chosen for each of the three slots, the explanation and categories written, and
the triplet validated."""

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
SLOTS = ("premise", "hypothesis1", "hypothesis2")  # the item's image roles, one per scene


def label(stage: str) -> str:
    """A stage's name for people (a stage this list does not know is shown as it is stored)."""
    return LABELS.get(stage, stage)
