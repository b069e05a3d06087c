"""Subgroup labels of library images for C-VQA's bias analysis (seeds/001 §4.3; SPEC §2 "Evaluation").

A label (`SubgroupLabel`, one per library image: e.g. "male" / "female", the perceived gender of the
people an image shows, from published COCO annotations) is imported from a CSV keyed by image or set
by a curator. The evaluation reads it for every item whose image has one (`label_of`); a
`subgroup` field in the item's payload wins over it. The subgroup metric (drop per subgroup, gap between
subgroups) is computed from these.

CSV (`import_labels`): columns `image` and `label` (`ALIASES` lists the other accepted headers). `image`
is a COCO image id (all digits: the library image whose file name ends with that number, as
`COCO_val2014_000000XXXXXX.jpg`), a SHA-256 checksum (64 hex digits) or a file name (the name the image
was imported with). Images the library does not hold, or that a key names ambiguously, are reported
and left out; a malformed file (missing column, empty or too long label, an image given two labels)
writes nothing. A label already set is replaced, with the file as its source.
"""

from __future__ import annotations

import re
import tempfile
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from django.db import transaction

from annotation.curation_models import SubgroupLabel
from annotation.importers.base import Problems, text
from annotation.importers.files import read_table
from annotation.models import Image
from config.roles import ADMIN, CURATOR, has_role

ALIASES = {
    "image": ("image_id", "coco_id", "img", "file_name", "filename", "file", "checksum", "sha256"),
    "label": ("subgroup", "group", "gender", "perceived_gender", "skin", "skin_tone"),
}
MAX_LABEL = SubgroupLabel._meta.get_field("label").max_length
EDITED = "edited"
_CHECKSUM = re.compile(r"^[0-9a-f]{64}$")
_TRAILING_NUMBER = re.compile(r"(\d+)$")


class SubgroupError(Exception):
    """A label change refused; `problems` says why, `status` is the HTTP status that describes it."""

    def __init__(self, problems: list[str], status: int = 400):
        super().__init__("; ".join(problems[:3]))
        self.problems = list(problems)
        self.status = status


@dataclass
class LabelReport:
    set: int = 0  # labels written (new or replaced)
    unchanged: int = 0
    unknown: list[str] = field(default_factory=list)  # "where: why" for images not found
    counts: dict = field(default_factory=dict)  # label → images given it by this file


def clean_label(value) -> str:
    label = " ".join(text(value).split())
    if not label:
        raise ValueError("the label is empty")
    if len(label) > MAX_LABEL:
        raise ValueError(f"the label has more than {MAX_LABEL} characters")
    return label


class LibraryImages:
    """Library images by COCO id (the trailing number of their file name), checksum and file name."""

    def __init__(self):
        self.by_id: dict[str, list[int]] = defaultdict(list)
        self.by_name: dict[str, list[int]] = defaultdict(list)
        self.by_checksum: dict[str, int] = {}
        for pk, name, checksum in Image.objects.values_list("pk", "original_name", "checksum"):
            self.by_checksum[checksum] = pk
            self.by_name[Path(name or "").name.lower()].append(pk)
            match = _TRAILING_NUMBER.search(Path(name or "").stem)
            if match:
                self.by_id[str(int(match.group(1)))].append(pk)

    def find(self, key: str) -> int | str:
        """The image's id, or why none is found."""
        if key.isdigit():
            found = self.by_id.get(str(int(key)), [])
        elif _CHECKSUM.match(key.lower()):
            found = [self.by_checksum[key.lower()]] if key.lower() in self.by_checksum else []
        else:
            found = self.by_name.get(Path(key.replace("\\", "/")).name.lower(), [])
        if not found:
            return f"no library image {key!r}"
        if len(found) > 1:
            return f"{key!r} names {len(found)} library images (#{', #'.join(map(str, found[:4]))})"
        return found[0]


def import_labels(path: Path, user=None, source: str = "") -> LabelReport:
    """Set the labels a CSV gives (see the module's text); SubgroupError listing every problem, nothing
    written, for a malformed file."""
    path = Path(path)
    if not path.is_file():
        raise SubgroupError([f"{path}: no such file."])
    problems = Problems()
    table = read_table(path, path.parent, problems, aliases=ALIASES, required=("image", "label"))
    report = LabelReport()
    wanted: dict[int, tuple[str, str]] = {}  # image id → (label, where)
    images = LibraryImages()
    for row in table.rows if table else []:
        key = text(row.fields["image"])
        try:
            label = clean_label(row.fields["label"])
        except ValueError as exc:
            problems.add(row.where, str(exc))
            continue
        if not key:
            problems.add(row.where, "the image is empty")
            continue
        found = images.find(key)
        if isinstance(found, str):
            report.unknown.append(f"{row.where}: {found}")
            continue
        if found in wanted and wanted[found][0] != label:
            problems.add(row.where, f"image {key!r} was given {wanted[found][0]!r} at {wanted[found][1]}")
            continue
        wanted.setdefault(found, (label, row.where))
    if problems:
        raise SubgroupError(problems.errors)
    if table is not None and not table.rows:
        raise SubgroupError([f"{path.name}: no rows."])
    source = (source or path.name)[:255]
    with transaction.atomic():
        current = dict(SubgroupLabel.objects.filter(image_id__in=wanted).values_list("image_id", "label"))
        for image_id, (label, _where) in wanted.items():
            report.counts[label] = report.counts.get(label, 0) + 1
            if current.get(image_id) == label:
                report.unchanged += 1
                continue
            SubgroupLabel.objects.update_or_create(image_id=image_id, defaults={
                "label": label, "source": source, "updated_by": user if user is not None and user.pk else None})
            report.set += 1
    return report


def import_upload(upload, user) -> LabelReport:
    """`import_labels` for an uploaded CSV (its name is the labels' source)."""
    name = Path(upload.name or "").name or "labels.csv"
    if Path(name).suffix.lower() != ".csv":
        raise SubgroupError([f"{name}: a CSV file is needed."])
    with tempfile.TemporaryDirectory(prefix="cvqa-subgroups-") as tmp:
        path = Path(tmp) / name
        with path.open("wb") as out:
            for chunk in upload.chunks():
                out.write(chunk)
        return import_labels(path, user, source=name)


def set_label(user, image, label) -> SubgroupLabel | None:
    """A curator sets (or, with an empty label, removes) the label of library image `image` (an Image or
    its id). 403 for a user who is no curator, 404 for no such image, 400 for a label too long."""
    if not has_role(user, CURATOR, ADMIN):
        raise SubgroupError(["Only curators edit subgroup labels."], status=403)
    found = image if isinstance(image, Image) else (
        Image.objects.filter(pk=int(image)).first() if str(image).strip().isdigit() else None)
    if found is None:
        raise SubgroupError([f"There is no image #{image} in the media library."], status=404)
    if not text(label):
        SubgroupLabel.objects.filter(image=found).delete()
        return None
    try:
        label = clean_label(label)
    except ValueError as exc:
        raise SubgroupError([f"Image #{found.pk}: {exc}."]) from None
    row, _ = SubgroupLabel.objects.update_or_create(image=found, defaults={
        "label": label, "source": EDITED, "updated_by": user})
    return row


def labels():
    """Every label with its image and who set it, by image."""
    return SubgroupLabel.objects.select_related("image", "updated_by").order_by("image_id")


def label_of(image_id) -> str:
    """The subgroup label of library image `image_id` ('' when it has none, or for None)."""
    if image_id is None:
        return ""
    return SubgroupLabel.objects.filter(image_id=image_id).values_list("label", flat=True).first() or ""
