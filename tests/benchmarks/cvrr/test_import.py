"""CVRR-ES release import and export: dimension folders with annotations, videos and captions."""

from functools import partial

import pytest
from django.core.management import call_command

from annotation.models import Video
from evaluation.benchmarks.base import RequestOptions
from evaluation.benchmarks.cvrr import benchmark as cvrr
from tests import release_fixtures
from tests.release_fixtures import (
    CVRR_PARTIAL,
    CVRR_TIME_CAPTIONS,
    assert_nothing_created,
    assert_same_release,
    write_blackswan,
    write_cvrr,
    write_json,
)

pytestmark = pytest.mark.django_db
run_import = partial(release_fixtures.run_import, "cvrr")
import_problems = partial(release_fixtures.import_problems, "cvrr")


@pytest.fixture
def release(tmp_path, media):
    root = tmp_path / "cvrr"
    return root, write_cvrr(root, media)


def test_round_trip(release, tmp_path):
    root, written = release
    version = run_import(root)

    assert version.frozen and version.item_count == 4
    items = {item.external_id: item for item in version.items.prefetch_related("media__video")}
    assert sorted(items) == ["partial_actions:0", "partial_actions:1", "partial_actions:2",
                             "time_order_understanding:0"]
    first = items["partial_actions:0"].payload
    assert {key: first[key] for key in ("kind", "dimension", "video_id", "question", "answer")} == {
        "kind": "qa", "dimension": "partial_actions", "video_id": "1.mp4", "question": CVRR_PARTIAL[0]["Q"],
        "answer": CVRR_PARTIAL[0]["A"]}
    assert first["source"] == {"file": "CVRR-ES/partial_actions/annotations_partial_actions.json", "index": 0,
                               "record": CVRR_PARTIAL[0], "media": {"video": "CVRR-ES/partial_actions/1.mp4"}}
    timed = items["time_order_understanding:0"].payload
    assert timed["caption"] == CVRR_TIME_CAPTIONS["7"]  # VideoID "7" names 7.mp4 and its caption

    videos = {external_id: item.media.get() for external_id, item in items.items()}
    assert {link.role for link in videos.values()} == {"video"}
    assert videos["partial_actions:0"].video_id == videos["partial_actions:1"].video_id
    assert Video.objects.count() == 3
    assert all(video.duration for video in Video.objects.all())

    (request,) = cvrr.BENCHMARK.requests(items["time_order_understanding:0"], RequestOptions())
    assert request.extra["dimension"] == "time_order_understanding"
    assert request.media[0].asset_id == videos["time_order_understanding:0"].video_id

    out = tmp_path / "export"
    call_command("export_benchmark", "cvrr", "--version", "v1", str(out))
    assert_same_release(root, out)
    assert run_import(out, "v2").checksum == version.checksum


def test_every_problem_is_reported_and_nothing_is_created(release, media_root):
    root, written = release
    records = list(CVRR_PARTIAL) + [
        dict(CVRR_PARTIAL[0]),  # [3]: the same question again
        {"VideoID": "1.mp4", "A": "An answer without its question."},  # [4]
        "not a record",  # [5]
        {"VideoID": "9.mp4", "Q": "Is this video shipped?", "A": "No."},  # [6]
    ]
    write_json(written["base"] / "partial_actions" / "annotations_partial_actions.json", records)
    (written["base"] / "time_order_understanding" / "annotations_time_order_understanding.json").write_text(
        '[{"VideoID": "7", "Q": "Broken?", "A": "Yes."}')

    message = import_problems(root)

    dimension = "CVRR-ES/partial_actions/annotations_partial_actions.json"
    assert f"{dimension}[3]: the same question about video '1.mp4' as {dimension}[0]" in message
    assert f"{dimension}[4]: missing field(s) 'Q'" in message
    assert f"{dimension}[5]: malformed record: a JSON object is needed, not a str" in message
    assert f"video 'CVRR-ES/partial_actions/9.mp4' not found: needed by 1 item ({dimension}[6])" in message
    assert ("CVRR-ES/time_order_understanding/annotations_time_order_understanding.json: not valid JSON "
            "(Expecting ',' delimiter at line 1, column 47)") in message
    assert_nothing_created(media_root)


def test_missing_videos_are_skipped_when_asked(release, capsys):
    root, written = release
    written["videos"][("partial_actions", "2.mp4")].unlink()

    message = import_problems(root)
    assert ("video 'CVRR-ES/partial_actions/2.mp4' not found: needed by 1 item "
            "(CVRR-ES/partial_actions/annotations_partial_actions.json[2])") in message

    version = run_import(root, "v1", "--skip-missing-media")
    assert sorted(version.items.values_list("external_id", flat=True)) == [
        "partial_actions:0", "partial_actions:1", "time_order_understanding:0"]
    out = capsys.readouterr().out
    assert ("skipped: video 'CVRR-ES/partial_actions/2.mp4' not found: needed by 1 item "
            "(CVRR-ES/partial_actions/annotations_partial_actions.json[2])") in out
    assert "3 items, 2 media added, 0 already in the library, 1 items skipped; frozen" in out


def test_annotations_must_be_named_after_their_folder(release, media_root):
    root, written = release
    folder = written["base"] / "partial_actions"
    (folder / "annotations_partial_actions.json").rename(folder / "annotations_partial.json")

    message = import_problems(root)

    assert ("CVRR-ES/partial_actions/annotations_partial.json: an annotations file must be named after its folder "
            "(annotations_partial_actions.json)") in message
    assert_nothing_created(media_root)


def test_wrong_layout_is_refused(tmp_path, media, media_root):
    root = tmp_path / "blackswan-release"
    write_blackswan(root, media)

    message = import_problems(root)

    assert f"{root}: no <dimension>/annotations_<dimension>.json found" in message
    assert_nothing_created(media_root)


def test_question_answer_and_video_id_must_be_texts(release, media_root):
    root, written = release
    records = [dict(record) for record in CVRR_PARTIAL]
    records[0]["Q"] = 5
    records[1]["A"] = ["A cyclist rides along a street."]
    records[2]["VideoID"] = 2
    records.append({"VideoID": "1.mp4", "Q": "Is it raining?", "A": "No.", "question_kind": ["robustness"]})
    write_json(written["base"] / "partial_actions" / "annotations_partial_actions.json", records)

    message = import_problems(root)

    dimension = "CVRR-ES/partial_actions/annotations_partial_actions.json"
    assert f"{dimension}[0]: field 'Q' must be a non-empty text (got 5)" in message
    assert f"{dimension}[1]: field 'A' must be a non-empty text (got ['A cyclist rides along a street.'])" in message
    assert f"{dimension}[2]: field 'VideoID' must be a non-empty text (got 2)" in message
    assert f"{dimension}[3]: field 'question_kind' must be a text (got ['robustness'])" in message
    assert_nothing_created(media_root)


def test_an_unknown_dimension_is_refused_with_its_file(release, media_root):
    """The evaluation knows the paper's 11 dimensions: a folder it cannot name makes no requests."""
    root, written = release
    folder = written["base"] / "partial_actions"
    renamed = folder.rename(written["base"] / "juggling")
    (renamed / "annotations_partial_actions.json").rename(renamed / "annotations_juggling.json")

    message = import_problems(root)

    assert ("CVRR-ES/juggling/annotations_juggling.json[0] (juggling:0): its evaluation requests cannot be built: "
            "Unknown CVRR-ES dimension 'juggling'") in message
    assert_nothing_created(media_root)
