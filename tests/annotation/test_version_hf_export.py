"""The `hf` layout of benchmark versions (annotation.exporters.hf): an imported version of each of the five
benchmarks opens with `datasets.load_dataset` and gives back its items (ids, payload fields as typed
columns and structs, images decoded, videos at their relative paths); bad input is refused and writes
nothing; the version page starts the export as a job whose zip its owner downloads (an annotator is refused)."""

import io
import json
import zipfile

import datasets
import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse
from PIL import Image as PILImage

from annotation import version_exports
from annotation.benchmarks import registry
from annotation.exporters.base import release_order, source_of
from generation.models import Job
from tests import hf_support
from tests.conftest import logged_in_api, logged_in_client, make_user
from tests.release_fixtures import (
    assert_same_release,
    run_import,
    write_blackswan,
    write_cvqa,
    write_cvrr,
    write_maia,
    write_nleye,
)

pytestmark = pytest.mark.django_db

WRITERS = {"blackswan": write_blackswan, "cvqa": write_cvqa, "nleye": write_nleye, "cvrr": write_cvrr,
           "maia": write_maia}
# record kinds in the order of their configs (the first is the default) and the media columns by role
KINDS = {"blackswan": ["video", "mcq", "yn"], "cvqa": ["real", "synthetic"], "nleye": ["triplet"], "cvrr": ["qa"],
         "maia": ["question"]}
MEDIA_COLUMNS = {"blackswan": {"video": "video"}, "cvqa": {"image": "image"},
                 "nleye": {"premise": "premise_image", "hypothesis1": "hypothesis1_image",
                           "hypothesis2": "hypothesis2_image"},
                 "cvrr": {"video": "video"}, "maia": {"video": "video_file"}}


def imported(slug: str, tmp_path, media):
    root = tmp_path / "release"
    WRITERS[slug](root, media)
    return root, run_import(slug, root)


def expected_fields(item) -> dict:
    """The item's payload as the export gives it: without `kind` and the import's provenance."""
    provenance = bool(source_of(item))
    return {key: value for key, value in item.payload.items()
            if key != "kind" and not (key == "source" and provenance)}


def check_rows(folder, version, slug: str, cache) -> dict:
    """Open every config of an exported folder with `load_dataset` and compare its rows with the database."""
    configs = hf_support.checked_card(folder)
    assert sorted(configs) == sorted(KINDS[slug])  # the card lists them by name
    assert [name for name, config in configs.items() if config["default"]] == [KINDS[slug][0]]
    items = sorted(version.items.prefetch_related("media__video", "media__image"), key=release_order)
    for kind, config in configs.items():
        rows = hf_support.load(folder, kind if len(configs) > 1 else None, cache=cache, split="test")
        expected = [item for item in items if item.payload["kind"] == kind]
        assert rows["item_id"] == [item.pk for item in expected]
        assert rows["external_id"] == [item.external_id for item in expected]
        assert rows["kind"] == [kind] * len(expected)
        text = hf_support.json_text_columns(config["files"][0])
        media_columns = set(MEDIA_COLUMNS[slug].values())
        raw = rows.cast_column(MEDIA_COLUMNS[slug].get("image"), datasets.Image(decode=False)) \
            if slug == "cvqa" else rows
        for index, (row, item) in enumerate(zip(rows, expected, strict=True)):
            fields = expected_fields(item)
            for name, value in row.items():
                if name in ("item_id", "external_id", "kind") or name in media_columns:
                    continue
                if name in text and value is not None:
                    value = json.loads(value)
                assert hf_support.without_nulls(value) == hf_support.without_nulls(fields.get(name)), (kind, name)
            assert set(fields) <= set(row), "every payload field is a column"
            links = {link.role: link for link in item.media.all()}
            assert set(links) == {role for role, column in MEDIA_COLUMNS[slug].items() if row[column] is not None}
            for role, link in links.items():
                column = MEDIA_COLUMNS[slug][role]
                if link.image_id:
                    decoded = row[column]
                    assert isinstance(decoded, PILImage.Image)
                    with link.image.file.open("rb") as handle:
                        original = handle.read()
                    assert decoded.size == PILImage.open(io.BytesIO(original)).size
                    if slug == "cvqa":
                        stored = raw[index][column]
                        assert stored["bytes"] == original and (folder / stored["path"]).read_bytes() == original
                        assert stored["path"].startswith("media/")
                else:
                    assert row[column].startswith("media/")
                    with link.video.file.open("rb") as handle:
                        assert (folder / row[column]).read_bytes() == handle.read()
    return configs


@pytest.mark.parametrize("slug", sorted(WRITERS))
def test_each_benchmark_s_version_opens_with_load_dataset(slug, tmp_path, media, capsys):
    _, version = imported(slug, tmp_path, media)
    out = tmp_path / "hf"
    call_command("export_benchmark", slug, "--version", "v1", "--layout", "hf", str(out))
    assert f"{version.items.count()} items" in capsys.readouterr().out
    configs = check_rows(out, version, slug, tmp_path / "cache")
    card = next(iter(configs.values()))["text"]
    assert f"# {registry.get(slug).name} · v1" in card and version.checksum in card
    assert "load_dataset" in card and all(f"## Columns of `{kind}`" in card for kind in KINDS[slug])
    assert sorted(path.name for path in out.iterdir()) == ["README.md", "data", "media"]


def test_blackswan_fields_are_typed_and_mixed_ones_stay_json_text(tmp_path, media):
    """VAR_Data's split times are numbers, its ground truths lists of texts; `set_id` and `index` hold whatever
    the release wrote for each record."""
    _, version = imported("blackswan", tmp_path, media)
    out = tmp_path / "hf"
    call_command("export_benchmark", "blackswan", "--version", "v1", "--layout", "hf", str(out))
    configs = hf_support.checked_card(out)
    video = configs["video"]["features"]
    assert video["preevent"].dtype == "float64" and video["task1_gt"].feature.dtype == "string"
    assert video["multivideo"].dtype == "bool" and video["item_id"].dtype == "int64"
    mcq = configs["mcq"]["features"]
    assert mcq["mcq_label"].dtype == "int64" and mcq["mcq_options"].feature.dtype == "string"
    rows = hf_support.load(out, "video", cache=tmp_path / "cache", split="test")
    first = rows[0]
    assert (first["id"], first["preevent"], first["task2_checkboxes"]) == ("1001", 0.2, ["yes", "no", "no"])
    assert first["video"] == "media/videos/1001.mp4"
    assert rows[1]["pc_comp"] is None  # the second record has none
    assert "| `preevent` | `double` | a number |" in configs["video"]["text"]


def test_nleye_images_decode_and_the_card_explains_the_columns(tmp_path, media):
    _, version = imported("nleye", tmp_path, media)
    out = tmp_path / "hf"
    call_command("export_benchmark", "nleye", "--version", "v1", "--layout", "hf", str(out))
    (config,) = hf_support.checked_card(out).values()
    assert isinstance(config["features"]["premise_image"], datasets.Image)
    assert config["features"]["premise"].dtype == "string" and config["features"]["label"].dtype == "int64"
    assert "| `premise_image` | `image` | the `premise` image" in config["text"]
    dataset = hf_support.load(out, cache=tmp_path / "cache", split="test")
    assert dataset[0]["premise_image"].mode in ("L", "RGB", "RGBA") and dataset[0]["label"] == 1
    assert sorted(p.relative_to(out).as_posix() for p in (out / "media").rglob("*.png"))[0] == \
        "media/images/12/hypothesis1.png"


def test_bad_input_gives_a_clear_error_and_writes_nothing(tmp_path, media):
    imported("cvrr", tmp_path, media)
    with pytest.raises(CommandError, match="cvrr has no version 'v9'"):
        call_command("export_benchmark", "cvrr", "--version", "v9", "--layout", "hf", str(tmp_path / "nothing"))
    assert not (tmp_path / "nothing").exists()
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "mine.txt").write_text("keep")
    with pytest.raises(CommandError, match="already exists and is not an empty folder"):
        call_command("export_benchmark", "cvrr", "--version", "v1", "--layout", "hf", str(taken))
    assert [path.name for path in taken.iterdir()] == ["mine.txt"]
    with pytest.raises(CommandError, match="cvrr has no layout 'parquet'; its layouts: hf$"):
        call_command("export_benchmark", "cvrr", "--version", "v1", "--layout", "parquet", str(tmp_path / "p"))
    assert not (tmp_path / "p").exists()
    assert [path.name for path in tmp_path.iterdir() if path.name.startswith(".")] == []


# --- The version page ----------------------------------------------------------------------------

def start_export(client, version, layout, capture):
    with capture(execute=True):
        response = client.post(reverse("version-export", kwargs={"pk": version.pk}), {"layout": layout})
    return response


def downloaded(client, job, tmp_path):
    response = client.get(job.result["download_url"])
    assert response.status_code == 200
    assert response["Content-Disposition"] == f'attachment; filename="{job.result["file_name"]}"'
    with zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content))) as archive:
        archive.extractall(tmp_path / "unzipped")
    return tmp_path / "unzipped" / job.result["file_name"].removesuffix(".zip")


def test_the_version_page_downloads_the_version_as_a_dataset_and_in_its_release_layout(
        tmp_path, media, curator, researcher, annotator, admin_user, django_capture_on_commit_callbacks):
    root, version = imported("cvqa", tmp_path, media)
    client = logged_in_client(curator)
    page = client.get(reverse("version-detail", kwargs={"pk": version.pk})).content.decode()
    assert 'id="version-export-form"' in page and '<option value="hf">' in page and '<option value="release">' in page

    response = start_export(client, version, "hf", django_capture_on_commit_callbacks)
    assert response.status_code == 302
    job = Job.objects.get(kind=version_exports.VERSION_EXPORT_JOB_KIND)
    assert job.status == Job.Status.SUCCEEDED, job.message
    assert (job.requested_by, job.params) == (curator, {"version": version.pk, "layout": "hf"})
    assert job.result["file_name"] == "cvqa-v1.hf.zip" and job.result["items"] == version.items.count()
    page = client.get(reverse("version-detail", kwargs={"pk": version.pk})).content.decode()
    assert f'href="{job.result["download_url"]}"' in page and "Download cvqa-v1.hf.zip" in page
    folder = downloaded(client, job, tmp_path)
    check_rows(folder, version, "cvqa", tmp_path / "cache")

    start_export(client, version, "release", django_capture_on_commit_callbacks)
    release_job = Job.objects.filter(kind=version_exports.VERSION_EXPORT_JOB_KIND).latest("pk")
    assert release_job.result["file_name"] == "cvqa-v1.release.zip"
    assert_same_release(root, downloaded(logged_in_client(admin_user), release_job, tmp_path / "admin"))

    # someone else's export: another curator or a researcher is refused; an annotator has no such page
    for user in (make_user("curator-2", "curator"), researcher, annotator):
        assert logged_in_client(user).get(job.result["download_url"]).status_code == 403
    with django_capture_on_commit_callbacks(execute=True):
        refused = logged_in_client(annotator).post(reverse("version-export", kwargs={"pk": version.pk}),
                                                   {"layout": "hf"})
    assert refused.status_code == 403
    assert Job.objects.filter(kind=version_exports.VERSION_EXPORT_JOB_KIND).count() == 2


def test_an_unknown_layout_or_version_is_refused_on_the_page_and_nothing_is_queued(
        tmp_path, media, researcher, django_capture_on_commit_callbacks):
    _, version = imported("maia", tmp_path, media)
    client = logged_in_client(researcher)
    response = start_export(client, version, "parquet", django_capture_on_commit_callbacks)
    assert response.status_code == 400
    assert "Choose a layout: hf, release, data, gen, mc (got &#x27;parquet&#x27;)." in response.content.decode()
    missing = client.post(reverse("version-export", kwargs={"pk": 987654}), {"layout": "hf"})
    assert missing.status_code == 404
    assert not Job.objects.filter(kind=version_exports.VERSION_EXPORT_JOB_KIND).exists()

    response = start_export(client, version, "gen", django_capture_on_commit_callbacks)
    assert response.status_code == 302
    job = Job.objects.get(kind=version_exports.VERSION_EXPORT_JOB_KIND)
    assert job.status == Job.Status.SUCCEEDED and job.result["file_name"] == "maia-v1.gen.zip"


def test_the_api_starts_the_same_export(tmp_path, media, researcher, annotator, django_capture_on_commit_callbacks):
    _, version = imported("nleye", tmp_path, media)
    url = reverse("api-version-export", kwargs={"pk": version.pk})
    with django_capture_on_commit_callbacks(execute=True):
        response = logged_in_api(researcher).post(url, {"layout": "hf"}, format="json")
    assert response.status_code == 202
    job = Job.objects.get(pk=response.json()["id"])
    assert job.status == Job.Status.SUCCEEDED and job.result["file_name"] == "nleye-v1.hf.zip"
    folder = downloaded(logged_in_client(researcher), job, tmp_path)
    check_rows(folder, version, "nleye", tmp_path / "cache")
    refused = logged_in_api(researcher).post(url, {"layout": "nope"}, format="json")
    assert refused.status_code == 400 and "Choose a layout" in refused.json()["error"]
    assert logged_in_api(annotator).post(url, {"layout": "hf"}, format="json").status_code == 403
