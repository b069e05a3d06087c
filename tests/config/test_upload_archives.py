"""Zip archives people upload (the images of C-VQA source questions at /cvqa/sources/) are read within limits by
one reader (`config.archives`): a damaged archive (a bad CRC, a broken compressed stream, cut short), one with too
many members or too many bytes once extracted (a zip bomb, a size its headers lie about) or a member whose path
leaves the folder is refused with a 400 that names it, and nothing is written."""

import html
import io
import struct
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotation.models import BenchmarkVersion, Image
from tests.conftest import files_under

pytestmark = pytest.mark.django_db

CSV = b"image,question,answer\nastronaut.png,How many people are there?,1\n"


def zipped(members: dict[str, bytes], method=zipfile.ZIP_STORED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=method) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def with_bad_crc(picture: bytes) -> bytes:
    """A stored member whose content no longer matches its CRC (one byte flipped in the middle)."""
    data = bytearray(zipped({"images/astronaut.png": picture}))
    middle = 30 + len("images/astronaut.png") + len(picture) // 2
    data[middle] ^= 0xFF
    return bytes(data)


def with_broken_stream(picture: bytes) -> bytes:
    """A deflated member whose compressed stream is garbage from its start."""
    data = bytearray(zipped({"astronaut.png": picture}, zipfile.ZIP_DEFLATED))
    start = 30 + len("astronaut.png")
    data[start:start + 64] = b"\xff" * 64
    return bytes(data)


def with_lying_size(picture: bytes) -> bytes:
    """A member whose headers declare 100 bytes where it holds the whole picture (what a zip bomb does to slip
    under a size check): it is never read past 100 bytes, and its CRC then shows the lie."""
    data = bytearray(zipped({"astronaut.png": picture}))
    struct.pack_into("<I", data, 22, 100)  # the local header's uncompressed size
    central = data.rindex(b"PK\x01\x02")
    struct.pack_into("<I", data, central + 24, 100)  # the central directory's
    return bytes(data)


def post_sources(client, archive: bytes, name: str = "images.zip"):
    return client.post(reverse("cvqa-sources"), {
        "version": "s", "format": "csv", "table": SimpleUploadedFile("q.csv", CSV),
        "images": SimpleUploadedFile(name, archive, content_type="application/zip")})


def assert_refused(response, *phrases: str, media_root) -> None:
    page = html.unescape(response.content.decode())
    assert response.status_code == 400, page[:500]
    errors = page[page.index('id="import-errors"'):]
    for phrase in phrases:
        assert phrase in errors, errors[:800]
    assert not BenchmarkVersion.objects.filter(benchmark__slug="cvqa").exists()
    assert not Image.objects.exists() and not files_under(media_root)


def test_a_good_zip_imports(curator_client, astronaut):
    response = post_sources(curator_client, zipped({"images/astronaut.png": astronaut.read_bytes()}))
    assert response.status_code == 200 and "1 question added" in response.content.decode()
    assert Image.objects.count() == 1


@pytest.mark.parametrize(("damage", "phrases"), [
    (with_bad_crc, ["images.zip: 'images/astronaut.png' cannot be read: the archive is damaged", "Bad CRC-32"]),
    (with_broken_stream, ["images.zip: 'astronaut.png' cannot be read: the archive is damaged"]),
    (with_lying_size, ["images.zip: 'astronaut.png' cannot be read: the archive is damaged", "Bad CRC-32"]),
    (lambda picture: zipped({"astronaut.png": picture})[:2000], ["images.zip: not a zip archive, or a damaged one"]),
])
def test_a_damaged_zip_is_refused_and_nothing_is_written(curator_client, astronaut, media_root, damage, phrases):
    assert_refused(post_sources(curator_client, damage(astronaut.read_bytes())), *phrases, media_root=media_root)


def test_a_zip_bomb_is_refused_before_it_is_extracted(curator_client, astronaut, media_root, settings):
    settings.IMPORT_ZIP_MAX_MB = 1
    bomb = zipped({"zeros.bin": bytes(2 * 1024 * 1024)}, zipfile.ZIP_DEFLATED)
    assert len(bomb) < 10 * 1024
    assert_refused(post_sources(curator_client, bomb), "images.zip: 2 MB once extracted, where the limit is 1 MB.",
                   media_root=media_root)
    settings.IMPORT_ZIP_MAX_MB, settings.IMPORT_ZIP_MAX_MEMBERS = 2048, 3
    many = zipped({"astronaut.png": astronaut.read_bytes(), **{f"empty-{n}.txt": b"" for n in range(3)}})
    assert_refused(post_sources(curator_client, many), "images.zip: 4 files, where an archive may hold at most 3.",
                   media_root=media_root)


@pytest.mark.parametrize("name", ["../astronaut.png", "/tmp/astronaut.png", "images/../../astronaut.png",
                                  "C:/astronaut.png", "..\\astronaut.png"])
def test_a_member_whose_path_leaves_the_folder_is_refused(curator_client, astronaut, media_root, name):
    assert_refused(post_sources(curator_client, zipped({name: astronaut.read_bytes()})), "unsafe path",
                   media_root=media_root)
