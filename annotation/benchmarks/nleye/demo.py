"""NL-EYE demo items: premise / hypothesis triplets over the bundled scikit-image sample pictures.

They are written for the demo (`seed_demo`): each triplet pairs a premise picture with a plausible
and an implausible hypothesis picture, described in the release's layout, so that the demo's
leaderboard has answers with right and wrong (1 or 2) and per-category charts.

`demo_studies` opens a scene-writing study (`scenes`) so that the demo's annotators can write
triplets and its curator can filter them.
"""

from annotation.benchmarks.nleye import scenes as scene_writing
from annotation.crowd import studies
from annotation.crowd.models import Study

DEMO_SCENES_SLUG = "demo-scenes"

# (premise, hypothesis 1, hypothesis 2): (file name, scene description); label; reasoning category,
# time direction, time duration
DEMO_TRIPLETS = [
    ((("rocket.jpg", "A rocket stands on its launch pad, ready for lift-off."),
      ("astronaut.png", "An astronaut in a spacesuit poses in front of a flag."),
      ("chelsea.png", "A tabby cat looks up from the floor.")),
     1, "functional", "backward", "long"),
    ((("coffee.png", "A cup of coffee on a saucer, half drunk."),
      ("rocket.jpg", "A rocket stands on its launch pad."),
      ("coins.png", "A handful of coins lies on a table.")),
     2, "social", "forward", "short"),
    ((("chelsea.png", "A cat sits calmly on the floor of a room."),
      ("coins.png", "Coins are scattered on a table."),
      ("coffee.png", "A cup of coffee stands on a table, untouched.")),
     2, "physical", "parallel", "short"),
    ((("astronaut.png", "An astronaut smiles in a spacesuit."),
      ("rocket.jpg", "A rocket waits on the pad for the crew."),
      ("coins.png", "A pile of old coins.")),
     1, "logical", "forward", "long"),
]
ROLES = ("premise", "hypothesis1", "hypothesis2")


def demo_items(media: dict) -> list[tuple[str, dict, dict]]:
    """(external id, payload, media by role) of the demo triplets whose three pictures are in `media`
    (by file name)."""
    items = []
    for index, (scenes, label, category, direction, duration) in enumerate(DEMO_TRIPLETS):
        if not all(name in media for name, _ in scenes):
            continue
        sample_id = f"demo-{index + 1}"
        payload = {"kind": "triplet", "sample_id": sample_id, "label": label, "reasoning_category": category,
                   "time_direction": direction, "time_duration": duration,
                   **{role: text for role, (_, text) in zip(ROLES, scenes, strict=True)}}
        items.append((sample_id, payload, {role: media[name] for role, (name, _) in zip(ROLES, scenes, strict=True)}))
    return items


def demo_studies(curator) -> list[Study]:
    """The demo's open scene-writing study (k = 3), made once."""
    study = Study.objects.filter(slug=DEMO_SCENES_SLUG).first()
    if study is None:
        try:
            study = scene_writing.create_scene_study(curator, "NL-EYE: write scene triplets", slug=DEMO_SCENES_SLUG,
                                              annotators_per_item=3, open_now=True, pay_per_item="0.40",
                                              completion_code="DEMO-SCENES")
        except studies.SlugTaken:  # seeded by a concurrent run meanwhile
            study = Study.objects.get(slug=DEMO_SCENES_SLUG)
    return [study]
