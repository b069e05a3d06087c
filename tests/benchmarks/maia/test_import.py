"""MAIA release import and export: data_20%.json and the gen/mc row layout, videos found by number."""

import json
from functools import partial

import pytest
from django.core.management import call_command

from annotation import versions
from annotation.models import Benchmark, BenchmarkVersion, Video
from evaluation.benchmarks.base import RequestOptions
from evaluation.benchmarks.maia import benchmark as maia
from tests import release_fixtures
from tests.conftest import ingest_path
from tests.release_fixtures import (
    assert_nothing_created,
    assert_same_release,
    maia_entry,
    write_json,
    write_maia,
    write_maia_rows,
    write_nleye,
)

pytestmark = pytest.mark.django_db
run_import = partial(release_fixtures.run_import, "maia")
import_problems = partial(release_fixtures.import_problems, "maia")


@pytest.fixture
def release(tmp_path, media):
    root = tmp_path / "maia"
    return root, write_maia(root, media)


def test_round_trip_of_the_json_layout(release, tmp_path):
    root, written = release
    version = run_import(root)

    assert version.frozen and version.item_count == 5
    items = {item.external_id: item for item in version.items.prefetch_related("media__video")}
    assert sorted(items) == ["video1:Incertezza_A", "video1:SpazialeParziale_A", "video1:SpazialeParziale_B",
                             "video2:Controfattuale_A", "video2:Controfattuale_B"]
    payload = items["video1:SpazialeParziale_B"].payload
    entry = written["records"][0]["question_categories_B"][0]
    assert payload["kind"] == "question" and payload["video"] == "video1"
    assert payload["category"] == "SpazialeParziale_B" and payload["question"] == entry["question"]
    assert payload["answers"] == entry["answer"]
    assert payload["true_statements"] == entry["true_statement"]
    assert payload["false_statements"] == entry["false_statement"]
    assert payload["link"] == "https://example.org/maia/1"
    assert payload["source"]["index"] == [0, "question_categories_B", 0]

    # video1 is dataset/videos/1.mp4, video2 the older Videos/Video2.mp4
    links = {external_id: item.media.get() for external_id, item in items.items()}
    assert links["video1:Incertezza_A"].video_id == links["video1:SpazialeParziale_B"].video_id
    assert links["video2:Controfattuale_A"].video_id != links["video1:Incertezza_A"].video_id
    assert items["video2:Controfattuale_A"].payload["source"]["media"] == {"video": "Videos/Video2.mp4"}
    assert Video.objects.count() == 2

    requests = maia.BENCHMARK.requests(items["video1:SpazialeParziale_B"], RequestOptions())
    assert [request.variant for request in requests] == ["vsv"] * 8 + ["oevqa"]
    assert requests[-1].gold == entry["answer"]

    out = tmp_path / "export"
    call_command("export_benchmark", "maia", "--version", "v1", str(out))
    assert_same_release(root, out)
    assert run_import(out, "v2").checksum == version.checksum


def test_round_trip_of_the_row_layout(tmp_path, media):
    root = tmp_path / "maia-rows"
    write_maia_rows(root, media)
    version = run_import(root)

    items = {item.external_id: item for item in version.items.all()}
    assert sorted(items) == ["train:0", "train:1", "train:2"]
    payload = items["train:1"].payload
    entry = maia_entry(1, "Incertezza_B")
    assert payload["video"] == "video1" and payload["category"] == "Incertezza_B"
    assert payload["answers"] == entry["answer"]
    # mc rows put the true statement under answer1 or answer2 (target 0 or 1): read back in pool order
    assert payload["true_statements"] == entry["true_statement"]
    assert payload["false_statements"] == entry["false_statement"]
    assert len(payload["source"]["mc"]) == 8
    assert Video.objects.count() == 2

    out = tmp_path / "export"
    call_command("export_benchmark", "maia", "--version", "v1", str(out))
    assert_same_release(root, out)
    assert run_import(out, "v2").checksum == version.checksum


def test_every_problem_is_reported_and_nothing_is_created(release, media_root):
    root, written = release
    records = written["records"]
    records[0]["question_categories_A"][0]["answer"] = ["only one answer"]
    del records[0]["question_categories_A"][1]["question"]
    records[1]["question_categories_B"].append(maia_entry(2, "Controfattuale_B"))  # repeats [1]...[0]
    records.append({"video": "video3", "question_categories_A": [maia_entry(3, "Sentiment_A")]})
    records.append({"link": "https://example.org/maia/4", "question_categories_A": []})
    write_json(root / "dataset" / "data_20%.json", records)

    message = import_problems(root)

    data = "dataset/data_20%.json"
    assert f"{data}[0].question_categories_A[0]: field 'answer' must list 8 answers" in message
    assert f"{data}[0].question_categories_A[1]: missing field 'question'" in message
    assert (f"{data}[1].question_categories_B[1]: duplicate id 'video2:Controfattuale_B' "
            f"(first at {data}[1].question_categories_B[0])") in message
    assert f"video 'videos/3.mp4' not found: needed by 1 item ({data}[2].question_categories_A[0])" in message
    assert f"{data}[3]: missing field 'video'" in message
    assert_nothing_created(media_root)


def test_missing_video_skips_its_questions_only_when_asked(release, capsys):
    root, written = release
    written["videos"]["video2"].unlink()

    message = import_problems(root)
    assert ("video 'videos/2.mp4' not found: needed by 2 items (dataset/data_20%.json[1].question_categories_A[0], "
            "dataset/data_20%.json[1].question_categories_B[0])") in message

    version = run_import(root, "v1", "--skip-missing-media")
    assert sorted(version.items.values_list("external_id", flat=True)) == [
        "video1:Incertezza_A", "video1:SpazialeParziale_A", "video1:SpazialeParziale_B"]
    assert "2 items skipped" in capsys.readouterr().out


def test_missing_videos_are_summarised_one_line_per_file(release, capsys):
    """Like the public 20% release with most videos absent: one line per missing video, not per question."""
    root, written = release
    categories = ("SpazialeParziale_A", "Incertezza_A", "Controfattuale_B", "Sentiment_B")
    records = written["records"] + [
        {"video": f"video{n}", "question_categories_A": [maia_entry(n, c) for c in categories[:2]],
         "question_categories_B": [maia_entry(n, c) for c in categories[2:]]} for n in (3, 4, 5)]
    write_json(root / "dataset" / "data_20%.json", records)

    message = import_problems(root)

    lines = [line for line in message.splitlines() if "not found" in line]
    assert len(lines) == 3  # three absent videos, twelve questions
    data = "dataset/data_20%.json"
    assert lines[0] == (f"  - video 'videos/3.mp4' not found: needed by 4 items ({data}[2].question_categories_A[0], "
                        f"{data}[2].question_categories_A[1], {data}[2].question_categories_B[0] and 1 more)")
    assert message.startswith("3 problem(s)")
    assert "3 media file(s) missing, needed by 12 items in all" in message
    assert "pass --skip-missing-media" in message

    version = run_import(root, "v1", "--skip-missing-media")
    assert version.item_count == 5
    out = capsys.readouterr().out
    assert len([line for line in out.splitlines() if line.startswith("skipped: ")]) == 3
    assert "skipped: video 'videos/5.mp4' not found: needed by 4 items" in out
    assert "5 items, 2 media added, 0 already in the library, 12 items skipped; frozen" in out


def test_mc_rows_must_match_a_question(tmp_path, media, media_root):
    root = tmp_path / "maia-rows"
    write_maia_rows(root, media)
    lines = (root / "mc" / "train.jsonl").read_text().splitlines()
    orphan = dict(json.loads(lines[0]), question_category="Sentiment_A")
    broken = dict(json.loads(lines[1]), target=7)
    lines[0], lines[1] = json.dumps(orphan), json.dumps(broken)
    (root / "mc" / "train.jsonl").write_text("\n".join(lines) + "\n")

    message = import_problems(root)

    assert "mc/train.jsonl line 1: mc rows of video 'video1', category 'Sentiment_A' match no gen question" in message
    assert "mc/train.jsonl line 2: target must be 0 or 1, naming answer1 or answer2 (got 7)" in message
    assert_nothing_created(media_root)


def test_field_types_are_checked_with_file_entry_and_field(release, media_root):
    root, written = release
    records = written["records"]
    records[0]["link"] = 17
    first, second = records[0]["question_categories_A"]
    first["category"] = 5
    second["question"] = ["Che cosa succede?"]
    records[1]["question_categories_A"][0]["false_statement"] = [f"Falsa {k}." for k in range(7)] + [8]
    write_json(root / "dataset" / "data_20%.json", records)

    message = import_problems(root)

    data = "dataset/data_20%.json"
    assert f"{data}[0]: field 'link' must be a text (got 17)" in message
    assert f"{data}[1].question_categories_A[0]: field 'false_statement' must list 8 statements" in message
    assert_nothing_created(media_root)

    records[0]["link"] = "https://example.org/maia/1"
    write_json(root / "dataset" / "data_20%.json", records)
    message = import_problems(root)
    assert f"{data}[0].question_categories_A[0]: field 'category' must be a non-empty text (got 5)" in message
    assert (f"{data}[0].question_categories_A[1]: field 'question' must be a non-empty text "
            "(got ['Che cosa succede?'])") in message
    assert_nothing_created(media_root)


def test_row_layout_types_are_checked(tmp_path, media, media_root):
    root = tmp_path / "maia-rows"
    write_maia_rows(root, media)
    lines = (root / "mc" / "train.jsonl").read_text().splitlines()
    lines[3] = json.dumps(dict(json.loads(lines[3]), answer1=["una lista"]))
    (root / "mc" / "train.jsonl").write_text("\n".join(lines) + "\n")

    message = import_problems(root)

    assert "mc/train.jsonl line 4: field 'answer1' must be a non-empty text (got ['una lista'])" in message
    assert_nothing_created(media_root)


def test_an_unknown_category_is_refused_with_its_entry(release, media_root):
    """The evaluation knows the paper's 12 categories: a question under another one makes no requests."""
    root, written = release
    records = written["records"]
    records[1]["question_categories_B"][0]["category"] = "Astrologia_B"
    write_json(root / "dataset" / "data_20%.json", records)

    message = import_problems(root)

    assert ("dataset/data_20%.json[1].question_categories_B[0] (video2:Astrologia_B): its evaluation requests cannot "
            "be built: Unknown MAIA category 'Astrologia_B'.") in message
    assert_nothing_created(media_root)


def test_wrong_layout_is_refused(tmp_path, media, media_root):
    root = tmp_path / "nleye-release"
    write_nleye(root, media)

    message = import_problems(root)

    assert f"{root}: no data.json, data_20%.json or gen rows found" in message
    assert_nothing_created(media_root)


def test_curated_questions_are_written_into_data_json(media, tmp_path):
    version = BenchmarkVersion.objects.create(benchmark=Benchmark.objects.get(slug="maia"), label="curated")
    video = ingest_path(media.clip(4))
    entry = maia_entry(5, "Sentiment_B")
    payload = {"kind": "question", "video": "video5", "category": "Sentiment_B", "question": entry["question"],
               "answers": entry["answer"], "true_statements": entry["true_statement"],
               "false_statements": entry["false_statement"]}
    versions.freeze(versions.add_item(version, "q-5", payload, media={"video": video}).version)

    out = tmp_path / "out"
    call_command("export_benchmark", "maia", "--version", "curated", str(out))

    assert json.loads((out / "dataset" / "data.json").read_text()) == [
        {"video": "video5", "question_categories_B": [entry]}]
    assert (out / "dataset" / "videos" / "5.mp4").read_bytes() == media.clip(4).read_bytes()
    item = run_import(out, "again").items.get()
    assert item.external_id == "video5:Sentiment_B"
    assert {key: value for key, value in item.payload.items() if key != "source"} == payload
