"""CVRR-ES demo items: open questions about the bundled sample videos, in the release's layout.

They are written for the demo (`seed_demo`): a researcher can start a run on them from the browser
in seconds.
"""

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
