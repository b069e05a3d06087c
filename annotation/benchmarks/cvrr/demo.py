"""CVRR-ES demo items: open questions about the bundled sample videos, in the release's layout.

They are written for the demo (`seed_demo`): a researcher can start a run on them from the browser
in seconds.

`demo_studies` makes the dimensions, assigns the sample videos of the media library to dimensions in
the video pool and opens a captioning study over them (k = 2), so that the demo's annotators can
write captions and its curator can merge or pick them.
"""

from annotation.benchmarks.cvrr import captions, dimension_records, video_pool
from annotation.crowd import studies
from annotation.crowd.models import Study
from annotation.models import MediaAsset, Video

DEMO_CAPTIONS_SLUG = "demo-captions"

# library file name → (dimension, source, metadata) of the demo's video pool
DEMO_ASSIGNMENTS = {
    "bigbuckbunny.mp4": ("interpretation_of_visual_context", "internet",
                         {"title": "Big Buck Bunny (excerpt)", "licence": "CC BY 3.0, Blender Foundation"}),
    "bikes.mp4": ("multiple_actions_in_a_single_video", "internet", {"title": "Bikes"}),
}

# video file name → (dimension, question, answer)
DEMO_QUESTIONS = {
    "bigbuckbunny.mp4": [
        ("interpretation_of_visual_context", "What kind of place does the video show?",
         "A green meadow with trees under a clear sky."),
        ("non_existent_actions_with_existent_scene_depictions", "Why does the rabbit start swimming in the lake?",
         "The rabbit does not swim; there is no lake in the video."),
    ],
    "bikes.mp4": [
        ("multiple_actions_in_a_single_video", "What are the people in the video doing?",
         "They are riding bicycles along a road."),
    ],
    "vtest.avi": [
        ("continuity_and_object_instance_count", "Do more people walk through the scene at the end than at the start?",
         "People keep walking in and out of the scene; several pedestrians are visible throughout."),
    ],
}


def demo_items(media: dict) -> list[tuple[str, dict, dict]]:
    """(external id, payload, media) of the demo questions whose video is in `media` (by file name)."""
    rows = [(name, question) for name, questions in DEMO_QUESTIONS.items() if name in media
            for question in questions]
    items = []
    for index, (name, (dimension, question, answer)) in enumerate(rows):
        video_id = name.rsplit(".", 1)[0]
        items.append((f"{dimension}/{video_id}/{index}",
                      {"kind": "qa", "dimension": dimension, "video_id": video_id, "question": question,
                       "answer": answer},
                      {"video": media[name]}))
    return items


def demo_studies(curator) -> list[Study]:
    """The demo's open captioning study over the sample videos assigned to dimensions (made once)."""
    study = Study.objects.filter(slug=DEMO_CAPTIONS_SLUG).first()
    if study is not None:
        return [study]
    dimension_records.ensure_dimensions()
    pool = {(item.payload["dimension"], getattr(video_pool.video_of(item), "pk", None)): item
            for item in video_pool.pool_items()}
    items = []
    videos = Video.objects.filter(original_name__in=list(DEMO_ASSIGNMENTS), status=MediaAsset.Status.READY)
    for video in videos.order_by("pk"):
        dimension, source, metadata = DEMO_ASSIGNMENTS[video.original_name]
        item = pool.get((dimension, video.pk)) or video_pool.assign_video(curator, video, dimension, source, metadata)
        items.append(item)
    if not items:
        return []
    try:
        study = captions.create_caption_study(curator, "CVRR-ES: caption the videos", items=items,
                                              slug=DEMO_CAPTIONS_SLUG, open_now=True, pay_per_item="0.60",
                                              completion_code="DEMO-CAPTIONS")
    except studies.SlugTaken:  # seeded by a concurrent run meanwhile
        study = Study.objects.get(slug=DEMO_CAPTIONS_SLUG)
    return [study]
