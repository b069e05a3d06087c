"""NL-EYE demo items: premise / hypothesis triplets over the bundled scikit-image sample pictures.

They are written for the demo (`seed_demo`): each triplet pairs a premise picture with a plausible
and an implausible hypothesis picture, described in the release's layout, so that the demo's
leaderboard has answers with right and wrong (1 or 2) and per-category charts.

`demo_studies` opens a scene-writing study (`scenes`) so that the demo's annotators can write
triplets and its curator can filter them. `demo_curation` puts one written triplet in the scene pool
and makes a few image studio attempts for it on the tiny Stable Diffusion pipelines: a premise from
text, a hypothesis from the premise (image-to-image) and one inpainted inside a mask, so that the
studio shows an attempt tree.
"""

import io

from PIL import Image as PILImage

from annotation import curation_stages, image_studio
from annotation.benchmarks.nleye import scene_pool, stages
from annotation.benchmarks.nleye import scenes as scene_writing
from annotation.crowd import studies
from annotation.crowd.models import Study
from annotation.curation_models import ImageAttempt
from annotation.models import BenchmarkItem
from generation import diffusion, jobs

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
                                              k=3, open_now=True, pay_per_item="0.40",
                                              completion_code="DEMO-SCENES")
        except studies.SlugTaken:  # seeded by a concurrent run meanwhile
            study = Study.objects.get(slug=DEMO_SCENES_SLUG)
    return [study]


DEMO_POOL_ID = "demo-studio-1"
DEMO_SCENES = {
    "premise": "A boy stands in a kitchen holding a full glass of milk.",
    "plausible": "The boy has a white milk mustache and holds an empty glass.",
    "implausible": "The boy pours the milk into a flower pot in the garden at night.",
    "reasoning_category": "physical", "time_direction": "forward", "time_duration": "short",
    "domain": "daily life & hospitality",
}
DEMO_SEED, DEMO_SIZE, DEMO_STEPS = 1234, 128, 4
TEXT2IMAGE, INPAINT = "sd-text2image", "sd-inpaint"


def _demo_triplet(curator) -> BenchmarkItem:
    """The demo's triplet in the scene pool, as an accepted written triplet would be."""
    pool = scene_pool.pool_version(curator)
    item = BenchmarkItem.objects.filter(version=pool, external_id=DEMO_POOL_ID).first()
    if item is None:
        item = BenchmarkItem.objects.create(version=pool, external_id=DEMO_POOL_ID,
                                            payload=scene_pool.triplet_payload(DEMO_POOL_ID, DEMO_SCENES))
        curation_stages.start(item=item, stage=stages.SCENES_ACCEPTED, author=curator, by=curator,
                              working={"scenes": DEMO_SCENES, "seed": DEMO_SEED})
    return item


def _settings(model: str, mode: str, prompt: str) -> image_studio.AttemptSettings:
    return image_studio.parse_settings({
        "mode": mode, "prompt": prompt, "suffix": diffusion.PHOTOREALISTIC_SUFFIX, "seed": str(DEMO_SEED),
        "steps": str(DEMO_STEPS), "guidance": "7.5", "width": str(DEMO_SIZE), "height": str(DEMO_SIZE),
        "strength": "0.8", "model_id": model})


def _box_mask() -> io.BytesIO:
    mask = PILImage.new("L", (DEMO_SIZE, DEMO_SIZE), 0)
    mask.paste(255, (DEMO_SIZE // 4, DEMO_SIZE // 4, 3 * DEMO_SIZE // 4, 3 * DEMO_SIZE // 4))
    buffer = io.BytesIO()
    mask.save(buffer, format="PNG")
    buffer.seek(0)
    buffer.name = "mask.png"
    return buffer


def _run(attempt: ImageAttempt) -> ImageAttempt:
    jobs.run_job(attempt.job_id)
    attempt.refresh_from_db()
    return attempt


def demo_curation(curator, models: dict, say=lambda line: None) -> list:
    """A triplet of the scene pool with three image studio attempts made on the tiny pipelines (once):
    nothing without them."""
    if TEXT2IMAGE not in models or INPAINT not in models:
        return []
    item = _demo_triplet(curator)
    if ImageAttempt.objects.filter(item=item).exists():
        return [item]
    say(f"Making image studio attempts for the NL-EYE triplet {DEMO_POOL_ID} on the tiny pipelines ...")
    label = item.payload["label"]
    premise = _run(image_studio.start_attempt(
        item, "premise", _settings(models[TEXT2IMAGE], "text2image", DEMO_SCENES["premise"]), user=curator))
    if premise.status != ImageAttempt.Status.DONE:
        say(f"The demo premise attempt failed: {premise.error}")
        return [item]
    parent = image_studio.Parent(attempt=premise)
    _run(image_studio.start_attempt(
        item, f"hypothesis{label}", _settings(models[TEXT2IMAGE], "image2image", DEMO_SCENES["plausible"]),
        user=curator, parent=parent))
    _run(image_studio.start_attempt(
        item, f"hypothesis{3 - label}", _settings(models[INPAINT], "inpaint", DEMO_SCENES["implausible"]),
        user=curator, parent=parent, mask_upload=_box_mask()))
    chosen = image_studio.pick_final(premise, curator).image
    if chosen.probe_job_id:  # probed here, as the demo's imported media are
        jobs.run_job(chosen.probe_job_id)
    return [item]
