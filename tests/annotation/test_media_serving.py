"""Protected media files: permission checks, HTTP Range streaming, and the nginx hand-off."""

import pytest
from django.urls import reverse
from rest_framework.authtoken.models import Token

from annotation.crowd import assignment
from annotation.media_serving import RangeNotSatisfiable, parse_range
from config.roles import CURATOR
from tests.conftest import create_study, ingest_path, logged_in_client, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def stored_video(curator, bikes):
    return ingest_path(bikes, user=curator, probe=False)


@pytest.fixture
def video_url(stored_video):
    return reverse("media-video-file", args=[stored_video.pk])


@pytest.fixture
def file_bytes(bikes) -> bytes:
    return bikes.read_bytes()


def body(response) -> bytes:
    return b"".join(response.streaming_content) if response.streaming else response.content


def assert_private(response):
    assert "no-store" in response["Cache-Control"]
    assert "private" in response["Cache-Control"]


def test_first_hundred_bytes(curator_client, video_url, file_bytes):
    response = curator_client.get(video_url, headers={"range": "bytes=0-99"})
    assert response.status_code == 206
    assert response["Content-Range"] == f"bytes 0-99/{len(file_bytes)}"
    assert response["Content-Length"] == "100"
    assert response["Content-Type"] == "video/mp4"
    assert response["Accept-Ranges"] == "bytes"
    assert body(response) == file_bytes[:100]
    assert_private(response)


def test_open_ended_range(curator_client, video_url, file_bytes):
    size = len(file_bytes)
    response = curator_client.get(video_url, headers={"range": "bytes=100-"})
    assert response.status_code == 206
    assert response["Content-Range"] == f"bytes 100-{size - 1}/{size}"
    assert response["Content-Length"] == str(size - 100)
    assert body(response) == file_bytes[100:]
    assert_private(response)


def test_suffix_range(curator_client, video_url, file_bytes):
    size = len(file_bytes)
    response = curator_client.get(video_url, headers={"range": "bytes=-50"})
    assert response.status_code == 206
    assert response["Content-Range"] == f"bytes {size - 50}-{size - 1}/{size}"
    assert body(response) == file_bytes[-50:]


def test_range_end_past_the_file_is_clamped(curator_client, video_url, file_bytes):
    size = len(file_bytes)
    response = curator_client.get(video_url, headers={"range": f"bytes={size - 10}-{size + 5000}"})
    assert response.status_code == 206
    assert response["Content-Range"] == f"bytes {size - 10}-{size - 1}/{size}"
    assert body(response) == file_bytes[-10:]


@pytest.mark.parametrize("header", ["bytes={size}-", "bytes={size}-{size_plus}", "bytes=-0"])
def test_unsatisfiable_range(curator_client, video_url, file_bytes, header):
    size = len(file_bytes)
    response = curator_client.get(video_url, headers={"range": header.format(size=size, size_plus=size + 10)})
    assert response.status_code == 416
    assert response["Content-Range"] == f"bytes */{size}"
    assert response.content == b""
    assert_private(response)


def test_whole_file_without_range(curator_client, video_url, file_bytes, stored_video):
    response = curator_client.get(video_url)
    assert response.status_code == 200
    assert response["Accept-Ranges"] == "bytes"
    assert response["Content-Length"] == str(len(file_bytes))
    assert response["Content-Disposition"] == f'inline; filename="{stored_video.original_name}"'
    assert body(response) == file_bytes
    assert_private(response)


@pytest.mark.parametrize("header", ["bytes=0-9,20-29", "items=0-9", "bytes=abc"])
def test_multi_range_and_malformed_headers_get_the_whole_file(curator_client, video_url, file_bytes, header):
    response = curator_client.get(video_url, headers={"range": header})
    assert response.status_code == 200
    assert body(response) == file_bytes


def test_head_request(researcher_client, video_url, file_bytes):
    response = researcher_client.head(video_url)
    assert response.status_code == 200
    assert response["Content-Length"] == str(len(file_bytes))
    assert body(response) == b""


def test_post_is_not_allowed(curator_client, video_url):
    assert curator_client.post(video_url).status_code == 405


def test_annotator_without_grant_is_refused(annotator_client, video_url):
    response = annotator_client.get(video_url, headers={"range": "bytes=0-99"})
    assert response.status_code == 403
    assert b"ftyp" not in response.content


def test_anonymous_is_sent_to_login(video_url):
    response = logged_in_client(None).get(video_url)
    assert response.status_code == 302
    assert response["Location"] == f"{reverse('login')}?next={video_url}"


def test_missing_asset_is_404(curator_client):
    assert curator_client.get(reverse("media-video-file", args=[424242])).status_code == 404


def test_poster_not_made_yet_is_404(curator_client, stored_video):
    assert not stored_video.poster
    assert curator_client.get(reverse("media-video-poster", args=[stored_video.pk])).status_code == 404


def test_accel_redirect_hands_the_file_to_nginx(curator_client, video_url, stored_video, settings):
    settings.MEDIA_ACCEL_REDIRECT_PREFIX = "/protected"
    response = curator_client.get(video_url, headers={"range": "bytes=0-99"})
    assert response.status_code == 200  # nginx answers the Range itself
    assert response["X-Accel-Redirect"] == f"/protected/{stored_video.file.name}"
    assert stored_video.file.name.startswith("videos/")
    assert response["Content-Type"] == "video/mp4"
    assert response.content == b""
    assert_private(response)


def test_accel_redirect_still_checks_permissions(annotator_client, video_url, settings):
    settings.MEDIA_ACCEL_REDIRECT_PREFIX = "/protected"
    response = annotator_client.get(video_url)
    assert response.status_code == 403
    assert "X-Accel-Redirect" not in response


def test_image_file_and_thumbnail(curator_client, image, astronaut):
    response = curator_client.get(reverse("media-image-file", args=[image.pk]))
    assert response.status_code == 200
    assert response["Content-Type"] == "image/png"
    assert body(response) == astronaut.read_bytes()
    thumb = curator_client.get(reverse("media-image-thumbnail", args=[image.pk]))
    assert thumb.status_code == 200
    assert thumb["Content-Type"] == "image/jpeg"
    assert body(thumb)[:3] == b"\xff\xd8\xff"


@pytest.mark.parametrize(("header", "size", "expected"), [
    ("bytes=0-99", 1000, (0, 99)),
    ("bytes=100-", 1000, (100, 999)),
    ("bytes=-50", 1000, (950, 999)),
    ("bytes=-5000", 1000, (0, 999)),
    ("bytes=990-2000", 1000, (990, 999)),
    ("", 1000, None),
    ("bytes=-", 1000, None),
    ("bytes=1-2,4-5", 1000, None),
])
def test_parse_range(header, size, expected):
    assert parse_range(header, size) == expected


@pytest.mark.parametrize(("header", "size"), [("bytes=1000-", 1000), ("bytes=5-4", 1000), ("bytes=-0", 1000),
                                              ("bytes=0-", 0)])
def test_parse_range_unsatisfiable(header, size):
    with pytest.raises(RangeNotSatisfiable):
        parse_range(header, size)


def test_a_registered_grant_lets_an_annotator_stream(annotator, annotator_client, video_url, stored_video,
                                                     file_bytes, monkeypatch):
    from annotation import access

    def grant_this_video(user, asset):
        return user.pk == annotator.pk and asset.pk == stored_video.pk

    monkeypatch.setattr(access, "_GRANTS", [grant_this_video])
    response = annotator_client.get(video_url, headers={"range": "bytes=0-99"})
    assert response.status_code == 206
    assert body(response) == file_bytes[:100]


# --- API tokens instead of a session ---------------------------------------------------------------

def token_client(user):
    client = logged_in_client(None)
    client.defaults["HTTP_AUTHORIZATION"] = f"Token {Token.objects.create(user=user).key}"
    return client


@pytest.mark.parametrize("name", ["media-video-file", "media-image-file"])
def test_staff_stream_with_an_api_token(researcher, stored_video, image, file_bytes, name):
    asset = stored_video if name == "media-video-file" else image
    response = token_client(researcher).get(reverse(name, args=[asset.pk]), headers={"range": "bytes=0-99"})
    assert response.status_code == 206
    if asset is stored_video:
        assert body(response) == file_bytes[:100]
    assert_private(response)


def test_a_token_gets_the_same_per_object_answers_as_a_session(annotator, annotator_client, stored_video, video_url,
                                                               file_bytes):
    """An annotator streams the video of their active claim and nothing else, with a token as with a session."""
    by_token = token_client(annotator)
    assert by_token.get(video_url).status_code == annotator_client.get(video_url).status_code == 403
    study = create_study("clips", form={"fields": [{"name": "ok", "type": "single_choice", "options": ["y", "n"]}]},
                         items=0, extra_rows=[{"external_id": "clip", "payload": {}, "video": stored_video}])
    claim = assignment.claim_next(study, annotator)
    assert claim is not None and claim.item.video_id == stored_video.pk
    token_answer = by_token.get(video_url, headers={"range": "bytes=0-99"})
    assert token_answer.status_code == annotator_client.get(video_url, headers={"range": "bytes=0-99"}).status_code
    assert token_answer.status_code == 206 and body(token_answer) == file_bytes[:100]
    assignment.release(claim, annotator)
    assert by_token.get(video_url).status_code == annotator_client.get(video_url).status_code == 403
    # a missing file answers as for a session too
    missing = reverse("media-video-file", args=[stored_video.pk + 1000])
    assert token_client(make_user("cora", CURATOR)).get(missing).status_code == 404


def test_a_wrong_token_is_401_and_no_token_is_sent_to_login(video_url):
    client = logged_in_client(None)
    client.defaults["HTTP_AUTHORIZATION"] = "Token not-a-real-key"
    response = client.get(video_url)
    assert response.status_code == 401 and response.content == b"Invalid token."
    assert logged_in_client(None).get(video_url).status_code == 302
