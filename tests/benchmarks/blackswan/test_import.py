"""BlackSwanSuite release import and export: VAR_Data.json, mcq.json, yn.json and videos/<id>.mp4."""

from functools import partial

import pytest
from django.core.management import CommandError, call_command

from annotation.models import BenchmarkVersion, Video
from evaluation.benchmarks.base import RequestOptions
from evaluation.benchmarks.blackswan import benchmark as blackswan
from tests import release_fixtures
from tests.release_fixtures import (
    CLIP_SECONDS,
    assert_nothing_created,
    assert_same_release,
    write_blackswan,
    write_cvqa,
    write_json,
)

pytestmark = pytest.mark.django_db
run_import = partial(release_fixtures.run_import, "blackswan")
import_problems = partial(release_fixtures.import_problems, "blackswan")


@pytest.fixture
def release(tmp_path, media):
    root = tmp_path / "blackswan"
    return root, write_blackswan(root, media)


def test_round_trip(release, tmp_path):
    root, written = release
    version = run_import(root)

    assert version.frozen and version.source == BenchmarkVersion.Source.IMPORT
    assert version.item_count == 6
    items = {item.external_id: item for item in version.items.prefetch_related("media__video")}
    assert sorted(items) == ["1001", "1001:mcq:0", "1001:yn:0", "oops_42", "oops_42:mcq:1", "oops_42:yn:1"]

    video = items["1001"].payload
    assert video["id"] == "1001" and video["kind"] == "video"
    assert (video["preevent"], video["event"], video["postevent"]) == (0.2, 1.0, 1.8)
    assert video["task2_checkboxes"] == ["yes", "no", "no"]
    assert video["pc_comp"] == "the cyclist has stopped"
    assert video["source"]["record"] == written["records"][0]
    assert items["oops_42"].payload["event"] == 1.2  # written as text in the release
    assert items["oops_42:yn:1"].payload["def_label"] == "no"  # "No" in the release
    assert items["oops_42:mcq:1"].payload["mcq_task"] == 2

    # every item links the whole (probed) video; rows share their video's asset
    for external_id, item in items.items():
        (link,) = item.media.all()
        assert link.role == "video" and link.video is not None
        assert link.video_id == items[external_id.split(":")[0]].media.get().video_id
    assert Video.objects.count() == 2
    assert Video.objects.get(pk=items["1001"].media.get().video_id).duration == pytest.approx(CLIP_SECONDS, abs=0.1)

    # the evaluation reads the imported payloads: V_post ends where the probed video ends
    (detective,) = blackswan.BENCHMARK.requests(items["1001:mcq:0"], RequestOptions())
    assert [m.segment[0] for m in detective.media] == [0.2, 1.0, 1.8]

    out = tmp_path / "export"
    call_command("export_benchmark", "blackswan", "--version", "v1", str(out))
    assert_same_release(root, out)

    again = run_import(out, "v2")
    assert again.checksum == version.checksum
    assert Video.objects.count() == 2  # the same files: reused, not stored twice


def test_every_problem_is_reported_and_nothing_is_created(release, media_root):
    root, written = release
    records = written["records"] + [dict(written["records"][0], index=2)]  # [2] repeats id 1001
    del records[1]["postevent"]
    write_json(root / "VAR_Data.json", records)
    mcq = written["mcq"] + [{"id": 1001, "mcq_task": 1, "mcq_options": ["a", "b", "c"], "mcq_label": 5},
                            {"id": "nope", "mcq_task": 1, "mcq_options": ["a", "b", "c"], "mcq_label": 0}]
    write_json(root / "mcq.json", mcq)
    (root / "videos" / "1001.mp4").unlink()

    message = import_problems(root)

    assert "VAR_Data.json[1]: missing field(s) 'postevent'" in message
    assert "VAR_Data.json[2]: duplicate id '1001' (first at VAR_Data.json[0])" in message
    assert "mcq.json[2]: field 'mcq_label' must be 0, 1 or 2 (got 5)" in message
    assert "mcq.json[3]: names video 'nope', which VAR_Data.json does not hold" in message
    # one line for the missing file, naming the items that need it
    assert ("video 'videos/1001.mp4' not found: needed by 4 items (VAR_Data.json[0], VAR_Data.json[2], mcq.json[0] "
            "and 1 more)") in message
    assert "1 media file(s) missing, needed by 4 items in all" in message
    assert "pass --skip-missing-media" in message
    assert "nothing was imported" in message
    assert_nothing_created(media_root)


def test_malformed_json_names_the_place(release, media_root):
    root, _written = release
    (root / "yn.json").write_text('[{"id": 1001, "def_task": 1,\n "exp": "x" "def_label": "yes"}]')

    message = import_problems(root)

    assert "yn.json: not valid JSON (Expecting ',' delimiter at line 2, column 13)" in message
    assert_nothing_created(media_root)


def test_split_must_fit_the_video(release, media_root):
    root, written = release
    written["records"][0]["postevent"] = 5.0
    write_json(root / "VAR_Data.json", written["records"])

    message = import_problems(root)

    assert "VAR_Data.json[0]: postevent 5.0 s is not before the end of the video (2.4 s)" in message
    assert_nothing_created(media_root)


def test_wrong_layout_is_refused(tmp_path, media, media_root):
    root = tmp_path / "cvqa-release"
    write_cvqa(root, media)

    message = import_problems(root)

    assert f"{root}: no VAR_Data.json found" in message
    assert_nothing_created(media_root)


def test_row_files_are_optional_and_a_label_is_used_once(release, capsys):
    root, _written = release
    (root / "yn.json").unlink()
    version = run_import(root)
    assert sorted(version.items.values_list("payload__kind", flat=True)) == ["mcq", "mcq", "video", "video"]
    assert "note: ./yn.json not found: no yn items" in capsys.readouterr().out

    with pytest.raises(CommandError) as caught:
        call_command("import_benchmark", "blackswan", str(root), "--version", "v1")
    assert "--version: blackswan already has a version 'v1'" in str(caught.value)
    assert BenchmarkVersion.objects.count() == 1


def test_unreadable_video_is_reported(release, media_root):
    root, written = release
    video = written["videos"]["oops_42"]
    video.write_bytes(video.read_bytes()[:2048])  # a real MP4 header, its frames cut off

    message = import_problems(root)

    assert "videos/oops_42.mp4: this video cannot be imported (" in message
    assert_nothing_created(media_root)


def test_field_types_are_checked_with_file_record_and_field(release, media_root):
    root, written = release
    first, second = (dict(record) for record in written["records"])
    first.update(task1_gt=["Only one forecast.", "And two."], task2_checkboxes=["yes", "maybe", "no"],
                 multivideo="perhaps")
    second.update(task2_gt="A bird lands next to it.", task3_gt=["A caption in a list."],
                  task3_checkboxes=[True, False, "no"], preevent_caption=7)
    write_json(root / "VAR_Data.json", [first, second])
    write_json(root / "yn.json", written["yn"] + [{"id": ["oops_42"], "def_task": 1, "exp": "Hm.", "def_label": "no"}])

    message = import_problems(root)

    assert "VAR_Data.json[0]: field 'task1_gt' must be a list of 3 texts (got ['Only one forecast.', 'And two.'])" \
        in message
    assert ("VAR_Data.json[0]: field 'task2_checkboxes' must be a list of 3 marks (\"yes\"/\"no\" or true/false) "
            "(got ['yes', 'maybe', 'no'])") in message
    assert "VAR_Data.json[0]: field 'multivideo' must be a mark (\"yes\"/\"no\" or true/false) (got 'perhaps')" \
        in message
    assert "VAR_Data.json[1]: field 'task2_gt' must be a list of 3 texts (got 'A bird lands next to it.')" in message
    assert "VAR_Data.json[1]: field 'task3_gt' must be a text (got ['A caption in a list.'])" in message
    assert "VAR_Data.json[1]: field 'preevent_caption' must be a text (got 7)" in message
    assert "task3_checkboxes" not in message  # booleans and "yes"/"no" strings are both marks
    assert "yn.json[2]: field 'id' must be a text or a whole number (got ['oops_42'])" in message
    assert_nothing_created(media_root)


def test_a_video_the_evaluation_cannot_ask_about_is_refused_with_its_record(release, media_root):
    """The reader accepts an empty Reporter caption, but Reporter-Gen has no reference then: no version."""
    root, written = release
    records = [dict(record) for record in written["records"]]
    records[1]["task3_gt"] = ""
    write_json(root / "VAR_Data.json", records)

    message = import_problems(root)

    assert ("VAR_Data.json[1] (oops_42): its evaluation requests cannot be built: BlackSwan video 'oops_42' has no "
            "reporter references (task3_gt).") in message
    assert_nothing_created(media_root)
    with pytest.raises(CommandError, match=r"VAR_Data.json\[1\] \(oops_42\)"):
        call_command("import_benchmark", "blackswan", str(root), "--version", "draft", "--no-freeze")
    assert_nothing_created(media_root)
