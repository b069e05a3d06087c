"""NL-EYE release import and export: test_set.csv (header aliases) and images/<sample_id>/<role>.png."""

import hashlib
from functools import partial

import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command

from annotation import versions
from annotation.models import Benchmark, BenchmarkVersion, Image
from evaluation.benchmarks.base import RequestOptions
from evaluation.benchmarks.nleye import benchmark as nleye
from tests import release_fixtures
from tests.conftest import ingest_path
from tests.release_fixtures import (
    NLEYE_HEADER,
    NLEYE_ROWS,
    assert_nothing_created,
    assert_same_release,
    read_csv,
    write_csv,
    write_cvrr,
    write_nleye,
)

pytestmark = pytest.mark.django_db
run_import = partial(release_fixtures.run_import, "nleye")
import_problems = partial(release_fixtures.import_problems, "nleye")
ROLES = ("premise", "hypothesis1", "hypothesis2")


@pytest.fixture
def release(tmp_path, media):
    root = tmp_path / "nleye"
    return root, write_nleye(root, media)


def test_round_trip(release, tmp_path):
    root, written = release
    version = run_import(root)

    assert version.frozen and version.item_count == 2
    items = {item.external_id: item for item in version.items.prefetch_related("media__image")}
    assert sorted(items) == ["12", "37"]
    payload = items["37"].payload
    assert payload["kind"] == "triplet" and payload["label"] == 2
    assert payload["premise"] == NLEYE_ROWS[1][1]
    assert payload["hypothesis1"] == NLEYE_ROWS[1][2] and payload["hypothesis2"] == NLEYE_ROWS[1][3]
    # aliased headers ("Hypothesis 1", "gold_label", "category") land on the platform's names
    assert payload["reasoning_category"] == "social" and payload["explanation"] == NLEYE_ROWS[1][5]
    assert payload["source"]["columns"] == NLEYE_HEADER
    assert payload["source"]["record"] == dict(zip(NLEYE_HEADER, NLEYE_ROWS[1], strict=True))

    for sample_id, item in items.items():
        links = {link.role: link for link in item.media.all()}
        assert sorted(links) == sorted(ROLES)
        for role in ROLES:
            assert links[role].image.checksum == _sha256(written["images"][(sample_id, role)])
    assert Image.objects.count() == 6

    # the evaluation reads the imported payloads: gold hypothesis first in order 1
    order1 = nleye.BENCHMARK.requests(items["37"], RequestOptions(input_strategy="separate"))[0]
    assert order1.extra["shown"] == ["premise", "hypothesis2", "hypothesis1"]

    out = tmp_path / "export"
    call_command("export_benchmark", "nleye", "--version", "v1", str(out))
    assert_same_release(root, out)
    assert run_import(out, "v2").checksum == version.checksum


def _sha256(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_every_problem_is_reported_and_nothing_is_created(release, media_root):
    root, _written = release
    rows = [list(row) for row in NLEYE_ROWS]
    rows.append(["12", "Again.", "One.", "Two.", "1", "", "", "", "", ""])  # line 4: repeats sample 12
    rows.append(["50", "A premise.", "", "Two.", "1", "", "", "", "", ""])  # line 5: empty hypothesis
    rows.append(["51", "A premise.", "One.", "Two.", "3", "", "", "", "", ""])  # line 6: bad label
    rows.append(["52", "A premise.", "One.", "Two.", "2", "", "", "", "", ""])  # line 7: no images
    write_csv(root / "test_set.csv", NLEYE_HEADER, rows)
    (root / "images" / "12" / "hypothesis2.png").unlink()

    message = import_problems(root)

    assert "test_set.csv line 4: duplicate sample_id '12' (first at test_set.csv line 2)" in message
    assert "test_set.csv line 5: empty 'Hypothesis 1'" in message
    assert "test_set.csv line 6: 'gold_label' must be 1 or 2 (got '3')" in message
    assert "image 'images/12/hypothesis2.png' not found: needed by 1 item (test_set.csv line 2)" in message
    for role in ROLES:
        assert f"image 'images/52/{role}.png' not found: needed by 1 item (test_set.csv line 7)" in message
    assert "4 media file(s) missing, needed by 2 items in all" in message
    assert_nothing_created(media_root)


def test_missing_required_column_is_named(release, media_root):
    root, _written = release
    write_csv(root / "test_set.csv", NLEYE_HEADER[:4] + NLEYE_HEADER[5:], [row[:4] + row[5:] for row in NLEYE_ROWS])

    message = import_problems(root)

    assert "test_set.csv line 1: missing column 'label' (accepted headers: 'label', 'gold_label'" in message
    assert_nothing_created(media_root)


def test_failure_while_creating_rolls_back_rows_and_stored_files(release, media_root, monkeypatch):
    root, _written = release

    def refuse(version):
        raise ValidationError("the freeze step refused")

    monkeypatch.setattr(versions, "freeze", refuse)

    message = import_problems(root)

    assert "the freeze step refused" in message
    assert_nothing_created(media_root)  # the six stored images and their thumbnails are gone again


def test_wrong_layout_is_refused(tmp_path, media, media_root):
    root = tmp_path / "cvrr-release"
    write_cvrr(root, media)

    message = import_problems(root)

    assert f"{root}: no test_set.csv found" in message
    assert_nothing_created(media_root)


def test_curated_items_are_written_under_the_release_names(media, tmp_path):
    version = BenchmarkVersion.objects.create(benchmark=Benchmark.objects.get(slug="nleye"), label="curated")
    images = {role: ingest_path(media.image(n), probe=False) for n, role in enumerate(ROLES)}
    payload = {"kind": "triplet", "sample_id": "s-1", "premise": "A glass on the edge of a table.",
               "hypothesis1": "The glass lies broken on the floor.", "hypothesis2": "The glass flies to the ceiling.",
               "label": 1, "explanation": "Glasses fall down, not up.", "reasoning_category": "physical"}
    versions.freeze(versions.add_item(version, "s-1", payload, media=images).version)

    out = tmp_path / "out"
    call_command("export_benchmark", "nleye", "--version", "curated", str(out))

    assert read_csv(out / "test_set.csv") == [
        ["sample_id", "premise", "hypothesis1", "hypothesis2", "label", "explanation", "reasoning_category"],
        ["s-1", payload["premise"], payload["hypothesis1"], payload["hypothesis2"], "1", payload["explanation"],
         "physical"]]
    for n, role in enumerate(ROLES):
        assert (out / "images" / "s-1" / f"{role}.png").read_bytes() == media.image(n).read_bytes()
    item = run_import(out, "again").items.get()
    assert item.external_id == "s-1"
    assert {key: value for key, value in item.payload.items() if key != "source"} == payload
