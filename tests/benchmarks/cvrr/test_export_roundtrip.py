"""A frozen CVRR-ES version built by curation (QA items of a QA pool version, made with the ORM, their
videos library videos with arbitrary file names under role `video`) exports in the release layout
`CVRR-ES/<dimension>/annotations_<dimension>.json` with the videos beside it named by VideoID and the
captions in `captions_<dimension>.json`, and `import_benchmark cvrr` reads back the same payloads and
the same video bytes."""

import hashlib
import json
import shutil

import pytest
from django.core.management import CommandError, call_command

from annotation import versions
from annotation.models import Benchmark, BenchmarkItem, BenchmarkVersion, ItemMedia
from tests.conftest import ingest_path
from tests.release_fixtures import assert_same_release, run_import

pytestmark = pytest.mark.django_db

PARTIAL, EMOTION = "partial_actions", "understanding_emotional_context"
# external id → payload, in the order curation made them
PAYLOADS = {
    "qa-pool-17": {"kind": "qa", "dimension": PARTIAL, "video_id": "v017",
                   "question": "Does the rider finish the jump?",
                   "answer": "No, the video stops while the rider is still in the air.", "question_kind": "reasoning",
                   "caption": "A cyclist rides towards a ramp and takes off; the clip ends mid-air."},
    "qa-pool-18": {"kind": "qa", "dimension": PARTIAL, "video_id": "v017",
                   "question": "Does the rider fall off the bike after landing?",
                   "answer": "The video does not show a landing, so no fall is shown.", "question_kind": "robustness",
                   "caption": "A cyclist rides towards a ramp and takes off; the clip ends mid-air."},
    "qa-pool-20": {"kind": "qa", "dimension": PARTIAL, "video_id": "v020",
                   "question": "What is the rabbit about to do?",
                   "answer": "It seems about to stand up, but the video ends first."},
    "qa-pool-31": {"kind": "qa", "dimension": EMOTION, "video_id": "clip.31",
                   "question": "How does the rabbit feel when the butterfly lands on it?",
                   "answer": "It looks calm and curious, with a \"gentle\" smile — naïvely happy."},
}
# video id → (sample clip, the arbitrary name the curator's library gave it)
VIDEOS = {"v017": (0, "jump FINAL (2).MP4"), "v020": (3, "bunny_take 4.mp4"), "clip.31": (4, "emotion-pick.mp4")}


def sha256(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def library_videos(tmp_path, media, curator):
    folder = tmp_path / "library"
    folder.mkdir()
    found = {}
    for video_id, (clip, name) in VIDEOS.items():
        path = folder / name
        shutil.copyfile(media.clip(clip), path)
        found[video_id] = (ingest_path(path, user=curator), path)
    return found


def qa_pool(label: str, payloads: dict, videos: dict) -> BenchmarkVersion:
    """An unfrozen QA pool version with the kept QA pairs, each linked to its library video."""
    version = BenchmarkVersion.objects.create(benchmark=Benchmark.objects.get(slug="cvrr"), label=label)
    for external_id, payload in payloads.items():
        item = BenchmarkItem.objects.create(version=version, external_id=external_id, payload=payload)
        ItemMedia.objects.create(item=item, role="video", video=videos[payload["video_id"]][0])
    return version


def test_a_curated_version_exports_in_the_release_layout_and_imports_back(library_videos, tmp_path):
    curated = versions.freeze(qa_pool("curated-1", PAYLOADS, library_videos))
    out = tmp_path / "export"

    call_command("export_benchmark", "cvrr", "--version", "curated-1", str(out))

    files = sorted(path.relative_to(out).as_posix() for path in out.rglob("*") if path.is_file())
    assert files == [f"CVRR-ES/{PARTIAL}/annotations_{PARTIAL}.json", f"CVRR-ES/{PARTIAL}/captions_{PARTIAL}.json",
                     f"CVRR-ES/{PARTIAL}/v017.mp4", f"CVRR-ES/{PARTIAL}/v020.mp4",
                     f"CVRR-ES/{EMOTION}/annotations_{EMOTION}.json", f"CVRR-ES/{EMOTION}/clip.31.mp4"]
    records = json.loads((out / "CVRR-ES" / PARTIAL / f"annotations_{PARTIAL}.json").read_text(encoding="utf-8"))
    assert records == [
        {"VideoID": "v017", "Q": PAYLOADS["qa-pool-17"]["question"], "A": PAYLOADS["qa-pool-17"]["answer"],
         "question_kind": "reasoning"},
        {"VideoID": "v017", "Q": PAYLOADS["qa-pool-18"]["question"], "A": PAYLOADS["qa-pool-18"]["answer"],
         "question_kind": "robustness"},
        {"VideoID": "v020", "Q": PAYLOADS["qa-pool-20"]["question"], "A": PAYLOADS["qa-pool-20"]["answer"]}]
    captions = json.loads((out / "CVRR-ES" / PARTIAL / f"captions_{PARTIAL}.json").read_text(encoding="utf-8"))
    assert captions == {"v017": PAYLOADS["qa-pool-17"]["caption"]}  # one caption per video
    for video_id, (_, original) in library_videos.items():
        dimension = EMOTION if video_id == "clip.31" else PARTIAL
        assert (out / "CVRR-ES" / dimension / f"{video_id}.mp4").read_bytes() == original.read_bytes()

    again = run_import("cvrr", out, "reimported")

    assert again.frozen and again.item_count == curated.item_count == 4
    items = list(again.items.order_by("external_id").prefetch_related("media__video"))
    by_question = {item.payload["question"]: item for item in items}
    assert sorted(by_question) == sorted(payload["question"] for payload in PAYLOADS.values())
    for payload in PAYLOADS.values():
        item = by_question[payload["question"]]
        imported = dict(item.payload)
        source = imported.pop("source")
        assert source["file"] == f"CVRR-ES/{payload['dimension']}/annotations_{payload['dimension']}.json"
        assert imported == payload
        (link,) = item.media.all()
        _, original = library_videos[payload["video_id"]]
        assert link.role == "video" and link.video.checksum == sha256(original)
        with link.video.file.open("rb") as handle:
            assert handle.read() == original.read_bytes()
    # one library video per VideoID: the two questions about v017 share it
    assert len({item.media.get().video_id for item in items}) == 3

    # the re-imported version writes the same release again, file for file
    second = tmp_path / "export-2"
    call_command("export_benchmark", "cvrr", "--version", "reimported", str(second))
    assert_same_release(out, second)


def test_two_captions_for_one_video_or_a_video_record_are_refused(library_videos, tmp_path):
    differing = {**PAYLOADS, "qa-pool-18": {**PAYLOADS["qa-pool-18"], "caption": "Another caption of the jump."}}
    versions.freeze(qa_pool("two-captions", differing, library_videos))
    with pytest.raises(CommandError, match="qa-pool-17 and qa-pool-18 give video 'v017' different captions"):
        call_command("export_benchmark", "cvrr", "--version", "two-captions", str(tmp_path / "out"))
    assert not (tmp_path / "out").exists()

    pool = qa_pool("with-video", {"qa-pool-20": PAYLOADS["qa-pool-20"]}, library_videos)
    BenchmarkItem.objects.create(version=pool, external_id="video-20", payload={
        "kind": "video", "dimension": PARTIAL, "video_id": "v020", "source": "internet"})
    with pytest.raises(CommandError, match="video-20 is a 'video' record under curation"):
        call_command("export_benchmark", "cvrr", "--version", "with-video", str(tmp_path / "out"))
    assert not (tmp_path / "out").exists()
