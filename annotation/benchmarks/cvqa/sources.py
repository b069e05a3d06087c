"""C-VQA source questions under curation (SPEC §2, "Source"): the original VQA questions counterfactual
ones are written from.

`import_sources` reads a VQAv2 JSON pair or a CSV (`source_reading`), checks every question and image,
then in one transaction stores each image in the media library (a file already there, by checksum, is
reused) and adds each question as a `source` item of the unfrozen sources version `label` (made when
missing; source "curation"), with a `CurationRecord` at stage `SOURCE` saying who imported it, when and
from which file. A question already in the version (same external id) is left as it is and reported.
Questions of another type, or without their image, are skipped and reported. Anything malformed →
`SourceImportFailed` (400) listing every problem, and nothing is written.

Source items are never frozen (`freeze_check`) nor exported as a release (the exporter refuses them).
`upload_sources` does the same for files uploaded on the page (the images as files or one zip).
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from annotation import curation_stages, versions
from annotation.benchmarks import registry
from annotation.benchmarks.cvqa.source_reading import FORMATS, ROLE, ImageIndex, SourceBatch, read_csv, read_vqa
from annotation.importers.base import ImportFailed, Problems
from annotation.importers.release import MAX_ID_LENGTH, check_medium, store_medium
from annotation.media_cleanup import ImportLease
from annotation.models import Benchmark, BenchmarkItem, BenchmarkVersion
from annotation.payloads import validate_payload
from config import archives
from generation.media_probe import MediaError

SLUG = "cvqa"
SOURCE = "source"  # the CurationRecord stage of an imported source question
REFUSAL_PHRASE = "cannot be frozen"
MAX_UPLOAD_FILES = 2000  # image files uploaded one by one; a zip has the limits of config.archives


class SourceImportFailed(Exception):
    """Nothing was imported; `problems` says why, `status` is the HTTP status that describes it."""

    def __init__(self, problems: list[str], status: int = 400):
        super().__init__("; ".join(problems[:3]))
        self.problems = list(problems)
        self.status = status


@dataclass
class SourceReport:
    version: BenchmarkVersion
    added: list[str] = field(default_factory=list)  # external ids
    already: list[str] = field(default_factory=list)  # external ids already in the version
    skipped: list[str] = field(default_factory=list)  # "where: why"
    images_added: int = 0
    images_reused: int = 0
    counts: dict = field(default_factory=dict)  # type → questions added


def benchmark() -> Benchmark:
    definition = registry.get(SLUG)
    found, _ = Benchmark.objects.get_or_create(slug=SLUG, defaults={"name": definition.name,
                                                                    "description": definition.description})
    return found


def source_versions():
    """The C-VQA versions holding source questions, newest first."""
    return (BenchmarkVersion.objects.filter(benchmark__slug=SLUG, items__payload__kind="source").distinct()
            .order_by("-created_at"))


def _version(label: str, user) -> BenchmarkVersion:
    """The unfrozen sources version `label`, made when missing (inside the caller's transaction)."""
    version = BenchmarkVersion.objects.select_for_update().filter(benchmark__slug=SLUG, label=label).first()
    if version is None:
        return BenchmarkVersion.objects.create(
            benchmark=benchmark(), label=label, created_by=user, source=BenchmarkVersion.Source.CURATION,
            description="C-VQA source questions (image, original question, answers) under curation (never frozen).")
    if version.frozen:
        raise SourceImportFailed([f"Version {version} is frozen: source questions go to an unfrozen version."],
                                 status=409)
    if version.items.exclude(payload__kind="source").exists():
        raise SourceImportFailed([f"Version {version} holds C-VQA questions that are not sources: choose another "
                                  "label for the sources version."])
    return version


def read(path: Path, fmt: str = "", images: Path | None = None, annotations: Path | None = None) -> SourceBatch:
    """The source questions in `path` (a CSV, a VQA questions JSON or a folder holding the VQA pair);
    SourceImportFailed listing every problem."""
    path = Path(path)
    fmt = fmt or ("csv" if path.suffix.lower() == ".csv" else "vqa")
    if fmt not in FORMATS:
        raise SourceImportFailed([f"Unknown format {fmt!r}: use one of {', '.join(FORMATS)}."])
    if not path.exists():
        raise SourceImportFailed([f"{path}: no such file or folder."])
    problems = Problems()
    if fmt == "csv":
        if not path.is_file():
            raise SourceImportFailed([f"{path}: a CSV file is needed."])
        batch = read_csv(path, ImageIndex(Path(images or path.parent).resolve()), problems)
    else:
        questions, annotations = _vqa_files(path, annotations)
        batch = read_vqa(questions, annotations, ImageIndex(Path(images or questions.parent).resolve()), problems)
    _check(batch, problems)
    if problems:
        raise SourceImportFailed(problems.errors)
    if not batch.specs:
        raise SourceImportFailed([f"No numerical or yes/no question to import ({len(batch.skipped)} skipped)."]
                                 + batch.skipped[:20])
    return batch


def _vqa_files(path: Path, annotations: Path | None) -> tuple[Path, Path]:
    """The questions and annotations files: given, or the JSON files of the folder whose names say so."""
    folder = path if path.is_dir() else path.parent

    def named(word: str) -> Path:
        found = sorted(p for p in folder.glob("*.json") if word in p.name.lower())
        if len(found) != 1:
            raise SourceImportFailed([f"{folder}: {'no' if not found else 'more than one'} JSON file named "
                                      f"like '*{word}*.json' (the VQAv2 {word} file)."])
        return found[0]

    questions = named("questions") if path.is_dir() else path
    annotations = Path(annotations) if annotations else named("annotations")
    if not annotations.is_file():
        raise SourceImportFailed([f"{annotations}: no such file."])
    return questions, annotations


def _check(batch: SourceBatch, problems: Problems) -> None:
    seen: dict[str, str] = {}
    checked: set[Path] = set()
    for spec in batch.specs:
        if len(spec.external_id) > MAX_ID_LENGTH:
            problems.add(spec.where, f"id {spec.external_id!r} is longer than {MAX_ID_LENGTH} characters")
        if spec.external_id in seen:
            problems.add(spec.where, f"the same question as {seen[spec.external_id]} ({spec.external_id})")
        seen.setdefault(spec.external_id, spec.where)
        try:
            validate_payload(SLUG, spec.payload)
        except ValidationError as exc:
            for message in exc.messages:
                problems.add(spec.where, message)
        ref = spec.media[ROLE]
        if ref.path not in checked:
            checked.add(ref.path)
            try:
                check_medium(ref.path, "image")
            except (MediaError, OSError) as exc:
                problems.add(spec.where, f"image {ref.expected!r} cannot be imported ({exc})")


def import_sources(path: Path, label: str, *, fmt: str = "", images: Path | None = None,
                   annotations: Path | None = None, user=None) -> SourceReport:
    """Import the source questions in `path` into the sources version `label` (see the module's text)."""
    label = (label or "").strip()
    if not label:
        raise SourceImportFailed(["A version label is needed."])
    batch = read(path, fmt, images, annotations)
    stored: list = []
    try:
        with ImportLease() as lease, transaction.atomic():
            version = _version(label, user)
            report = SourceReport(version=version, skipped=list(batch.skipped))
            present = set(version.items.values_list("external_id", flat=True))
            assets: dict[Path, object] = {}
            for spec in batch.specs:
                if spec.external_id in present:
                    report.already.append(spec.external_id)
                    continue
                ref = spec.media[ROLE]
                if ref.path not in assets:
                    assets[ref.path], new = store_medium(ref, ref.path.parent, "C-VQA source", user, stored)
                    lease.renew()
                    report.images_added += new
                    report.images_reused += not new
                item = versions.add_item(version, spec.external_id, spec.payload, {ROLE: assets[ref.path]})
                curation_stages.start(item=item, stage=SOURCE, author=user, by=user, working={"imported": {
                    "by": user.get_username() if user else "", "at": timezone.now().isoformat(),
                    "file": ", ".join(batch.files), "where": spec.where}})
                present.add(spec.external_id)
                report.added.append(spec.external_id)
                report.counts[spec.payload["type"]] = report.counts.get(spec.payload["type"], 0) + 1
    except ImportFailed as exc:
        _delete(stored)
        raise SourceImportFailed(exc.problems) from None
    except ValidationError as exc:
        _delete(stored)
        raise SourceImportFailed(exc.messages) from None
    except BaseException:
        _delete(stored)
        raise
    return report


def _delete(stored: list) -> None:
    for storage, name in stored:
        if name and storage.exists(name):
            storage.delete(name)


def _unzip(upload, folder: Path) -> None:
    """Extract the images of an uploaded zip into `folder` (`config.archives`: within the limits, no path leaves
    it); SourceImportFailed for an archive refused or damaged (the caller's temporary folder goes with it)."""
    try:
        archives.extract(upload, upload.name, folder)
    except archives.ArchiveRefused as exc:
        raise SourceImportFailed([str(exc)]) from None


def _save(upload, folder: Path) -> Path:
    name = Path(upload.name or "").name
    if not name or name.startswith("."):
        raise SourceImportFailed(["An uploaded file has no usable name."])
    target = folder / name
    with target.open("wb") as out:
        for chunk in upload.chunks():
            out.write(chunk)
    return target


def upload_sources(user, label: str, fmt: str, *, table=None, questions=None, annotations=None,
                   images=()) -> SourceReport:
    """`import_sources` for uploaded files: a CSV (`table`) or the VQA `questions` and `annotations`
    files, and the images (image files, or zips of them)."""
    if fmt not in FORMATS:
        raise SourceImportFailed([f"Choose the format: one of {', '.join(FORMATS)}."])
    needed = {"csv": {"CSV file": table}, "vqa": {"questions file": questions, "annotations file": annotations}}[fmt]
    missing = [name for name, upload in needed.items() if upload is None]
    if missing:
        raise SourceImportFailed([f"Upload the {' and the '.join(missing)}."])
    if not images:
        raise SourceImportFailed(["Upload the images (image files or a zip of them)."])
    if len(images) > MAX_UPLOAD_FILES:
        raise SourceImportFailed([f"At most {MAX_UPLOAD_FILES} image files at once: upload a zip."])
    with tempfile.TemporaryDirectory(prefix="cvqa-sources-") as tmp:
        work, pictures = Path(tmp) / "files", Path(tmp) / "images"
        work.mkdir()
        pictures.mkdir()
        for upload in images:
            if Path(upload.name or "").suffix.lower() == ".zip":
                _unzip(upload, pictures)
            else:
                _save(upload, pictures)
        if fmt == "csv":
            return import_sources(_save(table, work), label, fmt="csv", images=pictures, user=user)
        question_file = work / "questions.json"
        annotation_file = work / "annotations.json"
        for upload, target in ((questions, question_file), (annotations, annotation_file)):
            with target.open("wb") as out:
                for chunk in upload.chunks():
                    out.write(chunk)
        return import_sources(question_file, label, fmt="vqa", images=pictures, annotations=annotation_file,
                              user=user)


def freeze_check(version) -> list[tuple[str, str]]:
    """(external id, why) for every source question of a C-VQA version: sources are never frozen."""
    if version.benchmark.slug != SLUG:
        return []
    return [(external_id, "is a source question (an original VQA question counterfactual ones are written "
                          "from), which is never frozen")
            for external_id in BenchmarkItem.objects.filter(version=version, payload__kind="source")
            .values_list("external_id", flat=True)]
