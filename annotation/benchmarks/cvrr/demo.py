"""CVRR-ES demo items: open questions about the bundled sample videos, in the release's layout.

They are written for the demo (`seed_demo`): a researcher can start a run on them from the browser
in seconds.

`demo_studies` makes the dimensions, assigns the sample videos of the media library to dimensions in
the video pool and opens a captioning study over them (k = 2), so that the demo's annotators can
write captions and its curator can merge or pick them.

It then shows the rest of the curation, made once, with no model: the demo has no text model that
writes usable QA pairs, so nothing below claims one did.

- each sample video gets a caption the curator wrote for the demo (`caption_choice.write_caption`,
  noted as written for the demo; `DEMO_CAPTIONS`);
- QA pairs written for the demo about what the videos show (`DEMO_PAIRS`: per video a reasoning
  pair, one whose question contains its answer, so that the automatic flag shows, and a robustness
  pair) are imported as `cvrr_qa` proposals (`generation.proposal_import`) by `DEMO_WRITER`;
- the curator keeps the first pair of each video directly, so the QA pool has pairs; the others are
  in the open filtration study `demo-filtration`;
- the demo annotator holds the expert qualification, and the open expert assessment study
  `demo-experts` covers the kept pairs.
"""

import json

from django.contrib.auth import get_user_model
from django.db import transaction

from annotation.benchmarks.cvrr import (
    caption_choice,
    captions,
    dimension_records,
    expert_group,
    expert_study,
    filtration,
    qa_generation,
    qa_pool,
    video_pool,
)
from annotation.crowd import studies
from annotation.crowd.models import Study
from annotation.models import MediaAsset, Video
from generation import proposal_import, proposals
from generation.models import Proposal

DEMO_CAPTIONS_SLUG = "demo-captions"
DEMO_FILTRATION_SLUG = "demo-filtration"
DEMO_EXPERTS_SLUG = "demo-experts"
DEMO_WRITER = "written for the demo (no model)"
DEMO_ANNOTATOR = "annotator"  # the demo's annotator login (annotation.demo.DEMO_USERS), made an expert

# video file name → the caption the demo's curator wrote from watching it
DEMO_CAPTIONS = {
    "bigbuckbunny.mp4": "A big cartoon rabbit comes out of his burrow in a green meadow. He stretches his arms "
                        "and smiles, enjoying the morning.",
    "bikes.mp4": "Cars and a cyclist move along a narrow street between buildings. A bicycle stands parked "
                 "against a wall by the street.",
}

# video file name → QA pairs written for the demo (question, answer, question kind); the first of each
# video is kept directly by the curator, the others wait in the filtration study
DEMO_PAIRS = {
    "bigbuckbunny.mp4": [
        ("From what the rabbit does when he comes out of his burrow, how does he seem to feel?",
         "Rested and content: he stretches and smiles.", "reasoning"),
        ("Where does the rabbit come out of his burrow, in a meadow?", "In a meadow.", "reasoning"),
        ("Why does the rabbit dig a new burrow after stretching?",
         "He does not dig a new burrow; he comes out of his burrow, stretches and smiles.", "robustness"),
    ],
    "bikes.mp4": [
        ("Which of the things in the street move, and which one stays still?",
         "The cars and the cyclist move along the street; the bicycle parked against the wall stays still.",
         "reasoning"),
        ("What is parked against the wall, a bicycle?", "A bicycle.", "reasoning"),
        ("Why does the cyclist stop to lock the parked bicycle?",
         "The video shows no one locking a bicycle: the bicycle stays parked against the wall while the cars "
         "and the cyclist go along the street.", "robustness"),
    ],
}

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
    """The demo's open captioning study over the sample videos assigned to dimensions, then its open
    filtration and expert assessment studies (see the module docstring); each made once."""
    captioning = _captioning_study(curator)
    if captioning is None:
        return []
    return [captioning, *_qa_studies(curator)]


def _captioning_study(curator) -> Study | None:
    study = Study.objects.filter(slug=DEMO_CAPTIONS_SLUG).first()
    if study is not None:
        return study
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
        return None
    try:
        return captions.create_caption_study(curator, "CVRR-ES: caption the videos", items=items,
                                             slug=DEMO_CAPTIONS_SLUG, open_now=True, pay_per_item="0.60",
                                             completion_code="DEMO-CAPTIONS")
    except studies.SlugTaken:  # seeded by a concurrent run meanwhile
        return Study.objects.get(slug=DEMO_CAPTIONS_SLUG)


def _demo_videos() -> dict:
    """Pool video item id → library file name, for the demo's sample videos in the pool."""
    found = {}
    for item in video_pool.pool_items():
        video = video_pool.video_of(item)
        name = getattr(video, "original_name", None)
        if name in DEMO_PAIRS and DEMO_ASSIGNMENTS[name][0] == item.payload.get("dimension"):
            found[item.pk] = name
    return found


def _qa_studies(curator) -> list[Study]:
    made = list(Study.objects.filter(slug__in=[DEMO_FILTRATION_SLUG, DEMO_EXPERTS_SLUG]).order_by("pk"))
    if made:
        return made
    videos = _demo_videos()
    if not videos:
        return []
    with transaction.atomic():
        for item_id, name in videos.items():
            caption_choice.write_caption(item_id, curator, DEMO_CAPTIONS[name],
                                         note="written for the demo from watching the video")
        rows = [{"inputs": entry["inputs"], "source_key": entry["key"],
                 "raw_output": json.dumps([{"question": q, "answer": a, "question_kind": kind}
                                           for q, a, kind in DEMO_PAIRS[videos[entry["inputs"]["item_id"]]]])}
                for entry in qa_generation.video_entries(videos)]
        imported = proposal_import.import_proposals(qa_generation.KIND, rows, user=curator, model_id=DEMO_WRITER,
                                                    name="CVRR-ES: QA pairs written for the demo")
        pairs = Proposal.objects.filter(proposal_set=imported).order_by("pk")
        for kept in pairs.filter(record_index=0):
            proposals.decide(kept, curator, "accept")
        review = filtration.create_filtration_study(pairs.exclude(record_index=0), curator=curator,
                                                    name="CVRR-ES: keep, fix or remove the QA pairs",
                                                    slug=DEMO_FILTRATION_SLUG)
        annotator = get_user_model().objects.filter(username=DEMO_ANNOTATOR).first()
        if annotator is not None:
            expert_group.grant(annotator, curator)
        experts = expert_study.create_expert_study(qa_pool.pool_version(curator), curator, seed=0, share=1, k=1,
                                                   name="CVRR-ES: assess the kept QA pairs",
                                                   slug=DEMO_EXPERTS_SLUG)
    return [review.study, experts.study]
