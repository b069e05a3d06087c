"""C-VQA source questions (SPEC §2 "Source"): an image, its original question and answers, imported from
VQAv2 JSON or a CSV into an unfrozen sources version, with the images in the media library; never
frozen, never exported; malformed files write nothing. easy-vqa (a small real VQA set) gives the CSV."""

import csv
import io
import json
import shutil
import zipfile
from collections import Counter
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse
from easy_vqa import get_test_image_paths, get_test_questions
from PIL import Image as PILImage

from annotation import versions
from annotation.benchmarks.cvqa import sources
from annotation.exporters.base import ExportFailed, export_version
from annotation.models import BenchmarkVersion, CurationRecord, Image

pytestmark = pytest.mark.django_db
N_QUESTIONS = 40


@pytest.fixture
def easy_vqa_csv(tmp_path):
    """The first easy-vqa test questions as a CSV (image, question, answer, question_id) beside their images."""
    folder = tmp_path / "easy"
    (folder / "images").mkdir(parents=True)
    questions, answers, image_ids = get_test_questions()
    paths = get_test_image_paths()
    rows = list(zip(questions, answers, image_ids, strict=True))[:N_QUESTIONS]
    with (folder / "questions.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["image", "question", "answer", "question_id"])
        for number, (question, answer, image_id) in enumerate(rows):
            shutil.copy(paths[image_id], folder / "images" / f"{image_id}.png")
            writer.writerow([f"{image_id}.png", question, answer, f"easy-{number}"])
    return folder, rows


def coco_jpeg(source: Path, folder: Path, image_id: int) -> Path:
    """`source` as a COCO-named JPEG (`COCO_val2014_000000XXXXXX.jpg`)."""
    path = folder / f"COCO_val2014_{image_id:012d}.jpg"
    with PILImage.open(source) as picture:
        picture.convert("RGB").resize((96, 96)).save(path, "JPEG")
    return path


def vqa_files(folder: Path) -> tuple[dict, dict]:
    questions = {"questions": [
        {"image_id": 42, "question": "How many people are in the picture?", "question_id": 420},
        {"image_id": 42, "question": "Is the person wearing a helmet?", "question_id": 421},
        {"image_id": 42, "question": "What is the person wearing?", "question_id": 422},
        {"image_id": 7, "question": "How many cups are there?", "question_id": 70},
        {"image_id": 7, "question": "How many beans are there?", "question_id": 71},
    ]}

    def note(qid, image_id, answers, majority, kind):
        return {"question_id": qid, "image_id": image_id, "multiple_choice_answer": majority, "answer_type": kind,
                "answers": [{"answer": a, "answer_confidence": "yes", "answer_id": i + 1}
                            for i, a in enumerate(answers)]}

    annotations = {"annotations": [
        note(420, 42, ["1", "1", "one", "2"], "1", "number"),
        note(421, 42, ["yes", "yes", "no"], "yes", "yes/no"),
        note(422, 42, ["space suit", "suit"], "space suit", "other"),
        note(70, 7, ["1", "1"], "1", "number"),
        note(71, 7, ["a lot", "many"], "a lot", "number"),
    ]}
    (folder / "v2_OpenEnded_mscoco_val2014_questions.json").write_text(json.dumps(questions))
    (folder / "v2_mscoco_val2014_annotations.json").write_text(json.dumps(annotations))
    return questions, annotations


def test_easy_vqa_csv_import_types_questions_and_stores_images_once(easy_vqa_csv, curator):
    folder, rows = easy_vqa_csv
    out = io.StringIO()
    call_command("cvqa_import_sources", str(folder / "questions.csv"), "--version", "sources-1",
                 "--images", str(folder / "images"), "--curator", curator.username, stdout=out)
    version = BenchmarkVersion.objects.get(benchmark__slug="cvqa", label="sources-1")
    assert not version.frozen and version.source == BenchmarkVersion.Source.CURATION
    yes_no = [(n, q, a, image_id) for n, (q, a, image_id) in enumerate(rows) if a in ("yes", "no")]
    others = [row for row in rows if row[1] not in ("yes", "no")]
    assert yes_no and others  # easy-vqa asks both kinds
    items = {item.external_id: item for item in version.items.prefetch_related("media__image")}
    assert set(items) == {f"source:easy-{n}" for n, *_ in yes_no}
    for n, question, answer, image_id in yes_no:
        item = items[f"source:easy-{n}"]
        assert item.payload["kind"] == "source" and item.payload["type"] == "boolean"
        payload = item.payload
        assert (payload["question"], payload["answer"], payload["answers"]) == (question, answer, [answer])
        (use,) = item.media.all()
        assert use.role == "image" and use.image.original_name == f"{image_id}.png"
        assert item.curation.stage == sources.SOURCE and item.curation.author == curator
    # one library image per distinct easy-vqa image, whatever the number of questions about it
    assert Image.objects.count() == len({image_id for *_, image_id in yes_no})
    text = out.getvalue()
    assert f"{len(yes_no)} question(s) added ({len(yes_no)} boolean)" in text
    assert f"{len(others)} skipped" in text and "neither a whole number nor yes/no" in text

    again = io.StringIO()  # by the command's old name, an alias
    call_command("import_cvqa_sources", str(folder / "questions.csv"), "--version", "sources-1",
                 "--images", str(folder / "images"), stdout=again)
    assert f"0 question(s) added (none), {len(yes_no)} already there" in again.getvalue()
    assert version.items.count() == len(yes_no) and Image.objects.count() == len({r[3] for r in yes_no})


def test_source_items_are_never_frozen_nor_exported(easy_vqa_csv, tmp_path):
    folder, _rows = easy_vqa_csv
    report = sources.import_sources(folder / "questions.csv", "sources-x", images=folder / "images")
    with pytest.raises(versions.FreezeRefused) as refused:
        versions.freeze(report.version)
    assert "is a source question" in str(refused.value.messages)
    assert not BenchmarkVersion.objects.get(pk=report.version.pk).frozen
    with pytest.raises(ExportFailed, match="never exported as a release"):
        export_version("cvqa", "sources-x", tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_vqa_json_upload_on_the_page_with_zipped_coco_images(curator_client, tmp_path, astronaut, coffee):
    vqa_files(tmp_path)
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as zipped:
        for source, image_id in ((astronaut, 42), (coffee, 7)):
            path = coco_jpeg(source, tmp_path, image_id)
            zipped.write(path, f"val2014/{path.name}")
    upload = {
        "version": "coco-sources", "format": "vqa",
        "questions": SimpleUploadedFile("q.json",
                                        (tmp_path / "v2_OpenEnded_mscoco_val2014_questions.json").read_bytes()),
        "annotations": SimpleUploadedFile("a.json", (tmp_path / "v2_mscoco_val2014_annotations.json").read_bytes()),
        "images": SimpleUploadedFile("images.zip", archive.getvalue(), content_type="application/zip"),
    }
    response = curator_client.post(reverse("cvqa-sources"), upload)
    assert response.status_code == 200, response.content.decode()[:2000]
    page = response.content.decode()
    assert 'id="import-report"' in page and "3 questions added" in page
    version = BenchmarkVersion.objects.get(label="coco-sources")
    payloads = {item.external_id: item.payload for item in version.items.all()}
    assert set(payloads) == {"source:420", "source:421", "source:70"}
    assert payloads["source:420"]["type"] == "numerical" and payloads["source:420"]["answer"] == "1"
    assert payloads["source:420"]["answers"] == ["1", "1", "one", "2"] and payloads["source:420"]["image_id"] == "42"
    assert payloads["source:421"]["type"] == "boolean" and payloads["source:421"]["answer"] == "yes"
    assert "answer type &#x27;other&#x27;" in page or "answer type 'other'" in page  # 422 skipped
    assert "not a whole number" in page  # 71: "a lot"
    assert Image.objects.count() == 2
    names = set(Image.objects.values_list("original_name", flat=True))
    assert names == {"COCO_val2014_000000000042.jpg", "COCO_val2014_000000000007.jpg"}
    hub = curator_client.get(reverse("cvqa-curation")).content.decode()
    assert "coco-sources" in hub and "3 questions · 1 boolean · 2 numerical" in hub


def test_vqa_folder_on_the_command_line(tmp_path, astronaut, coffee):
    vqa_files(tmp_path)
    coco_jpeg(astronaut, tmp_path, 42)
    coco_jpeg(coffee, tmp_path, 7)
    out = io.StringIO()
    call_command("cvqa_import_sources", str(tmp_path), "--version", "v", "--format", "vqa", stdout=out)
    assert "3 question(s) added (1 boolean, 2 numerical)" in out.getvalue()
    assert CurationRecord.objects.filter(item__version__label="v", stage="source").count() == 3


def _nothing_written():
    assert not BenchmarkVersion.objects.filter(benchmark__slug="cvqa").exists()
    assert Image.objects.count() == 0


def test_malformed_files_write_nothing(tmp_path, easy_vqa_csv, bad_files, curator_client):
    folder, _rows = easy_vqa_csv
    missing = folder / "no-question.csv"
    missing.write_text("image,answer\n1.png,yes\n")
    with pytest.raises(CommandError, match="missing column 'question'"):
        call_command("cvqa_import_sources", str(missing), "--version", "s", "--images", str(folder / "images"))
    ragged = folder / "ragged.csv"
    ragged.write_text((folder / "questions.csv").read_text() + "1.png,Is there a circle?\n")
    with pytest.raises(CommandError, match="malformed row"):
        call_command("cvqa_import_sources", str(ragged), "--version", "s", "--images", str(folder / "images"))
    _nothing_written()

    # a broken image among good ones: nothing of the rest is stored either
    broken = tmp_path / "broken"
    shutil.copytree(folder / "images", broken)
    first = next(iter(sorted(broken.iterdir())))
    first.write_bytes(bad_files.garbage_png().read_bytes())
    with pytest.raises(CommandError, match="cannot be imported"):
        call_command("cvqa_import_sources", str(folder / "questions.csv"), "--version", "s", "--images", str(broken))
    _nothing_written()

    response = curator_client.post(reverse("cvqa-sources"), {
        "version": "s", "format": "vqa", "questions": SimpleUploadedFile("q.json", b"{not json"),
        "annotations": SimpleUploadedFile("a.json", b'{"annotations": []}'),
        "images": SimpleUploadedFile("x.png", (folder / "images" / first.name).read_bytes())})
    assert response.status_code == 400 and 'id="import-errors"' in response.content.decode()
    response = curator_client.post(reverse("cvqa-sources"), {
        "version": "s", "format": "vqa", "questions": SimpleUploadedFile("q.json", b'{"questions": {}}'),
        "annotations": SimpleUploadedFile("a.json", b'{"annotations": []}'),
        "images": SimpleUploadedFile("x.png", (folder / "images" / first.name).read_bytes())})
    assert response.status_code == 400 and "must be a JSON object with a list" in response.content.decode()
    response = curator_client.post(reverse("cvqa-sources"), {"version": "s", "format": "csv"})
    assert response.status_code == 400 and "Upload the CSV file" in response.content.decode()
    _nothing_written()


def test_a_version_with_release_items_or_frozen_is_refused(easy_vqa_csv, draft_version):
    folder, _rows = easy_vqa_csv
    versions.add_item(draft_version, "real:1", {"kind": "real", "type": "direct", "query": "How many?",
                                                "answer": "2", "new_query": "How many if one left?",
                                                "new_answer": "1"})
    with pytest.raises(sources.SourceImportFailed, match="not sources"):
        sources.import_sources(folder / "questions.csv", draft_version.label, images=folder / "images")
    assert draft_version.items.count() == 1 and Image.objects.count() == 0


def test_types_are_inferred_from_the_majority_answer(tmp_path, astronaut):
    shutil.copy(astronaut, tmp_path / "a.png")
    (tmp_path / "q.csv").write_text(
        "image,question,answers\n"
        "a.png,How many people?,2|2|3\n"
        "a.png,Is it day?,no;yes;no\n"
        "a.png,What colour?,white|white\n")
    report = sources.import_sources(tmp_path / "q.csv", "inferred")
    payloads = sorted((i.payload["question"], i.payload["type"], i.payload["answer"])
                      for i in report.version.items.all())
    assert payloads == [("How many people?", "numerical", "2"), ("Is it day?", "boolean", "no")]
    assert len(report.skipped) == 1 and "line 4" in report.skipped[0]
    assert Counter(report.counts) == {"numerical": 1, "boolean": 1}


def test_a_sources_version_page_links_to_the_curation_pages(easy_vqa_csv, curator_client):
    folder, _rows = easy_vqa_csv
    report = sources.import_sources(folder / "questions.csv", "linked", images=folder / "images")
    page = curator_client.get(reverse("version-detail", args=[report.version.pk])).content.decode()
    assert reverse("cvqa-sources") in page and reverse("cvqa-subgroups") in page
