"""Import a release folder as a benchmark version: read it, check everything, then create it all at once.

1. The registered benchmark's reader (`annotation/benchmarks/<slug>/importer.py`) turns the folder
   into item specs, collecting problems instead of stopping at the first.
2. Checks before anything is written: ids unique and at most 128 characters, payloads valid
   (`annotation.payloads`), every medium present and acceptable to the library (type, size, content,
   decodable). Videos are probed here, so a reader can check times against their duration
   (`check_media_facts`). Missing media are summarised as one line per missing file with the number
   of items that need it, then the total: problems with the hint to pass `--skip-missing-media`, or,
   with `skip_missing_media`, the list of what was left out.
3. Any problem → `ImportFailed` with the whole list, and nothing is written. Otherwise one transaction
   creates the version (`source` = import), stores and probes each medium once (a file already in the
   library is reused), adds the items with their media and freezes the version. The freeze checks
   (`annotation.versions`) run on the new items, also for a draft: an item whose evaluation requests
   cannot be built is refused with its file and row. If anything fails inside the transaction, it
   rolls back and the files stored so far are deleted again. The import holds an `ImportLease` while it
   stores files, so that `clean_media` leaves them alone until the rows are committed; what a killed
   process (kill -9) leaves behind is removed by `clean_media` once the lease has gone stale.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from annotation import versions
from annotation.benchmarks import registry
from annotation.importers.base import ImportFailed, ItemSpec, MediaRef, Problems, relative
from annotation.media import MediaRejected, incoming_from_path, ingest, kind_for_name, max_upload_bytes
from annotation.media_cleanup import ImportLease
from annotation.media_import import probe_here
from annotation.models import Benchmark, BenchmarkVersion, MediaAsset
from annotation.payloads import validate_payload
from generation.media_probe import MediaError, check_image, check_video, probe_video, sniff_kind

MAX_ID_LENGTH = 128
SKIP_HINT = ("pass --skip-missing-media to import the other items without them (the items that need a missing "
             "file are left out and listed)")


@dataclass
class ImportResult:
    version: BenchmarkVersion
    items: int
    media_added: int
    media_reused: int
    skipped: int = 0  # items left out for missing media
    missing: list[str] = field(default_factory=list)  # one line per missing file, then the total
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def reader(slug: str) -> registry.BenchmarkDefinition:
    """The registered benchmark that reads its release layout."""
    try:
        return registry.get(slug)
    except registry.UnknownBenchmark as exc:
        raise ImportFailed([str(exc)]) from None


def import_release(slug: str, folder: Path, label: str, *, skip_missing_media: bool = False, freeze: bool = True,
                   description: str = "", user=None, say: Callable[[str], None] = lambda line: None) -> ImportResult:
    """Create a (frozen) version `label` of benchmark `slug` from the release in `folder`."""
    benchmark = reader(slug)
    folder = Path(folder)
    if not folder.is_dir():
        raise ImportFailed([f"{folder}: not a folder"])
    root = folder.resolve()
    problems = Problems()
    label = (label or "").strip()
    if not label:
        problems.add("--version", "a version label is needed")
    elif BenchmarkVersion.objects.filter(benchmark__slug=slug, label=label).exists():
        problems.add("--version", f"{slug} already has a version {label!r}; choose another label")

    specs = benchmark.read(root, problems)
    if not specs and not problems:
        problems.add(str(folder), "the release holds no items")
    _check_ids_and_payloads(slug, specs, problems)
    specs, skipped, missing = _check_media(benchmark, specs, root, problems, skip_missing=skip_missing_media)
    if not specs and skipped and not problems:
        problems.add(str(folder), "no item is left once the items with missing media are skipped")
    if problems:
        raise ImportFailed(problems.errors, problems.summary)

    with ImportLease() as lease:
        version, added, reused = _create(slug, specs, root, label, freeze=freeze, description=description, user=user,
                                         say=say, lease=lease)
    return ImportResult(version=version, items=len(specs), media_added=added, media_reused=reused,
                        skipped=skipped, missing=missing, warnings=problems.warnings, notes=problems.notes)


# --- Checks before anything is written ------------------------------------------------------------

def _check_ids_and_payloads(slug: str, specs: list[ItemSpec], problems: Problems) -> None:
    first_seen: dict[str, str] = {}
    for spec in specs:
        if not spec.external_id:
            problems.add(spec.where, "the item has no id")
        elif len(spec.external_id) > MAX_ID_LENGTH:
            problems.add(spec.where, f"id {spec.external_id!r} is longer than {MAX_ID_LENGTH} characters")
        elif spec.external_id in first_seen:
            problems.add(spec.where, f"duplicate id {spec.external_id!r} (first at {first_seen[spec.external_id]})")
        else:
            first_seen[spec.external_id] = spec.where
        try:
            validate_payload(slug, spec.payload)
        except ValidationError as exc:
            for message in exc.messages:
                problems.add(spec.where, message)


def check_medium(path: Path, kind: str):
    """What the library would learn about a medium (VideoFacts / ImageFacts); MediaError if it would refuse it."""
    if kind_for_name(path.name) != kind:
        raise MediaError(f"the file name is not that of {'a video' if kind == 'video' else 'an image'}")
    size = path.stat().st_size
    if size == 0:
        raise MediaError("the file is empty (0 bytes)")
    if size > max_upload_bytes():
        raise MediaError(f"the file is {size / 1e6:.1f} MB; the library's limit is {max_upload_bytes() / 1e6:.0f} MB")
    with path.open("rb") as handle:
        if sniff_kind(handle.read(32)) != kind:
            raise MediaError(f"the file does not contain {'a video' if kind == 'video' else 'an image'} "
                             f"(its content does not match its {path.suffix} extension)")
        handle.seek(0)
        if kind == "image":
            return check_image(handle)
    check_video(str(path))
    return probe_video(str(path))


def _check_media(benchmark, specs: list[ItemSpec], root: Path, problems: Problems, *,
                 skip_missing: bool) -> tuple[list[ItemSpec], int, list[str]]:
    """The items whose media are all present and importable, how many were skipped for missing media, and
    the summary of the missing files (one line each, then the total), which are problems unless skipped."""
    facts: dict[Path, object] = {}
    broken: set[Path] = set()
    kept = []
    missing = MissingMedia()
    for spec in specs:
        absent = [ref for ref in spec.media.values() if ref.path is None]
        for ref in absent:
            missing.add(ref, spec.where)
        if absent:
            continue
        for ref in spec.media.values():
            if ref.path in facts or ref.path in broken:
                continue
            try:
                facts[ref.path] = check_medium(ref.path, ref.kind)
            except (MediaError, OSError) as exc:
                broken.add(ref.path)
                problems.add(relative(ref.path, root), f"this {ref.kind} cannot be imported ({exc})")
        if any(ref.path in broken for ref in spec.media.values()):
            continue
        benchmark.check_media_facts(spec, {role: facts[ref.path] for role, ref in spec.media.items()}, problems)
        kept.append(spec)
    if not missing:
        return kept, 0, []
    if skip_missing:
        return kept, missing.item_count, [f"skipped: {line}" for line in missing.lines()] + [missing.total()]
    problems.errors.extend(missing.lines())
    problems.summary.extend([missing.total(), SKIP_HINT])
    return kept, 0, []


class MissingMedia:
    """The media a release names but does not hold, each with the items that need it."""

    SHOWN = 3  # item positions named per missing file

    def __init__(self):
        self.needed_by: dict[tuple[str, str], list[str]] = {}  # (kind, name) → where each item needing it is

    def add(self, ref: MediaRef, where: str) -> None:
        self.needed_by.setdefault((ref.kind, ref.expected), []).append(where)

    def __bool__(self) -> bool:
        return bool(self.needed_by)

    @property
    def item_count(self) -> int:
        return len({where for places in self.needed_by.values() for where in places})

    def lines(self) -> list[str]:
        """One line per missing file: its name, how many items need it and where the first of them are."""
        lines = []
        for (kind, name), places in self.needed_by.items():
            shown = ", ".join(places[:self.SHOWN]) + (f" and {len(places) - self.SHOWN} more"
                                                      if len(places) > self.SHOWN else "")
            lines.append(f"{kind} '{name}' not found: needed by {_items(len(places))} ({shown})")
        return lines

    def total(self) -> str:
        return f"{len(self.needed_by)} media file(s) missing, needed by {_items(self.item_count)} in all"


def _items(count: int) -> str:
    return f"{count} item{'' if count == 1 else 's'}"


# --- Creating the version -------------------------------------------------------------------------

def _create(slug, specs, root, label, *, freeze, description, user, say, lease):
    benchmark = Benchmark.objects.get(slug=slug)
    stored: list[tuple] = []  # (storage, name) of every file written, deleted again if the transaction fails
    added = reused = 0
    try:
        with transaction.atomic():
            version = BenchmarkVersion.objects.create(benchmark=benchmark, label=label,
                                                      description=description or f"Imported from {root}",
                                                      source=BenchmarkVersion.Source.IMPORT, created_by=user)
            assets: dict[Path, object] = {}
            for spec in specs:
                for ref in spec.media.values():
                    if ref.path in assets:
                        continue
                    assets[ref.path], new = store_medium(ref, root, benchmark.name, user, stored)
                    lease.renew()
                    added, reused = added + new, reused + (not new)
                    say(f"{'+' if new else '='} {relative(ref.path, root)}")
            for spec in specs:
                versions.add_item(version, spec.external_id, spec.payload,
                                  {role: assets[ref.path] for role, ref in spec.media.items()})
            if freeze:
                version = versions.freeze(version)
            else:
                refused = versions.item_problems(version)
                if refused:
                    raise versions.FreezeRefused([], refused)
    except versions.FreezeRefused as exc:
        _delete(stored)
        raise ImportFailed(_unevaluable(exc, specs)) from exc
    except ValidationError as exc:
        _delete(stored)
        raise ImportFailed(exc.messages) from exc
    except IntegrityError as exc:
        _delete(stored)
        raise ImportFailed([f"the version could not be created ({exc})"]) from exc
    except BaseException:
        _delete(stored)
        raise
    return version, added, reused


def _unevaluable(refusal, specs: list[ItemSpec]) -> list[str]:
    """The items the evaluation cannot ask about, by file and row, or the refusal's own messages."""
    where = {spec.external_id: spec.where for spec in specs}
    found = [f"{where[external_id]} ({external_id}): its evaluation requests cannot be built: {reason}"
             for external_id, reason in refusal.items if external_id in where]
    return found or refusal.messages


def store_medium(ref: MediaRef, root: Path, benchmark_name: str, user, stored: list) -> tuple[object, bool]:
    """The library's asset for one medium: ingested and probed here, or the one already holding these bytes."""
    name = relative(ref.path, root)
    incoming = incoming_from_path(ref.path)
    try:
        asset = ingest(incoming, user=user, title=f"{benchmark_name}: {name}", expected_kind=ref.kind,
                       source=MediaAsset.Source.IMPORT, probe=False)
    except MediaRejected as exc:
        if exc.existing is not None:
            return exc.existing, False
        raise ImportFailed([f"{name}: {exc.message}"]) from exc
    finally:
        incoming.fileobj.close()
    stored.append((asset.file.storage, asset.file.name))
    job = probe_here(asset, user=user)
    if job.status != job.Status.SUCCEEDED:
        raise ImportFailed([f"{name}: {job.message}"])
    asset.refresh_from_db()
    preview = getattr(asset, "poster", None) or getattr(asset, "thumbnail", None)
    if preview and preview.name:
        stored.append((preview.storage, preview.name))
    return asset, True


def _delete(stored: list) -> None:
    for storage, name in stored:
        if name and storage.exists(name):
            storage.delete(name)
