"""Zip archives that people upload, read within limits: the one way the platform opens one (a zip of images, and
the .xlsx workbooks, which are zips too).

`open_zip` opens an archive and checks its table of contents before anything is read: at most
`IMPORT_ZIP_MAX_MEMBERS` members, at most `IMPORT_ZIP_MAX_MB` megabytes once extracted (the sizes the archive
declares; a member is never read past its declared size, and a lie shows as a bad CRC), no encrypted member, and,
for an archive to extract, no member whose name leaves the folder (absolute, `..`, a drive). `extract` then writes
the files. A damaged archive (not a zip, cut short, a bad CRC, a method Python cannot
read) raises `ArchiveRefused`, a `ValueError` whose message names the archive and the member; the caller shows it
(400) and removes what it extracted.
"""

import lzma
import zipfile
import zlib
from pathlib import Path, PurePosixPath

from django.conf import settings

CHUNK = 1024 * 1024
# What reading a damaged member raises: zipfile's own errors (bad CRC, bad header), a cut-off stream, a
# compression method Python cannot read, a decompressor's error.
READ_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, NotImplementedError, RuntimeError, ValueError,
               zlib.error, lzma.LZMAError, OSError)


class ArchiveRefused(ValueError):
    """An archive that cannot be read within the limits: `name` and `reason`; the message is "name: reason"."""

    def __init__(self, name: str, reason: str):
        super().__init__(f"{name}: {reason}.")
        self.name, self.reason = name, reason


class ArchiveDamaged(ArchiveRefused):
    """Not a zip archive at all, or a damaged one (as opposed to one past the limits)."""


def max_members() -> int:
    return settings.IMPORT_ZIP_MAX_MEMBERS


def max_bytes() -> int:
    return settings.IMPORT_ZIP_MAX_MB * 1024 * 1024


def _size(size: int) -> str:
    return f"{size:,} bytes" if size < 1024 * 1024 else f"{size / (1024 * 1024):,.0f} MB"


def open_zip(file, name: str, *, byte_limit: int | None = None, extracting: bool = False) -> zipfile.ZipFile:
    """The archive in `file` (a path or a binary file), its contents checked (see the module's text);
    `byte_limit` lowers the limit on the extracted size. ArchiveRefused otherwise."""
    try:
        archive = zipfile.ZipFile(file)
    except READ_ERRORS as exc:
        raise ArchiveDamaged(name, f"not a zip archive, or a damaged one ({exc})") from None
    try:
        check_members(archive, name, byte_limit=byte_limit, extracting=extracting)
    except ArchiveRefused:
        archive.close()
        raise
    return archive


def check_members(archive: zipfile.ZipFile, name: str, *, byte_limit: int | None = None,
                  extracting: bool = False) -> None:
    members = archive.infolist()
    if len(members) > max_members():
        raise ArchiveRefused(name, f"{len(members):,} files, where an archive may hold at most {max_members():,}")
    limit = max_bytes() if byte_limit is None else min(byte_limit, max_bytes())
    total = sum(member.file_size for member in members)
    if total > limit:
        raise ArchiveRefused(name, f"{_size(total)} once extracted, where the limit is {_size(limit)}")
    for member in members:
        if member.flag_bits & 0x1:
            raise ArchiveRefused(name, f"{member.filename!r} is encrypted; upload an archive without a password")
        if extracting and safe_parts(member.filename) is None:
            raise ArchiveRefused(name, f"unsafe path {member.filename!r} (a name must stay inside the archive)")


def safe_parts(filename: str) -> tuple[str, ...] | None:
    """The parts of a member's name as a relative path inside the folder, or None when it would leave it."""
    name = filename.replace("\\", "/")
    parts = PurePosixPath(name).parts
    if not parts or name.startswith("/") or any(part in ("..", "") for part in parts) or ":" in parts[0]:
        return None
    return parts


def read_member(archive: zipfile.ZipFile, member, name: str):
    """The chunks of one member's content; ArchiveRefused naming the member when it is damaged."""
    label = getattr(member, "filename", member)
    try:
        with archive.open(member) as source:
            while chunk := source.read(CHUNK):
                yield chunk
    except READ_ERRORS as exc:
        raise ArchiveDamaged(name, f"{label!r} cannot be read: the archive is damaged ({exc})") from None


def extract(file, name: str, folder: Path) -> list[Path]:
    """Write the files of the archive in `file` under `folder` (see `open_zip`); the files written.
    ArchiveRefused for an archive refused or damaged: the caller removes `folder`."""
    written = []
    with open_zip(file, name, extracting=True) as archive:
        for member in archive.infolist():
            if member.is_dir():
                continue
            target = folder.joinpath(*safe_parts(member.filename))
            target.parent.mkdir(parents=True, exist_ok=True)
            with target.open("wb") as out:
                for chunk in read_member(archive, member, name):
                    out.write(chunk)
            written.append(target)
    return written
