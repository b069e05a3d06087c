"""BlackSwanSuite demo items: the bundled sample videos as `video` records with their `mcq` and `yn`
rows, in the release's layout.

They are written for the demo (`seed_demo`): each video is split into V_pre, V_main and V_post by
its cut times and carries the three tasks' references, so that a tiny-model run has Forecaster,
Detective and Reporter answers for CLIP score and LLM-Match, and multiple-choice and yes/no rows
for accuracies.

`demo_studies` opens (each made once) a staged-reveal study `DEMO_STAGED_SLUG` over the demo videos, split
into their parts here (k = 3, so that several annotators can try the Forecaster → Detective → Reporter
steps), a +P/+PC captions study `DEMO_CAPTIONS_SLUG` over the same splits (k = 2), and the localization
study `DEMO_LOCALIZATION_SLUG`: three annotators per sample video mark when its unexpected event happens
(`annotation.benchmarks.blackswan.localization_study`).
"""

from annotation.benchmarks.blackswan import localization_study
from annotation.benchmarks.blackswan.caption_study import create_caption_study
from annotation.benchmarks.blackswan.splits import current_split, resolve_flagged, split_library_video
from annotation.benchmarks.blackswan.staged import create_staged_study
from annotation.crowd import studies
from annotation.crowd.models import Study
from annotation.models import MediaAsset, Video, VideoSplit
from generation import jobs

DEMO_LOCALIZATION_SLUG = "demo-blackswan-localization"
OPENCV_SAMPLE = "vtest.avi"  # OpenCV's sample video, which the demo imports when it is installed

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


DEMO_STAGED_SLUG = "demo-blackswan"
DEMO_STAGED_K = 3  # several people can try the staged task on the same videos
# video file name → its event (seconds), so that V_pre, V_main and V_post each last a moment
DEMO_EVENTS = {"bigbuckbunny.mp4": (1.6, 3.4), "bikes.mp4": (3.0, 6.5), OPENCV_SAMPLE: (2.0, 5.0)}


def _demo_split(video, event, curator, say):
    """The finished split of a demo video, made here (not on a worker) when it has none; a video with
    several scenes is split anyway, as a curator may decide."""
    split = current_split(video)
    if split is None:
        say(f"Splitting {video.title} into its BlackSwanSuite parts ...")
        split = split_library_video(video, *event, user=curator)
        jobs.run_job(split.job_id)
        split.refresh_from_db()
    if split.status == VideoSplit.Status.FLAGGED:  # several scenes: the demo's curator splits it anyway
        split = resolve_flagged(split, split_anyway=True, user=curator, reason="demo video, split anyway")
        jobs.run_job(split.job_id)
        split.refresh_from_db()
    if split.status != VideoSplit.Status.DONE:
        say(f"The demo split of {video.title} is {split.status}: it is left out of the staged study.")
        return None
    return split


def _demo_splits(curator, say) -> list:
    """The finished splits of the demo videos (split here when they have none)."""
    videos = Video.objects.filter(original_name__in=list(DEMO_EVENTS), status=Video.Status.READY).order_by("pk")
    return [split for video in videos
            if (split := _demo_split(video, DEMO_EVENTS[video.original_name], curator, say)) is not None]


def ensure_demo_staged_study(curator, say=lambda line: None) -> Study | None:
    """A BlackSwanSuite staged-reveal study over the demo videos (k = 3), split into their parts here,
    so that several annotators can try the Forecaster → Detective → Reporter steps."""
    study = Study.objects.filter(slug=DEMO_STAGED_SLUG).first()
    if study is not None:
        return study
    splits = _demo_splits(curator, say)
    if not splits:
        return None
    return create_staged_study(
        splits, "BlackSwanSuite: what happens next?", curator, slug=DEMO_STAGED_SLUG, open_now=True,
        k=DEMO_STAGED_K, pay_per_item="0.50", completion_code="DEMO-BLACKSWAN")


DEMO_CAPTIONS_SLUG = "demo-blackswan-captions"
DEMO_CAPTIONS_K = 2


def ensure_demo_caption_study(curator, say=lambda line: None) -> Study | None:
    """A BlackSwanSuite +P/+PC captions study over the same split demo videos (k = 2): annotators see V_pre
    and V_post and write a caption of each and a comparison of the two."""
    study = Study.objects.filter(slug=DEMO_CAPTIONS_SLUG).first()
    if study is not None:
        return study
    splits = _demo_splits(curator, say)
    if not splits:
        return None
    return create_caption_study(curator, splits, DEMO_CAPTIONS_K, name="BlackSwanSuite: describe the beginning "
                                "and the end", slug=DEMO_CAPTIONS_SLUG, open_now=True, pay_per_item="0.30",
                                completion_code="DEMO-BLACKSWAN-CAPTIONS")


def ensure_localization_study(curator) -> Study | None:
    """The localization study over the sample videos in the library (made once)."""
    study = Study.objects.filter(slug=DEMO_LOCALIZATION_SLUG).first()
    if study is not None:
        return study
    videos = list(Video.objects.filter(original_name__in=list(DEMO_VIDEOS), status=MediaAsset.Status.READY)
                  .exclude(source=MediaAsset.Source.DERIVED).order_by("pk"))
    if not videos:
        return None
    try:
        return localization_study.create_localization_study(
            curator, videos, name="BlackSwanSuite: when does the unexpected happen?", slug=DEMO_LOCALIZATION_SLUG)
    except studies.SlugTaken:  # seeded by a concurrent run meanwhile
        return Study.objects.get(slug=DEMO_LOCALIZATION_SLUG)


def demo_studies(curator, say=lambda line: None) -> list[Study]:
    """The demo's open staged-reveal, captions and localization studies (each made once; one that has no
    videos to work on is left out)."""
    made = (ensure_demo_staged_study(curator, say), ensure_demo_caption_study(curator, say),
            ensure_localization_study(curator))
    return [study for study in made if study is not None]
