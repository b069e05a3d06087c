"""The image studio: designers generate the images of an item's image slots and pick one per slot.

A benchmark names the media roles whose images are made here (`BenchmarkDefinition.image_slots`); an
item's slots are those, then any other role it already holds an image under. Every attempt is one
`ImageAttempt` row (a node of the item's attempt tree) and one job on the `gpu` queue:

- `start_attempt`: text-to-image, image-to-image from a parent (an earlier attempt of the same item,
  any slot, or an image the item already uses) with a strength, or inpainting of a parent with a
  mask (a PNG of the parent's size, white = regenerate). Everything is checked before anything is
  written: who asks (curators and admins), the version (not frozen), the slot, the parent, the mask,
  the parameters (through `generation.diffusion.ImageRequest`), the model (a registered one for image
  generation, or for inpainting: `generation.model_registry`; the attempt records its model id and
  revision). The row, its mask file and its job
  are written together or not at all.
- `run_attempt_job` (job kind `image_attempt`): runs `generation.diffusion.generate` and stores the
  PNG, the provenance, the revision and the duration; a generation that fails leaves the attempt
  `failed` with the reason and no image.
- `pick_final`: a finished attempt becomes its slot's image: stored in the media library like an
  upload (checked, deduplicated and probed by `annotation.media.ingest`, source "derived", provenance
  naming the attempt) and linked to the item under the slot's role, replacing the previous image.

Prompts default to the item's augmented prompt for the slot when its curation record has one
(`working["prompts"][slot]`), else to the text the payload gives for the slot; the photorealistic
suffix is appended unless the designer edits it; the seed defaults to the item's seed
(`working["seed"]`), else to the seed of its first attempt, so that an item's images share one seed.
"""

from __future__ import annotations

import hashlib
import io
import math
import secrets
from collections.abc import Mapping
from dataclasses import MISSING, dataclass, fields

from django.core.files.base import ContentFile
from django.db import transaction
from django.utils import timezone
from PIL import Image as PILImage
from PIL import UnidentifiedImageError

from annotation import media
from annotation.benchmarks import registry
from annotation.curation_models import CurationRecord, ImageAttempt
from annotation.models import BenchmarkItem, FrozenError, Image, ItemMedia, MediaAsset
from config.ids import parse_id
from config.roles import ADMIN, CURATOR, has_role
from generation import diffusion, jobs, model_registry
from generation.registered_models import Use

JOB_KIND = "image_attempt"
MODES = tuple(ImageAttempt.Mode.values)
ACTIVE = (ImageAttempt.Status.QUEUED, ImageAttempt.Status.RUNNING)
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
MAX_MASK_BYTES = 20 * 1024 * 1024
MAX_SEED = 2**32 - 1
REQUEST_DEFAULTS = {f.name: f.default for f in fields(diffusion.ImageRequest) if f.default is not MISSING}
LIMITS = {  # parameter: (lowest, highest)
    "steps": (1, 500),
    "guidance": (0.0, 50.0),
    "width": (8, 4096),
    "height": (8, 4096),
    "strength": (0.01, 1.0),
}


class StudioError(Exception):
    """A studio request refused; `status` is the HTTP status that describes it best."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.message = message
        self.status = status


# --- Who, which item, which slot -------------------------------------------------------------

def may_use(user) -> bool:
    """Curators and admins generate and pick images."""
    return has_role(user, CURATOR, ADMIN)


def _require_designer(user) -> None:
    if not may_use(user):
        raise StudioError("Only curators and admins may generate or pick images.", 403)


def _require_unfrozen(item: BenchmarkItem) -> None:
    if item.version.frozen:
        raise StudioError(f"Version {item.version} is frozen: its images cannot change.", 409)


def declared_slots(item: BenchmarkItem) -> tuple[str, ...]:
    """The image roles the item's benchmark declares (none for an unknown benchmark)."""
    try:
        return tuple(registry.get(item.version.benchmark.slug).image_slots)
    except registry.UnknownBenchmark:
        return ()


def image_slots(item: BenchmarkItem, image_roles=None) -> list[str]:
    """The item's image slots: its benchmark's, then any other role it holds an image under (`image_roles`
    when the caller has read them already)."""
    slots = list(declared_slots(item))
    if image_roles is None:
        image_roles = item.media.filter(image__isnull=False).values_list("role", flat=True)
    for role in sorted(image_roles):
        if role not in slots:
            slots.append(role)
    return slots


def check_slot(item: BenchmarkItem, slot: str) -> str:
    slots = image_slots(item)
    if slot not in slots:
        known = ", ".join(slots) or "none"
        raise StudioError(f"{slot!r} is not an image slot of item {item.external_id} (its slots: {known}).", 404)
    return slot


def slot_text(item: BenchmarkItem, slot: str) -> str:
    """The scene the payload gives for the slot ("" when it gives none)."""
    try:
        definition = registry.get(item.version.benchmark.slug)
    except registry.UnknownBenchmark:
        return ""
    return definition.image_slot_text(item.payload, slot)


def working_fields(item: BenchmarkItem) -> dict:
    """The item's curation working fields (empty without a curation record)."""
    record = CurationRecord.objects.filter(item=item).only("working").first()
    return record.working if record is not None and isinstance(record.working, dict) else {}


def current_media(item: BenchmarkItem, slot: str) -> ItemMedia | None:
    return item.media.filter(role=slot, image__isnull=False).select_related("image").first()


def current_image(item: BenchmarkItem, slot: str) -> Image | None:
    found = current_media(item, slot)
    return found.image if found is not None else None


# --- Defaults and parameters -----------------------------------------------------------------

def default_seed(item: BenchmarkItem, working: dict | None = None) -> int:
    """The item's seed when its record holds one, else its first attempt's, else a fresh one."""
    working = working_fields(item) if working is None else working
    seed = working.get("seed")
    if isinstance(seed, int) and not isinstance(seed, bool) and 0 <= seed <= MAX_SEED:
        return seed
    first = item.image_attempts.order_by("created_at", "pk").values_list("seed", flat=True).first()
    return first if first is not None else secrets.randbelow(MAX_SEED + 1)


def default_prompt(item: BenchmarkItem, slot: str, working: dict | None = None) -> str:
    """The augmented prompt for the slot when the item's record holds one, else the slot's scene text."""
    working = working_fields(item) if working is None else working
    prompts = working.get("prompts")
    if isinstance(prompts, dict) and isinstance(prompts.get(slot), str) and prompts[slot].strip():
        return prompts[slot].strip()
    return slot_text(item, slot).strip()


def defaults(item: BenchmarkItem, slot: str) -> dict:
    """What the studio's form starts with for one slot."""
    working = working_fields(item)
    return {"prompt": default_prompt(item, slot, working), "suffix": diffusion.PHOTOREALISTIC_SUFFIX,
            "negative_prompt": "", "seed": default_seed(item, working), "scheduler": "",
            **{name: REQUEST_DEFAULTS[name] for name in ("steps", "guidance", "width", "height", "strength")}}


@dataclass(frozen=True)
class AttemptSettings:
    """What the designer asks for, parsed and range-checked."""

    mode: str
    prompt: str
    seed: int
    model_id: str
    suffix: str = ""
    negative_prompt: str = ""
    revision: str = ""
    scheduler: str = ""
    steps: int = REQUEST_DEFAULTS["steps"]
    guidance: float = REQUEST_DEFAULTS["guidance"]
    width: int = REQUEST_DEFAULTS["width"]
    height: int = REQUEST_DEFAULTS["height"]
    strength: float = REQUEST_DEFAULTS["strength"]

    @property
    def full_prompt(self) -> str:
        return f"{self.prompt}{self.suffix}"


def _number(data: Mapping, name: str, kind, label: str):
    raw = data.get(name)
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return REQUEST_DEFAULTS[name]
    try:
        value = kind(raw.strip() if isinstance(raw, str) else raw)
    except (TypeError, ValueError):
        raise StudioError(f"{label} must be a {'whole ' if kind is int else ''}number, not {raw!r}.") from None
    if kind is float and not math.isfinite(value):
        raise StudioError(f"{label} must be a finite number.")
    low, high = LIMITS[name]
    if not low <= value <= high:
        raise StudioError(f"{label} must be between {low:g} and {high:g}.")
    return value


def _text(data: Mapping, name: str) -> str:
    value = data.get(name, "")
    return value if isinstance(value, str) else str(value)


def parse_settings(data: Mapping, *, item: BenchmarkItem | None = None) -> AttemptSettings:
    """Settings from a form or a JSON body (strings or numbers); StudioError (400) naming what is wrong.
    Without a seed the item's default seed is used; without a suffix the photorealistic one (an empty
    suffix is none)."""
    mode = _text(data, "mode").strip()
    if mode not in MODES:
        raise StudioError(f"Choose a mode: {', '.join(MODES)}.")
    prompt = _text(data, "prompt").strip()
    if not prompt:
        raise StudioError("Write a prompt.")
    try:  # a registered checkpoint: its model id and pinned revision are what the attempt records
        use = Use.INPAINTING if mode == ImageAttempt.Mode.INPAINT else Use.IMAGE_GENERATION
        chosen = model_registry.choose(_text(data, "model_id").strip(), revision=_text(data, "revision").strip(),
                                       use=use)
    except model_registry.ModelRefused as exc:
        raise StudioError(str(exc)) from None
    raw_seed = data.get("seed")
    if raw_seed is None or (isinstance(raw_seed, str) and not raw_seed.strip()):
        if item is None:
            raise StudioError("Give a seed.")
        seed = default_seed(item)
    else:
        try:
            seed = int(raw_seed.strip() if isinstance(raw_seed, str) else raw_seed)
        except (TypeError, ValueError):
            raise StudioError(f"The seed must be a whole number, not {raw_seed!r}.") from None
        if not 0 <= seed <= MAX_SEED:
            raise StudioError(f"The seed must be between 0 and {MAX_SEED}.")
    scheduler = _text(data, "scheduler").strip()
    if scheduler and scheduler not in diffusion.schedulers():
        raise StudioError(f"Unknown scheduler {scheduler!r}; choose one of {', '.join(diffusion.schedulers())}.")
    suffix = diffusion.PHOTOREALISTIC_SUFFIX if data.get("suffix") is None else _text(data, "suffix")
    return AttemptSettings(
        mode=mode, prompt=prompt, seed=seed, model_id=chosen.model_id, suffix=suffix,
        negative_prompt=_text(data, "negative_prompt").strip(), revision=chosen.revision,
        scheduler=scheduler, steps=_number(data, "steps", int, "Steps"),
        guidance=_number(data, "guidance", float, "Guidance"), width=_number(data, "width", int, "Width"),
        height=_number(data, "height", int, "Height"), strength=_number(data, "strength", float, "Strength"))


# --- Parents and masks -----------------------------------------------------------------------

@dataclass(frozen=True)
class Parent:
    """What an attempt starts from: an earlier attempt of the item or an image the item uses."""

    attempt: ImageAttempt | None = None
    image: Image | None = None

    @property
    def key(self) -> str:
        if self.attempt is not None:
            return f"attempt:{self.attempt.pk}"
        return f"image:{self.image.pk}" if self.image is not None else ""

    def __bool__(self) -> bool:
        return self.attempt is not None or self.image is not None

    def open(self) -> PILImage.Image:
        field = self.attempt.image if self.attempt is not None else self.image.file
        with field.open("rb") as handle:
            picture = PILImage.open(handle)
            picture.load()
        return picture.convert("RGB")


def resolve_parent(item: BenchmarkItem, key: str) -> Parent:
    """A parent by its key, `attempt:<id>` (a finished attempt of the same item) or `image:<id>` (an
    image the item uses under any role); an empty key is no parent."""
    key = (key or "").strip()
    if not key:
        return Parent()
    kind, _, raw = key.partition(":")
    parent_id = parse_id(raw)
    if kind not in ("attempt", "image") or parent_id is None:
        raise StudioError(f"Unknown parent {key!r}: give attempt:<id> or image:<id>.")
    if kind == "attempt":
        attempt = ImageAttempt.objects.filter(pk=parent_id, item=item).first()
        if attempt is None:
            raise StudioError(f"Attempt #{raw} is not an attempt of item {item.external_id}.")
        if attempt.status != ImageAttempt.Status.DONE or not attempt.image:
            raise StudioError(f"Attempt #{raw} has no image yet ({attempt.status}): it cannot be a parent.", 409)
        return Parent(attempt=attempt)
    used = ItemMedia.objects.filter(item=item, image_id=parent_id).select_related("image").first()
    if used is None:
        raise StudioError(f"Image #{raw} is not one of item {item.external_id}'s images.")
    return Parent(image=used.image)


def read_mask(upload, size: tuple[int, int]) -> PILImage.Image:
    """The uploaded mask as a black-and-white picture (white = regenerate), checked: a PNG, of the
    parent's size (`size`), with something painted."""
    if upload is None:
        raise StudioError("Inpainting needs a mask: paint the region to regenerate.")
    if getattr(upload, "size", 0) > MAX_MASK_BYTES:
        raise StudioError(f"The mask is larger than {MAX_MASK_BYTES // (1024 * 1024)} MB.", 413)
    upload.seek(0)
    if upload.read(len(PNG_SIGNATURE)) != PNG_SIGNATURE:
        raise StudioError("The mask must be a PNG image.")
    upload.seek(0)
    try:
        picture = PILImage.open(upload)
        if picture.format != "PNG":
            raise StudioError("The mask must be a PNG image.")
        if picture.size != tuple(size):
            raise StudioError(f"The mask is {picture.width}×{picture.height} pixels; the parent image is "
                              f"{size[0]}×{size[1]}: paint it over the parent.")
        picture.load()
    except (OSError, UnidentifiedImageError, SyntaxError, ValueError) as exc:
        raise StudioError(f"The mask is not a readable PNG image ({exc}).") from None
    rgba = picture.convert("RGBA")
    on_black = PILImage.alpha_composite(PILImage.new("RGBA", rgba.size, (0, 0, 0, 255)), rgba)
    mask = on_black.convert("L").point(lambda value: 255 if value >= 128 else 0)
    if mask.getbbox() is None:
        raise StudioError("The mask is empty: paint the region to regenerate in white.")
    return mask


def png_bytes(picture: PILImage.Image) -> bytes:
    buffer = io.BytesIO()
    picture.save(buffer, format="PNG")
    return buffer.getvalue()


# --- Starting an attempt ---------------------------------------------------------------------

def build_request(settings: AttemptSettings, *, init_image=None, mask=None) -> diffusion.ImageRequest:
    """The generation request, checked by `generation.diffusion.validate` without loading anything
    (StudioError 400 on a refusal: a model folder that is not a pipeline, a size that is not a multiple
    of 8, steps × strength below 1, …)."""
    options = {}
    if init_image is not None:
        options["init_image"] = init_image
        options["strength"] = settings.strength
    if mask is not None:
        options["mask"] = mask
    request = diffusion.ImageRequest(
        model=settings.model_id, prompt=settings.full_prompt, seed=settings.seed, revision=settings.revision,
        negative_prompt=settings.negative_prompt, steps=settings.steps, guidance=settings.guidance,
        width=settings.width, height=settings.height, scheduler=settings.scheduler, **options)
    try:
        diffusion.validate(request)
    except diffusion.DiffusionError as exc:
        raise StudioError(str(exc)) from None
    return request


def attempt_params(settings: AttemptSettings, size: tuple[int, int] | None = None) -> dict:
    """The parameters recorded on the attempt (the size is the parent's when there is one)."""
    width, height = size or (settings.width, settings.height)
    params = {"steps": settings.steps, "guidance": settings.guidance, "width": width, "height": height,
              "suffix": settings.suffix}
    if settings.mode != ImageAttempt.Mode.TEXT_TO_IMAGE:
        params["strength"] = settings.strength
    return params


def start_attempt(item: BenchmarkItem, slot: str, settings: AttemptSettings, *, user, parent: Parent | None = None,
                  mask_upload=None) -> ImageAttempt:
    """Check everything, then write the queued attempt, its mask and its job together."""
    _require_designer(user)
    _require_unfrozen(item)
    check_slot(item, slot)
    parent = parent or Parent()
    mode = settings.mode
    if mode == ImageAttempt.Mode.TEXT_TO_IMAGE and parent:
        raise StudioError("Text-to-image starts from the prompt alone: choose image-to-image or inpainting "
                          "to start from a parent image.")
    if mode != ImageAttempt.Mode.TEXT_TO_IMAGE and not parent:
        raise StudioError(f"{ImageAttempt.Mode(mode).label} starts from a parent image: choose one.")
    init_image = mask = None
    size = None
    if parent:
        try:
            init_image = parent.open()
        except (OSError, UnidentifiedImageError, ValueError) as exc:
            raise StudioError(f"The parent image cannot be read ({exc}).", 409) from None
        size = init_image.size
        if size[0] % 8 or size[1] % 8:
            raise StudioError(f"The parent image is {size[0]}×{size[1]} pixels; image-to-image and inpainting keep "
                              "the parent's size, which must be a multiple of 8 on both sides.")
        settings = _sized(settings, size)
    if mode == ImageAttempt.Mode.INPAINT:
        mask = read_mask(mask_upload, init_image.size)
    elif mask_upload is not None:
        raise StudioError("Only inpainting takes a mask.")
    build_request(settings, init_image=init_image, mask=mask)  # refused here rather than in the job
    stored = None
    try:
        with transaction.atomic():
            attempt = ImageAttempt.objects.create(
                item=item, slot=slot, parent=parent.attempt, parent_image=parent.image, mode=mode,
                prompt=settings.full_prompt, negative_prompt=settings.negative_prompt, seed=settings.seed,
                model_id=settings.model_id, revision=settings.revision, scheduler=settings.scheduler,
                params=attempt_params(settings, size), created_by=user)
            if mask is not None:
                attempt.mask.save(f"{item.pk}-{slot}-{attempt.pk}-mask.png", ContentFile(png_bytes(mask)), save=False)
                stored = attempt.mask.name
            job = jobs.enqueue(JOB_KIND, params={"attempt": attempt.pk}, user=user)
            attempt.job = job
            attempt.save(update_fields=["mask", "job"])
    except BaseException:
        if stored and ImageAttempt.mask.field.storage.exists(stored):
            ImageAttempt.mask.field.storage.delete(stored)
        raise
    return attempt


def _sized(settings: AttemptSettings, size: tuple[int, int]) -> AttemptSettings:
    """Image-to-image and inpainting keep the parent's size."""
    values = {f.name: getattr(settings, f.name) for f in fields(settings)}
    values["width"], values["height"] = size
    return AttemptSettings(**values)


def settings_of(attempt: ImageAttempt) -> AttemptSettings:
    """The settings an attempt was asked with (the suffix is part of its prompt)."""
    params = attempt.params or {}
    return AttemptSettings(
        mode=attempt.mode, prompt=attempt.prompt, seed=attempt.seed, model_id=attempt.model_id,
        negative_prompt=attempt.negative_prompt, revision=attempt.revision, scheduler=attempt.scheduler,
        **{name: params[name] for name in ("steps", "guidance", "width", "height", "strength") if name in params})


def parent_of(attempt: ImageAttempt) -> Parent:
    return Parent(attempt=attempt.parent, image=attempt.parent_image)


def open_mask(attempt: ImageAttempt) -> PILImage.Image | None:
    if not attempt.mask:
        return None
    with attempt.mask.open("rb") as handle:
        picture = PILImage.open(handle)
        picture.load()
    return picture.convert("L")


# --- Picking the final image -----------------------------------------------------------------

def final_title(attempt: ImageAttempt) -> str:
    return f"{attempt.item.external_id} {attempt.slot} (attempt #{attempt.pk})"


def pick_final(attempt: ImageAttempt, user) -> ItemMedia:
    """Make a finished attempt its slot's image: a library image (probed like an upload) linked to the
    item under the slot's role, replacing the previous one; the attempt records who picked it when."""
    _require_designer(user)
    item = attempt.item
    _require_unfrozen(item)
    if attempt.status != ImageAttempt.Status.DONE or not attempt.image:
        raise StudioError(f"Attempt #{attempt.pk} is {attempt.get_status_display().lower()}: only a finished "
                          "attempt with an image can be picked.", 409)
    try:
        with attempt.image.open("rb") as handle:
            data = handle.read()
    except OSError as exc:
        raise StudioError(f"The image of attempt #{attempt.pk} cannot be read ({exc}).", 409) from None
    name = f"{item.external_id}-{attempt.slot}-attempt{attempt.pk}.png"
    checksum = hashlib.sha256(data).hexdigest()
    added = None  # a library image this call stored, removed again if the rest fails
    try:
        with transaction.atomic():
            image = Image.objects.filter(checksum=checksum).first()
            if image is None:
                image = added = _ingest(attempt, data, name, user)
            try:
                linked, _ = ItemMedia.objects.update_or_create(item=item, role=attempt.slot,
                                                               defaults={"image": image, "video": None})
            except FrozenError as exc:  # frozen meanwhile
                raise StudioError(" ".join(exc.messages), 409) from exc
            now = timezone.now()
            ImageAttempt.objects.filter(pk=attempt.pk).update(chosen_at=now, chosen_by=user)
    except BaseException:
        if added is not None and added.file.name and added.file.storage.exists(added.file.name):
            added.file.storage.delete(added.file.name)
        raise
    attempt.chosen_at, attempt.chosen_by = now, user
    return linked


def _ingest(attempt: ImageAttempt, data: bytes, name: str, user) -> Image:
    incoming = media.Incoming(fileobj=ContentFile(data, name=name), name=name, size=len(data))
    try:
        image = media.ingest(incoming, user=user, title=final_title(attempt), expected_kind="image",
                             source=MediaAsset.Source.DERIVED)
    except media.MediaRejected as exc:
        raise StudioError(f"The image of attempt #{attempt.pk} cannot go into the library: {exc.message}",
                          exc.status) from exc
    image.provenance = library_provenance(attempt)
    Image.objects.filter(pk=image.pk).update(provenance=image.provenance)
    return image


def library_provenance(attempt: ImageAttempt) -> dict:
    """What the library image made from an attempt says about where it came from."""
    return {"image_attempt": attempt.pk, "item": attempt.item_id, "slot": attempt.slot, "mode": attempt.mode,
            "model_id": attempt.model_id, "revision": attempt.revision, "seed": attempt.seed,
            "prompt": attempt.prompt, "generation": attempt.provenance}
