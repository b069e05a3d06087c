"""Subgroup labels of library images for C-VQA's bias analysis (seeds/001 §4.3): imported from a CSV keyed
by COCO image id, file name or checksum (unknown images reported, malformed files write nothing), edited
by curators, and read by the C-VQA requests so that the subgroup metric (drop per subgroup, gap) comes
from them; a payload `subgroup` wins."""

import io

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse
from PIL import Image as PILImage

from annotation import versions
from annotation.benchmarks.cvqa import subgroups
from annotation.models import Benchmark, BenchmarkVersion, SubgroupLabel
from evaluation import scoring
from evaluation.benchmarks.base import RequestOptions
from evaluation.benchmarks.cvqa import benchmark as cvqa
from tests.conftest import ingest_path

pytestmark = pytest.mark.django_db


@pytest.fixture
def coco_images(tmp_path, astronaut, coffee, curator):
    """Three library images named like COCO's: ids 42 and 7 (from the samples) and 1234 (a plain colour)."""
    made = {}
    for source, image_id in ((astronaut, 42), (coffee, 7), (None, 1234)):
        path = tmp_path / f"COCO_val2014_{image_id:012d}.jpg"
        picture = PILImage.open(source).convert("RGB") if source else PILImage.new("RGB", (64, 64), (10, 200, 30))
        picture.resize((80, 80)).save(path, "JPEG")
        made[image_id] = ingest_path(path, user=curator)
    return made


def test_import_by_coco_id_file_name_and_checksum_reports_unknown_images(tmp_path, coco_images, curator):
    csv = tmp_path / "gender.csv"
    csv.write_text("image_id,perceived_gender\n"
                   "42,female\n"
                   "COCO_val2014_000000000007.jpg,male\n"
                   f"{coco_images[1234].checksum},male\n"
                   "99,female\n"
                   "missing.jpg,male\n")
    out = io.StringIO()
    call_command("cvqa_import_subgroups", str(csv), "--curator", curator.username, stdout=out)
    labels = dict(SubgroupLabel.objects.values_list("image_id", "label"))
    assert labels == {coco_images[42].pk: "female", coco_images[7].pk: "male", coco_images[1234].pk: "male"}
    assert set(SubgroupLabel.objects.values_list("source", flat=True)) == {"gender.csv"}
    assert SubgroupLabel.objects.filter(updated_by=curator).count() == 3
    text = out.getvalue()
    assert "3 label(s) set, 0 unchanged, 2 image(s) not found (female: 1, male: 2)" in text
    assert "no library image '99'" in text and "no library image 'missing.jpg'" in text

    again = subgroups.import_labels(csv)
    assert (again.set, again.unchanged) == (0, 3)


def test_malformed_csv_writes_nothing(tmp_path, coco_images, curator_client):
    SubgroupLabel.objects.create(image=coco_images[42], label="female", source="first.csv")
    cases = {
        "no-label.csv": "image\n42\n",
        "empty-label.csv": "image,label\n7,male\n42,\n",
        "two-labels.csv": "image,label\n7,male\nCOCO_val2014_000000000007.jpg,female\n",
        "ragged.csv": "image,label\n7,male,extra\n",
        "long.csv": "image,label\n7," + "x" * 70 + "\n",
    }
    for name, content in cases.items():
        path = tmp_path / name
        path.write_text(content)
        with pytest.raises(CommandError, match="Nothing imported"):
            call_command("cvqa_import_subgroups", str(path))
    with pytest.raises(CommandError, match="Nothing imported"):  # by the command's old name, an alias
        call_command("import_cvqa_subgroups", str(tmp_path / "ragged.csv"))
    assert list(SubgroupLabel.objects.values_list("image_id", "label")) == [(coco_images[42].pk, "female")]

    response = curator_client.post(reverse("cvqa-subgroups"), {
        "table": SimpleUploadedFile("labels.csv", cases["two-labels.csv"].encode())})
    assert response.status_code == 400 and "was given &#x27;male&#x27;" in response.content.decode()
    response = curator_client.post(reverse("cvqa-subgroups"), {"table": SimpleUploadedFile("labels.txt", b"x")})
    assert response.status_code == 400 and "a CSV file is needed" in response.content.decode()
    assert SubgroupLabel.objects.count() == 1


def test_page_import_and_curator_edit(coco_images, curator_client, curator, client, annotator):
    response = curator_client.post(reverse("cvqa-subgroups"), {
        "table": SimpleUploadedFile("published.csv", b"file_name,label\nCOCO_val2014_000000000042.jpg,female\n"
                                                     b"nope.jpg,male\n")})
    page = response.content.decode()
    assert response.status_code == 200 and 'id="label-report"' in page and "1 label set" in page
    assert "no library image &#x27;nope.jpg&#x27;" in page

    response = curator_client.post(reverse("cvqa-subgroup-set"), {"image": coco_images[42].pk, "label": " male "})
    assert response.status_code == 302
    row = SubgroupLabel.objects.get(image=coco_images[42])
    assert (row.label, row.source, row.updated_by) == ("male", subgroups.EDITED, curator)
    listing = curator_client.get(reverse("cvqa-subgroups")).content.decode()
    assert f'data-image-id="{coco_images[42].pk}"' in listing and "male" in listing

    response = curator_client.post(reverse("cvqa-subgroup-set"), {"image": coco_images[42].pk, "label": "x" * 65})
    assert response.status_code == 400 and SubgroupLabel.objects.get(image=coco_images[42]).label == "male"
    response = curator_client.post(reverse("cvqa-subgroup-set"), {"image": 987654, "label": "male"})
    assert response.status_code == 404
    response = curator_client.post(reverse("cvqa-subgroup-set"), {"image": coco_images[42].pk, "label": ""})
    assert response.status_code == 302 and not SubgroupLabel.objects.filter(image=coco_images[42]).exists()
    with pytest.raises(subgroups.SubgroupError) as refused:
        subgroups.set_label(annotator, coco_images[7].pk, "male")
    assert refused.value.status == 403 and not SubgroupLabel.objects.exists()


def _real(version, external_id, image, subgroup=None):
    payload = {"kind": "real", "type": "boolean", "query": "Is there a person?", "answer": "yes",
               "new_query": "Would there be a person if everyone left?", "new_answer": "no"}
    if subgroup:
        payload["subgroup"] = subgroup
    return versions.add_item(version, external_id, payload, {"image": image})


def test_imported_labels_give_the_drop_per_subgroup(tmp_path, coco_images, curator):
    (tmp_path / "gender.csv").write_text("image,label\n42,female\n7,male\n")
    subgroups.import_labels(tmp_path / "gender.csv", curator)
    version = BenchmarkVersion.objects.create(benchmark=Benchmark.objects.get(slug="cvqa"), label="real-1",
                                              created_by=curator)
    items = [_real(version, "f1", coco_images[42]), _real(version, "f2", coco_images[42]),
             _real(version, "m1", coco_images[7]), _real(version, "n1", coco_images[1234]),
             _real(version, "p1", coco_images[7], subgroup="payload-group")]
    versions.freeze(version)
    requests = [r for item in items for r in cvqa.BENCHMARK.requests(item, RequestOptions())]
    by_id = {r.request_id: r for r in requests}
    assert by_id["f1:original"].extra["subgroup"] == "female" and by_id["f1:original"].extra["subgroup_from"] == "label"
    assert by_id["m1:counterfactual"].extra["subgroup"] == "male"
    assert "subgroup" not in by_id["n1:original"].extra  # its image has no label
    assert by_id["p1:original"].extra["subgroup"] == "payload-group"  # the payload wins over the label
    assert by_id["p1:original"].extra["subgroup_from"] == "payload"

    answers = {"f1:original": "yes", "f1:counterfactual": "no", "f2:original": "yes", "f2:counterfactual": "yes",
               "m1:original": "yes", "m1:counterfactual": "yes", "n1:original": "yes", "n1:counterfactual": "no",
               "p1:original": "no", "p1:counterfactual": "no"}
    collected = scoring.collect(requests, [{"request_id": rid, "response": text} for rid, text in answers.items()])
    metrics = cvqa.BENCHMARK.score(requests, collected.responses)
    female, male = metrics["subgroups"]["female"], metrics["subgroups"]["male"]
    assert (female["original_accuracy"], female["counterfactual_accuracy"], female["diff"]) == (1.0, 0.5, 0.5)
    assert (male["original_accuracy"], male["counterfactual_accuracy"], male["diff"]) == (1.0, 0.0, 1.0)
    assert set(metrics["subgroups"]) == {"female", "male", "payload-group"}
    assert metrics["subgroup_gap"]["largest_diff"] == "male"
