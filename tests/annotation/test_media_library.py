"""The media library's curating pages: search and filters, tags, rename, and deleting unused media."""

from pathlib import Path

import pytest
from django.urls import reverse

from annotation import media_library
from annotation.crowd.models import StudyItem
from annotation.models import BenchmarkItem, Image, ItemMedia, MediaTag, Video, VideoSplit
from config.roles import ANNOTATOR, RESEARCHER
from generation.models import Proposal, ProposalSet
from tests.conftest import create_study, cvqa_payload, ingest_path, logged_in_client

pytestmark = pytest.mark.django_db


@pytest.fixture
def clip(curator, bikes):
    return ingest_path(bikes, user=curator, probe=False)


def video_row(video) -> str:
    return f'data-asset-kind="video" data-asset-id="{video.pk}"'


def image_row(image) -> str:
    return f'data-asset-kind="image" data-asset-id="{image.pk}"'


def library(client, **params):
    response = client.get(reverse("media-library"), params)
    assert response.status_code == 200
    return response.content.decode()


def test_search_by_title_or_file_name(curator_client, clip, image):
    Video.objects.filter(pk=clip.pk).update(title="Cyclists on a bridge")
    html = library(curator_client, q="bridge")
    assert "Cyclists on a bridge" in html and image.title not in html
    html = library(curator_client, q="ASTRONAUT")  # the image's file name, any case
    assert image.title in html and "Cyclists on a bridge" not in html
    assert "No video matches." in html


def test_filter_by_kind_status_and_tag(curator_client, clip, image):
    html = library(curator_client, kind="images")
    assert 'id="image-table"' in html and 'id="video-table"' not in html
    html = library(curator_client, kind="videos")
    assert 'id="video-table"' in html and 'id="image-table"' not in html
    # the unprobed clip is still probing, the image is ready
    assert clip.status == Video.Status.PROBING and image.status == Image.Status.READY
    html = library(curator_client, status="ready")
    assert image.title in html and video_row(clip) not in html
    media_library.set_tags(clip, "outdoor")
    html = library(curator_client, tag="outdoor")
    assert video_row(clip) in html and image_row(image) not in html
    assert '<option value="outdoor" selected>' in html


def test_the_pager_keeps_the_filters(curator_client):
    videos = [Video(title=f"clip {n}", original_name=f"c{n}.mp4", size_bytes=1, checksum=f"{n:064d}",
                    file=f"videos/c{n}.mp4") for n in range(30)]
    Video.objects.bulk_create(videos)
    html = library(curator_client, q="clip", kind="videos")
    assert "?q=clip&amp;kind=videos&amp;vpage=2" in html


def test_tags_are_set_normalised_and_replaced(curator_client, clip):
    url = reverse("media-tags", args=["videos", clip.pk])
    response = curator_client.post(url, {"tags": " Outdoor ,  night  shot, outdoor,,"})
    assert response.status_code == 302
    assert sorted(clip.tags.values_list("name", flat=True)) == ["night shot", "outdoor"]
    curator_client.post(url, {"tags": "night shot"})
    assert list(clip.tags.values_list("name", flat=True)) == ["night shot"]
    assert not MediaTag.objects.filter(name="outdoor").exists()  # no medium uses it any longer
    detail = curator_client.get(reverse("video-detail", args=[clip.pk])).content.decode()
    assert "night shot" in detail


@pytest.mark.parametrize("tags, message", [
    ("ok, <script>", "may hold only letters"),
    ("x" * 41, "longer than 40 characters"),
    (",".join(f"t{n}" for n in range(13)), "at most 12 tags"),
])
def test_bad_tags_are_refused_and_nothing_changes(curator_client, clip, tags, message):
    media_library.set_tags(clip, "kept")
    response = curator_client.post(reverse("media-tags", args=["videos", clip.pk]), {"tags": tags})
    assert response.status_code == 400
    assert message in response.content.decode()
    assert list(clip.tags.values_list("name", flat=True)) == ["kept"]


def test_rename(curator_client, image):
    url = reverse("media-rename", args=["images", image.pk])
    assert curator_client.post(url, {"title": "  Astronaut portrait "}).status_code == 302
    image.refresh_from_db()
    assert image.title == "Astronaut portrait"
    for bad, status in (("   ", 400), ("x" * 256, 400)):
        assert curator_client.post(url, {"title": bad}).status_code == status
    image.refresh_from_db()
    assert image.title == "Astronaut portrait"


def test_unknown_kind_or_id_is_404(curator_client, clip):
    assert curator_client.post(reverse("media-rename", args=["sounds", clip.pk]), {"title": "x"}).status_code == 404
    assert curator_client.post(reverse("media-rename", args=["videos", 987654]), {"title": "x"}).status_code == 404


@pytest.mark.parametrize("role", [ANNOTATOR, RESEARCHER])
def test_only_curators_and_admins_change_the_library(role_users, role, clip):
    client = logged_in_client(role_users[role])
    assert client.post(reverse("media-rename", args=["videos", clip.pk]), {"title": "x"}).status_code == 403
    assert client.post(reverse("media-tags", args=["videos", clip.pk]), {"tags": "x"}).status_code == 403
    assert client.post(reverse("media-delete", args=["videos", clip.pk]), {"confirm": "yes"}).status_code == 403
    assert Video.objects.filter(pk=clip.pk, title=clip.title).exists()
    assert not clip.tags.exists()
    if role == RESEARCHER:  # may look, sees no controls
        detail = client.get(reverse("video-detail", args=[clip.pk])).content.decode()
        assert 'id="manage"' not in detail


def test_admin_may_change_the_library(admin_client_role, clip):
    assert admin_client_role.post(reverse("media-rename", args=["videos", clip.pk]),
                                  {"title": "Renamed"}).status_code == 302
    detail = admin_client_role.get(reverse("video-detail", args=[clip.pk])).content.decode()
    assert 'id="manage"' in detail


def test_deleting_an_unused_image_asks_first_then_removes_its_files(curator_client, image):
    files = [Path(image.file.path), Path(image.thumbnail.path)]
    assert all(path.exists() for path in files)
    url = reverse("media-delete", args=["images", image.pk])
    confirm = curator_client.get(url)
    assert confirm.status_code == 200 and "Delete for good" in confirm.content.decode()
    assert Image.objects.filter(pk=image.pk).exists()  # asking deletes nothing
    assert curator_client.post(url, {}).status_code == 400  # not confirmed
    assert Image.objects.filter(pk=image.pk).exists()
    response = curator_client.post(url, {"confirm": "yes"})
    assert response.status_code == 302 and response["Location"] == reverse("media-library")
    assert not Image.objects.filter(pk=image.pk).exists()
    assert not any(path.exists() for path in files)


def _use_in_benchmark(image, draft_version):
    item = BenchmarkItem.objects.create(version=draft_version, external_id="q-7", payload=cvqa_payload())
    ItemMedia.objects.create(item=item, role="image", image=image)


def _use_in_study(image):
    study = create_study("cups", form={"fields": []}, items=0, name="Counting cups")
    StudyItem.objects.create(study=study, external_id="cup-1", payload={}, open_slots=1, image=image)


def _use_in_proposal(image):
    pset = ProposalSet.objects.create(name="Captions of the astronaut", task_kind="caption", backend="fake",
                                      model_id="tiny")
    Proposal.objects.create(proposal_set=pset, task_kind="caption", source_key="astronaut",
                            inputs={"media": [{"type": "image", "path": image.file.path}]})


@pytest.mark.parametrize("use, named", [
    ("benchmark", "1 benchmark item: cvqa draft-1 / q-7"),
    ("study", "1 study item: Counting cups / cup-1"),
    ("proposal", "1 proposal: #"),
])
def test_deleting_a_used_image_is_refused_naming_the_use(curator_client, image, draft_version, use, named):
    {"benchmark": lambda: _use_in_benchmark(image, draft_version), "study": lambda: _use_in_study(image),
     "proposal": lambda: _use_in_proposal(image)}[use]()
    url = reverse("media-delete", args=["images", image.pk])
    page = curator_client.get(url)
    assert page.status_code == 409
    assert named in page.content.decode() and "Delete for good" not in page.content.decode()
    response = curator_client.post(url, {"confirm": "yes"})
    assert response.status_code == 409
    assert "is in use and cannot be deleted" in response.content.decode()
    assert named in response.content.decode()
    assert Image.objects.filter(pk=image.pk).exists() and Path(image.file.path).exists()


def test_a_video_used_by_a_split_is_not_deleted(curator_client, clip, curator):
    VideoSplit.objects.create(video=clip, event_start=1.0, event_end=2.0, requested_by=curator)
    response = curator_client.post(reverse("media-delete", args=["videos", clip.pk]), {"confirm": "yes"})
    assert response.status_code == 409
    assert "1 video split" in response.content.decode()
    assert Video.objects.filter(pk=clip.pk).exists()
