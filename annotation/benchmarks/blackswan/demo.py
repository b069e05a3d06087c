"""BlackSwanSuite demo items: the bundled sample videos as `video` records with their `mcq` and `yn`
rows, in the release's layout.

They are written for the demo (`seed_demo`): each video is split into V_pre, V_main and V_post by
its cut times and carries the three tasks' references, so that a tiny-model run has Forecaster,
Detective and Reporter answers for CLIP score and LLM-Match, and multiple-choice and yes/no rows
for accuracies.

`demo_studies` opens the localization study `DEMO_LOCALIZATION_SLUG` (made once): three annotators per
sample video mark when its unexpected event happens (`annotation.benchmarks.blackswan.localization_study`).
"""

from annotation.benchmarks.blackswan import localization_study
from annotation.crowd import studies
from annotation.crowd.models import Study
from annotation.models import MediaAsset, Video

DEMO_LOCALIZATION_SLUG = "demo-blackswan-localization"

# video file name → (id, cut times (preevent, event, postevent) in seconds, Forecaster hypotheses,
# Detective replacements (empty where the forecast held) and their marks, Reporter caption and marks,
# MCQ rows (task, options, right option), Y/N rows (task, hypothesis, label))
DEMO_VIDEOS = {
    "bigbuckbunny.mp4": (
        "bigbuckbunny", (0.2, 1.6, 3.4),
        ["The rabbit crawls out of its burrow and lies down in the grass.",
         "The rabbit climbs out of the burrow and stands up.",
         "The rabbit goes back into its burrow."],
        ["", "", "The rabbit stands up in front of the burrow and stretches."],
        ["yes", "yes", "no"],
        "A big rabbit climbs out of its burrow, stands up, stretches and smiles in the sun.",
        ["no", "yes", "no"],
        [(1, ["The rabbit falls asleep in the burrow.", "The rabbit stands up and stretches.",
              "A bird lands on the rabbit."], 1),
         (2, ["The rabbit stretches and smiles in the sun.", "The rabbit runs away across the meadow.",
              "The rabbit digs a new burrow."], 0)],
        [(1, "The rabbit stands up outside its burrow.", "yes"),
         (2, "The rabbit goes back into the burrow.", "no")],
    ),
    "bikes.mp4": (
        "bikes", (0.2, 3.0, 6.5),
        ["A car drives along the street past the camera.",
         "A cyclist rides down the street.",
         "The street stays empty."],
        ["", "", "A cyclist in a helmet rides past a parked van."],
        ["yes", "yes", "no"],
        "Cars pass in a narrow street, a cyclist rides by, and a bicycle stands parked against a wall.",
        ["yes", "yes", "no"],
        [(1, ["A cyclist in a helmet rides past.", "A bus stops to let people off.",
              "A dog crosses the street."], 0),
         (2, ["The cyclist falls off the bike.", "A bicycle is left parked against a wall.",
              "The street floods with rain."], 1)],
        [(1, "A cyclist rides through the street.", "yes"),
         (2, "The street is empty the whole time.", "no")],
    ),
}


def demo_items(media: dict) -> list[tuple[str, dict, dict]]:
    """(external id, payload, media by role) of the demo videos that are in `media` (by file name): a
    `video` record, then its `mcq` and `yn` rows, each linking the whole video under role `video`."""
    items = []
    for name, (video_id, cuts, forecasts, replacements, kept, caption, confirmed, mcqs, yns) in DEMO_VIDEOS.items():
        if name not in media:
            continue
        by_role = {"video": media[name]}
        preevent, event, postevent = cuts
        items.append((video_id, {
            "kind": "video", "id": video_id, "preevent": preevent, "event": event, "postevent": postevent,
            "task1_gt": forecasts, "task2_gt": replacements, "task2_checkboxes": kept, "task3_gt": caption,
            "task3_checkboxes": confirmed}, by_role))
        for index, (task, options, label) in enumerate(mcqs):
            items.append((f"{video_id}:mcq:{index}", {"kind": "mcq", "id": video_id, "mcq_task": task,
                                                      "mcq_options": options, "mcq_label": label}, by_role))
        for index, (task, hypothesis, label) in enumerate(yns):
            items.append((f"{video_id}:yn:{index}", {"kind": "yn", "id": video_id, "def_task": task,
                                                     "exp": hypothesis, "def_label": label}, by_role))
    return items


def demo_studies(curator) -> list[Study]:
    """The demo's open localization study over the sample videos in the library (made once)."""
    study = Study.objects.filter(slug=DEMO_LOCALIZATION_SLUG).first()
    if study is not None:
        return [study]
    videos = list(Video.objects.filter(original_name__in=list(DEMO_VIDEOS), status=MediaAsset.Status.READY)
                  .exclude(source=MediaAsset.Source.DERIVED).order_by("pk"))
    if not videos:
        return []
    try:
        return [localization_study.create_localization_study(
            curator, videos, name="BlackSwanSuite: when does the unexpected happen?", slug=DEMO_LOCALIZATION_SLUG)]
    except studies.SlugTaken:  # seeded by a concurrent run meanwhile
        return [Study.objects.get(slug=DEMO_LOCALIZATION_SLUG)]
