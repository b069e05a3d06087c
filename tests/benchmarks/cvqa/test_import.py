"""C-VQA release import and export: the Real and Synthetic question CSVs with images found under their folders."""

from functools import partial

import pytest
from django.core.management import CommandError, call_command

from annotation.models import BenchmarkVersion, Image
from evaluation.benchmarks.base import RequestOptions
from evaluation.benchmarks.cvqa import benchmark as cvqa
from tests import release_fixtures
from tests.release_fixtures import (
    CVQA_HEADER,
    CVQA_REAL,
    CVQA_SYNTHETIC,
    assert_nothing_created,
    assert_same_release,
    write_csv,
    write_cvqa,
    write_nleye,
)

pytestmark = pytest.mark.django_db
run_import = partial(release_fixtures.run_import, "cvqa")
import_problems = partial(release_fixtures.import_problems, "cvqa")


@pytest.fixture
def release(tmp_path, media):
    root = tmp_path / "cvqa"
    return root, write_cvqa(root, media)


def test_round_trip(release, tmp_path):
    root, written = release
    version = run_import(root)

    assert version.frozen and version.item_count == 5
    items = {item.external_id: item for item in version.items.prefetch_related("media__image")}
    assert sorted(items) == [
        "real:COCO_val2014_000000402685.jpg:2", "real:COCO_val2014_000000402685.jpg:3",
        "real:COCO_val2014_000000403065.png:4", "synthetic:abs_counting_000001.png:2",
        "synthetic:abs_counting_000002.png:3"]
    first = items["real:COCO_val2014_000000402685.jpg:2"].payload
    assert {key: first[key] for key in ("kind", "query", "answer", "new_query", "new_answer", "type")} == {
        "kind": "real", "query": CVQA_REAL[0][1], "answer": "1", "new_query": CVQA_REAL[0][3], "new_answer": "3",
        "type": "direct"}
    assert first["source"]["record"] == dict(zip(CVQA_HEADER, CVQA_REAL[0], strict=True))
    assert first["source"]["media"] == {"image": "C-VQA/C-VQA-Real/val2014/COCO_val2014_000000402685.jpg"}
    assert items["synthetic:abs_counting_000002.png:3"].payload["type"] == "abs_counting_4"

    # images found in a subfolder of the CSV's folder; two questions about one image share it
    links = {external_id: item.media.get() for external_id, item in items.items()}
    assert {link.role for link in links.values()} == {"image"}
    shared = "real:COCO_val2014_000000402685.jpg"
    assert links[f"{shared}:2"].image_id == links[f"{shared}:3"].image_id
    assert Image.objects.count() == 4

    # the evaluation reads the imported payloads
    requests = cvqa.BENCHMARK.requests(items["synthetic:abs_counting_000001.png:2"], RequestOptions())
    assert [request.answer_type for request in requests] == ["letter", "letter"]
    assert requests[0].media[0].asset_id == links["synthetic:abs_counting_000001.png:2"].image_id

    out = tmp_path / "export"
    call_command("export_benchmark", "cvqa", "--version", "v1", str(out))
    assert_same_release(root, out)
    assert run_import(out, "v2").checksum == version.checksum


def test_every_problem_is_reported_and_nothing_is_created(release, media_root):
    root, written = release
    rows = [list(row) for row in CVQA_REAL]
    rows.append(list(CVQA_REAL[0]))  # line 5 repeats line 2: a warning, not a problem
    rows.append(["missing_image.jpg", "How many dogs?", "1", "How many dogs if one left?", "0", "direct"])
    rows.append(["COCO_val2014_000000403065.png", "", "1", "How many if one left?", "0", "direct"])
    rows.append(["COCO_val2014_000000403065.png", "Q?", "1", "New Q?", "0", "sideways"])
    rows.append(["COCO_val2014_000000403065.png", "Q?", "1"])
    write_csv(written["real"] / "C-VQA-Real_questions.csv", CVQA_HEADER, rows)
    synthetic = [list(row) for row in CVQA_SYNTHETIC]
    synthetic[1][2] = "7"
    write_csv(written["synthetic"] / "C-VQA-Synthetic_questions.csv", CVQA_HEADER, synthetic)

    message = import_problems(root)

    real, synth = "C-VQA/C-VQA-Real/C-VQA-Real_questions.csv", "C-VQA/C-VQA-Synthetic/C-VQA-Synthetic_questions.csv"
    assert "line 5" not in message and message.startswith("5 problem(s)")
    assert f"image 'C-VQA/C-VQA-Real/missing_image.jpg' not found: needed by 1 item ({real} line 6)" in message
    assert f"{real} line 7: empty 'query'" in message
    assert f"{real} line 8: type must be one of direct, indirect, boolean (got 'sideways')" in message
    assert f"{real} line 9: malformed row: 3 values but the header has 6 columns" in message
    assert f"{synth} line 3: 'answer' must be an option letter A–D (got '7')" in message
    assert_nothing_created(media_root)


def test_a_repeated_row_is_imported_as_its_own_item_with_a_warning(release, tmp_path, capsys):
    """The authors' real CSV holds one byte-identical duplicate row; the paper counts both rows."""
    root, written = release
    rows = [list(row) for row in CVQA_REAL]
    rows.insert(2, list(CVQA_REAL[0]))  # line 4 repeats line 2 byte for byte
    write_csv(written["real"] / "C-VQA-Real_questions.csv", CVQA_HEADER, rows)

    version = run_import(root)

    assert version.frozen and version.item_count == 6
    ids = sorted(version.items.values_list("external_id", flat=True))
    assert ids == ["real:COCO_val2014_000000402685.jpg:2", "real:COCO_val2014_000000402685.jpg:3",
                   "real:COCO_val2014_000000402685.jpg:4", "real:COCO_val2014_000000403065.png:5",
                   "synthetic:abs_counting_000001.png:2", "synthetic:abs_counting_000002.png:3"]
    out = capsys.readouterr().out
    assert ("warning: C-VQA/C-VQA-Real/C-VQA-Real_questions.csv: lines 2, 4 hold the same question (same img_path, "
            "query and new query; the rows are identical); each row is imported as an item of its own") in out
    first, second = (version.items.get(external_id=f"real:COCO_val2014_000000402685.jpg:{line}")
                     for line in (2, 4))
    assert first.payload["source"]["record"] == second.payload["source"]["record"]
    assert first.media.get().image_id == second.media.get().image_id
    # every item makes its own requests
    request_ids = {r.request_id for item in (first, second) for r in cvqa.BENCHMARK.requests(item, RequestOptions())}
    assert len(request_ids) == 4

    out = tmp_path / "export"
    call_command("export_benchmark", "cvqa", "--version", "v1", str(out))
    assert_same_release(root, out)
    again = run_import(out, "v2")
    assert again.item_count == 6 and again.checksum == version.checksum


def test_answers_are_checked_by_type_with_file_and_line(release, media_root):
    """Numerical answers are counts, boolean ones yes/no, synthetic queries carry options A–D: a row the
    evaluation cannot ask about is refused with its line, and nothing (no version, no image) is kept."""
    root, written = release
    rows = [list(row) for row in CVQA_REAL]
    rows[0][4] = "lots"  # direct: the new answer is no count
    rows[1][2] = "maybe"  # boolean
    write_csv(written["real"] / "C-VQA-Real_questions.csv", CVQA_HEADER, rows)
    synthetic = [list(row) for row in CVQA_SYNTHETIC]
    synthetic[0][1] = "How many flowers are outside the purple polygons?"  # the options are gone
    write_csv(written["synthetic"] / "C-VQA-Synthetic_questions.csv", CVQA_HEADER, synthetic)

    message = import_problems(root)

    real, synth = "C-VQA/C-VQA-Real/C-VQA-Real_questions.csv", "C-VQA/C-VQA-Synthetic/C-VQA-Synthetic_questions.csv"
    assert (f"{real} line 2 (real:COCO_val2014_000000402685.jpg:2): its evaluation requests cannot be built: "
            "C-VQA numerical answer 'lots' is not a number.") in message
    assert (f"{real} line 3 (real:COCO_val2014_000000402685.jpg:3): its evaluation requests cannot be built: "
            "C-VQA boolean answer 'maybe' is not yes or no.") in message
    assert f"{synth} line 2 (synthetic:abs_counting_000001.png:2): its evaluation requests cannot be built" in message
    assert message.startswith("3 problem(s)")
    assert_nothing_created(media_root)


def test_missing_column_is_named(release, media_root):
    root, written = release
    header = ["img_path", "query", "answer", "new query", "type"]
    write_csv(written["real"] / "C-VQA-Real_questions.csv", header,
              [[row[0], row[1], row[2], row[3], row[5]] for row in CVQA_REAL])

    message = import_problems(root)

    assert "C-VQA/C-VQA-Real/C-VQA-Real_questions.csv line 1: missing column 'new_answer'" in message
    assert_nothing_created(media_root)


def test_ambiguous_image_is_refused(release, media_root):
    root, written = release
    copy = written["real"] / "train2014" / "COCO_val2014_000000403065.png"
    copy.parent.mkdir()
    copy.write_bytes(written["images"]["COCO_val2014_000000403065.png"].read_bytes())

    message = import_problems(root)

    assert "line 4: img_path 'COCO_val2014_000000403065.png' matches several files" in message
    assert_nothing_created(media_root)


def test_wrong_layout_is_refused(tmp_path, media, media_root):
    root = tmp_path / "nleye-release"
    write_nleye(root, media)

    message = import_problems(root)

    assert "neither C-VQA-Real_questions.csv nor C-VQA-Synthetic_questions.csv found" in message
    assert_nothing_created(media_root)


def test_draft_import_and_export_refusals(release, tmp_path):
    root, _written = release
    call_command("import_benchmark", "cvqa", str(root), "--version", "draft", "--no-freeze")
    draft = BenchmarkVersion.objects.get(label="draft")
    assert not draft.frozen and draft.items.count() == 5

    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "notes.txt").write_text("keep me")
    with pytest.raises(CommandError, match="already exists and is not an empty folder"):
        call_command("export_benchmark", "cvqa", "--version", "draft", str(taken))
    assert [path.name for path in taken.iterdir()] == ["notes.txt"]
    with pytest.raises(CommandError, match="cvqa has no version 'nope'"):
        call_command("export_benchmark", "cvqa", "--version", "nope", str(tmp_path / "nope"))
    assert sorted(path.name for path in tmp_path.iterdir()) == ["cvqa", "media", "taken"]

    call_command("export_benchmark", "cvqa", "--version", "draft", str(tmp_path / "out"))
    assert_same_release(root, tmp_path / "out")
