"""A frozen NL-EYE version built by curation (items made with the ORM, library images with arbitrary
file names) exports in the release layout and imports back with the same payloads and image bytes."""

import csv
import hashlib
import json
import shutil

import pytest
from django.core.management import call_command

from annotation import versions
from annotation.models import Benchmark, BenchmarkItem, BenchmarkVersion, ItemMedia
from tests.conftest import ingest_path
from tests.release_fixtures import assert_same_release, run_import

pytestmark = pytest.mark.django_db
ROLES = ("premise", "hypothesis1", "hypothesis2")

PAYLOADS = {
    "c-101": {"kind": "triplet", "sample_id": "c-101", "premise": "A boy holds a broken kite string.",
              "hypothesis1": "The kite is stuck in a tree.", "hypothesis2": "The kite flies high in the sky.",
              "label": 1, "explanation": "A broken string means the kite flew away and got stuck.",
              "reasoning_category": "physical", "domain": "daily life & hospitality", "time_direction": "forward",
              "time_duration": "short",
              "human_explanations": ["The string snapped, so the kite drifted into the tree.",
                                     "Kites with cut strings land somewhere, \"like\" a tree, naïvely."]},
    "c-102": {"kind": "triplet", "sample_id": "c-102", "premise": "A woman reads a diploma on a stage.",
              "hypothesis1": "She failed her exams.", "hypothesis2": "She graduated today.",
              "label": 2, "explanation": "Diplomas are handed out on stage at graduation.",
              "reasoning_category": "cultural", "domain": "education", "time_direction": "backward",
              "time_duration": "long"},
}
# slot → the sample picture and the arbitrary name the designer's library gave it
FILES = {
    ("c-101", "premise"): ("astronaut.png", "premise FINAL v3.png"),
    ("c-101", "hypothesis1"): ("coffee.png", "attempt-17 (chosen).PNG"),
    ("c-101", "hypothesis2"): ("chelsea.png", "kite_sky.png"),
    ("c-102", "premise"): ("camera.png", "stage.png"),
    ("c-102", "hypothesis1"): ("coins.png", "exam-fail-2.png"),
    ("c-102", "hypothesis2"): ("rocket.jpg", "graduation pick.jpeg"),  # a JPEG keeps its bytes, as .jpg
}


def sha256(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def curated(tmp_path, skimage_data, curator):
    """A frozen version made as curation makes one: items with the importer's payloads, each slot's
    image a library image linked as ItemMedia."""
    library = tmp_path / "library"
    library.mkdir()
    version = BenchmarkVersion.objects.create(benchmark=Benchmark.objects.get(slug="nleye"), label="curated-1")
    originals = {}
    for external_id, payload in PAYLOADS.items():
        item = BenchmarkItem.objects.create(version=version, external_id=external_id, payload=payload)
        for role in ROLES:
            sample, name = FILES[(external_id, role)]
            path = library / name
            shutil.copyfile(skimage_data / sample, path)
            image = ingest_path(path, user=curator)
            ItemMedia.objects.create(item=item, role=role, image=image)
            originals[(external_id, role)] = path
    return versions.freeze(version), originals


def test_a_curated_version_exports_in_the_release_layout_and_imports_back(curated, tmp_path):
    version, originals = curated
    out = tmp_path / "export"

    call_command("export_benchmark", "nleye", "--version", "curated-1", str(out))

    files = sorted(path.relative_to(out).as_posix() for path in out.rglob("*") if path.is_file())
    assert files == ["images/c-101/hypothesis1.png", "images/c-101/hypothesis2.png", "images/c-101/premise.png",
                     "images/c-102/hypothesis1.png", "images/c-102/hypothesis2.jpg", "images/c-102/premise.png",
                     "test_set.csv"]
    with (out / "test_set.csv").open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert [row["sample_id"] for row in rows] == ["c-101", "c-102"]
    assert rows[0]["label"] == "1" and rows[1]["label"] == "2"
    assert json.loads(rows[0]["human_explanations"]) == PAYLOADS["c-101"]["human_explanations"]
    assert rows[1]["human_explanations"] == ""
    for (external_id, role), path in originals.items():
        written = next((out / "images" / external_id).glob(f"{role}.*"))
        assert written.read_bytes() == path.read_bytes()

    again = run_import("nleye", out, "reimported")

    assert again.frozen and again.item_count == 2
    items = {item.external_id: item for item in again.items.prefetch_related("media__image")}
    assert sorted(items) == sorted(PAYLOADS)
    for external_id, payload in PAYLOADS.items():
        imported = dict(items[external_id].payload)
        assert imported.pop("source")["file"] == "test_set.csv"
        assert imported == payload
        links = {link.role: link.image for link in items[external_id].media.all()}
        assert sorted(links) == sorted(ROLES)
        for role in ROLES:
            assert links[role].checksum == sha256(originals[(external_id, role)])
            with links[role].file.open("rb") as handle:
                assert handle.read() == originals[(external_id, role)].read_bytes()

    # the re-imported version writes the same release again, file for file
    second = tmp_path / "export-2"
    call_command("export_benchmark", "nleye", "--version", "reimported", str(second))
    assert_same_release(out, second)


def test_an_item_without_a_sample_id_is_written_under_its_external_id(curator, skimage_data, tmp_path):
    payload = {key: value for key, value in PAYLOADS["c-102"].items() if key != "sample_id"}
    images = {role: ingest_path(skimage_data / name, user=curator)
              for role, name in zip(ROLES, ("astronaut.png", "coffee.png", "chelsea.png"), strict=True)}
    version = BenchmarkVersion.objects.create(benchmark=Benchmark.objects.get(slug="nleye"), label="no-ids")
    versions.add_item(version, "triplet-9", payload, images)
    versions.freeze(version)
    out = tmp_path / "export"

    call_command("export_benchmark", "nleye", "--version", "no-ids", str(out))

    with (out / "test_set.csv").open(encoding="utf-8", newline="") as handle:
        (row,) = list(csv.DictReader(handle))
    assert row["sample_id"] == "triplet-9"
    assert sorted(path.name for path in (out / "images" / "triplet-9").iterdir()) == [
        "hypothesis1.png", "hypothesis2.png", "premise.png"]
    item = run_import("nleye", out, "back").items.get()
    assert item.external_id == "triplet-9" and item.payload["sample_id"] == "triplet-9"
