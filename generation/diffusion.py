"""Image generation with Stable Diffusion pipelines (diffusers): text-to-image, image-to-image and
inpainting, seeded and reproducible, with the provenance of every image.

`generate(ImageRequest(...))` returns the image and a provenance dict (model, resolved revision,
prompt, negative prompt, seed, scheduler class, steps, guidance, strength, size, mode, checksums of
the parent image and the mask, device, dtype, diffusers version, seconds).

Modes (`mode_of`): no `init_image` → text-to-image; `init_image` → image-to-image (conditioned on it
with `strength`, 0.8 by default as NL-EYE's "conditioning strength 80/100"); `init_image` and
`mask` → inpainting (white = regenerate).

Checkpoints: a text-to-image checkpoint (4-channel UNet, e.g. SD 1.5) does text-to-image and
image-to-image (`StableDiffusionImg2ImgPipeline` built from the same components, nothing loaded
twice); inpainting works with an inpainting checkpoint (9-channel UNet: latents, mask and masked
image, e.g. SD inpainting) and also with a text-to-image checkpoint, which diffusers' inpainting
pipeline runs by blending the noised parent into the latents outside the mask at every step (less
coherent edges than a real inpainting checkpoint). An inpainting checkpoint only inpaints: text-to-
image or image-to-image with one is refused.

Inpainting keeps the parent exactly outside the mask: the mask is binarised (grey level > 127 =
regenerate) and, after the pipeline ran, the parent's pixels are pasted back wherever the mask is
black, so every pixel outside the mask equals the parent's.

Requests are checked before anything is loaded; a bad one raises `DiffusionError` with a clear
message: no model, a model folder that does not exist or is not a diffusers pipeline, an empty
prompt, a negative seed, steps outside 1–1000, a negative guidance, a size that is not a multiple
of 8 (8–2048 px), a strength outside (0, 1] or one that leaves no denoising step (steps × strength
< 1), an unknown scheduler, a mask without an init image, an init image or mask whose size is not
exactly width × height (nothing is resized: the caller decides how to crop or scale), a mask with
no white pixel, CUDA asked for where there is none.

Determinism: the noise comes from a `torch.Generator` on the generation device seeded with the
request's seed, and the scheduler is a fresh instance for every call, so the same request on the
same device and software gives identical pixels; another seed gives another image.

Pipelines are cached per process, keyed by (model, revision, pipeline class, device, dtype); the
cache keeps the pipelines of the most recently used checkpoints (`DIFFUSION_PIPELINE_CACHE_SIZE`,
setting or environment variable, default 2: a text-to-image and an inpainting checkpoint), the
least recently used one dropped first. A pipeline of another class over the same weights
(image-to-image after text-to-image) is built from the cached components without loading or
copying anything. Loading runs under a lock, and each checkpoint has its own lock, so threads never
run the same modules at once. On CUDA the pipeline runs in float16 with attention slicing;
elsewhere in float32. The safety checker is off and progress bars are disabled. Loading honours
HF_HUB_OFFLINE (local files only).
"""

from __future__ import annotations

import hashlib
import io
import logging
import math
import os
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from django.conf import settings

from generation.backends._hf import hub_offline, local_commit_hash, local_path

if TYPE_CHECKING:
    from PIL import Image

logger = logging.getLogger(__name__)

PHOTOREALISTIC_SUFFIX = ", captured with a Nikon D850 and a 24-70mm lens at f/2.8"  # NL-EYE App. E.1

TEXT2IMAGE = "text2image"
IMAGE2IMAGE = "image2image"
INPAINT = "inpaint"
MODES = (TEXT2IMAGE, IMAGE2IMAGE, INPAINT)

PIPELINE_CLASSES = {
    TEXT2IMAGE: "StableDiffusionPipeline",
    IMAGE2IMAGE: "StableDiffusionImg2ImgPipeline",
    INPAINT: "StableDiffusionInpaintPipeline",
}

# Schedulers that run Stable Diffusion (1.x/2.x) pipelines, by diffusers class name.
SCHEDULERS = (
    "DDIMScheduler",
    "DDPMScheduler",
    "PNDMScheduler",
    "LMSDiscreteScheduler",
    "EulerDiscreteScheduler",
    "EulerAncestralDiscreteScheduler",
    "HeunDiscreteScheduler",
    "KDPM2DiscreteScheduler",
    "KDPM2AncestralDiscreteScheduler",
    "DPMSolverMultistepScheduler",
    "DPMSolverSinglestepScheduler",
    "DEISMultistepScheduler",
    "UniPCMultistepScheduler",
)

# a checkpoint's registry entry (generation.model_registry) takes no options: each request sets its parameters
OPTIONS = ()
ADMIN_OPTIONS = ()

MAX_SIDE = 2048
MAX_STEPS = 1000
MAX_SEED = 2**63 - 1
DEFAULT_CACHE_SIZE = 2
SD_COMPONENTS = ("unet", "vae", "text_encoder", "tokenizer", "scheduler")


class DiffusionError(ValueError):
    """A request that cannot run (bad parameters, a model that cannot be found or used), with a
    message that says what to change."""


@dataclass(frozen=True)
class ImageRequest:
    model: str                 # hub id or local folder
    prompt: str
    seed: int
    revision: str = ""
    negative_prompt: str = ""
    steps: int = 30
    guidance: float = 7.5
    width: int = 512
    height: int = 512
    scheduler: str = ""        # a class name from schedulers(); "" keeps the checkpoint's own
    init_image: Image.Image | None = None   # image-to-image, or the parent for inpainting
    strength: float = 0.8
    mask: Image.Image | None = None          # inpainting: white = regenerate; needs init_image


@dataclass
class GeneratedImage:
    image: Image.Image
    provenance: dict
    seconds: float
    reused_pipeline: bool     # True when the weights came from this process's cache (nothing loaded)


def mode_of(request: ImageRequest) -> str:
    """"text2image", "image2image" (an init image) or "inpaint" (a mask; needs an init image)."""
    if request.mask is not None:
        return INPAINT
    if request.init_image is not None:
        return IMAGE2IMAGE
    return TEXT2IMAGE


def schedulers() -> list[str]:
    """The scheduler class names a request may name (those this diffusers version has)."""
    import diffusers

    return [name for name in SCHEDULERS if hasattr(diffusers, name)]


def png_bytes(image: Image.Image) -> bytes:
    """The image encoded as PNG by PIL with its defaults (mode kept): what the checksums hash."""
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def image_sha256(image: Image.Image | None) -> str | None:
    """SHA-256 of `png_bytes(image)`; None for no image."""
    return None if image is None else hashlib.sha256(png_bytes(image)).hexdigest()


def binary_mask(mask: Image.Image) -> Image.Image:
    """The mask as an "L" image of 0 and 255 only: grey level > 127 = 255 (regenerate)."""
    return mask.convert("L").point(lambda value: 255 if value > 127 else 0)


# --- Checking requests ------------------------------------------------------------------------

def _looks_like_path(model: str) -> bool:
    """A filesystem path rather than a hub id ("name" or "org/name")."""
    return model.startswith(("/", ".", "~")) or model.count("/") > 1 or "\\" in model


def validate(request: ImageRequest) -> str:
    """Check a request without loading anything; returns its mode. Raises DiffusionError."""
    model = (request.model or "").strip()
    if not model:
        raise DiffusionError("A model is required: a hub id (org/name) or a local diffusers pipeline folder.")
    folder = local_path(model)
    if folder is None and _looks_like_path(model):
        raise DiffusionError(f"Model folder {model!r} does not exist.")
    if folder is not None and not (folder / "model_index.json").is_file():
        raise DiffusionError(f"{model!r} is not a diffusers pipeline folder (it has no model_index.json).")
    if not isinstance(request.prompt, str) or not request.prompt.strip():
        raise DiffusionError("A prompt is required.")
    if not isinstance(request.negative_prompt, str):
        raise DiffusionError("The negative prompt must be text.")
    if isinstance(request.seed, bool) or not isinstance(request.seed, int) or not 0 <= request.seed <= MAX_SEED:
        raise DiffusionError(f"The seed must be a whole number from 0 to {MAX_SEED}, got {request.seed!r}.")
    if isinstance(request.steps, bool) or not isinstance(request.steps, int) or not 1 <= request.steps <= MAX_STEPS:
        raise DiffusionError(f"Steps must be a whole number from 1 to {MAX_STEPS}, got {request.steps!r}.")
    if not _is_number(request.guidance) or request.guidance < 0:
        raise DiffusionError(f"Guidance must be a number of 0 or more, got {request.guidance!r}.")
    for name in ("width", "height"):
        value = getattr(request, name)
        if isinstance(value, bool) or not isinstance(value, int) or not 8 <= value <= MAX_SIDE or value % 8:
            raise DiffusionError(f"The {name} must be a multiple of 8 from 8 to {MAX_SIDE} pixels, got {value!r}.")
    if request.scheduler and request.scheduler not in schedulers():
        raise DiffusionError(f"Unknown scheduler {request.scheduler!r}; choose one of {', '.join(schedulers())} "
                             f"(or none to keep the checkpoint's own).")
    if request.mask is not None and request.init_image is None:
        raise DiffusionError("A mask needs an init image: inpainting edits the masked region of the init image.")
    mode = mode_of(request)
    if mode == TEXT2IMAGE:
        return mode
    if not _is_number(request.strength) or not 0 < request.strength <= 1:
        raise DiffusionError(f"Strength must be more than 0 and at most 1, got {request.strength!r}.")
    if int(request.steps * request.strength) < 1:
        raise DiffusionError(f"{request.steps} steps at strength {request.strength} leave no denoising step: "
                             f"steps × strength must be at least 1.")
    size = (request.width, request.height)
    if not _is_image(request.init_image):
        raise DiffusionError("The init image must be a PIL image.")
    if request.init_image.size != size:
        raise DiffusionError(f"The init image is {_size(request.init_image.size)} but the request asks for "
                             f"{_size(size)}: they must be the same (nothing is resized).")
    if mode == INPAINT:
        if not _is_image(request.mask):
            raise DiffusionError("The mask must be a PIL image.")
        if request.mask.size != size:
            raise DiffusionError(f"The mask is {_size(request.mask.size)} but the init image is {_size(size)}: "
                                 f"they must be the same size.")
        if binary_mask(request.mask).getextrema()[1] == 0:
            raise DiffusionError("The mask has no white pixel: nothing to regenerate (white = regenerate).")
    return mode


def _is_number(value) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)


def _is_image(value) -> bool:
    from PIL import Image

    return isinstance(value, Image.Image)


def _size(size: tuple[int, int]) -> str:
    return f"{size[0]}x{size[1]}"


def resolve_device(device: str | None) -> str:
    import torch

    if device in (None, ""):
        return "cuda" if torch.cuda.is_available() else "cpu"
    device = str(device).strip()
    try:
        parsed = torch.device(device)
    except (RuntimeError, ValueError) as exc:
        raise DiffusionError(f"Unknown device {device!r}: use cpu, cuda or cuda:N.") from exc
    if parsed.type == "cuda" and not torch.cuda.is_available():
        raise DiffusionError(f"Device {device!r} asked for, but CUDA is not available here.")
    if parsed.type == "cuda" and parsed.index is not None and parsed.index >= torch.cuda.device_count():
        raise DiffusionError(f"Device {device!r} asked for, but there are {torch.cuda.device_count()} CUDA devices.")
    return device


def _dtype_for(device: str):
    import torch

    return torch.float16 if device.startswith("cuda") else torch.float32


# --- The pipeline cache -----------------------------------------------------------------------

@dataclass
class _Checkpoint:
    """One loaded set of weights and the pipelines built over it, by class name."""

    revision: str
    unet_in_channels: int
    scheduler_config: Any
    pipelines: dict[str, Any]
    lock: threading.Lock = field(default_factory=threading.Lock)


# (model, revision, device, dtype) -> checkpoint, least recently used first.
_cache: OrderedDict[tuple, _Checkpoint] = OrderedDict()
_cache_lock = threading.Lock()
_stats = {"loads": 0, "hits": 0, "derived": 0}


def cache_size() -> int:
    """How many checkpoints the cache keeps, each with its pipelines (DIFFUSION_PIPELINE_CACHE_SIZE,
    default 2, at least 1)."""
    value = getattr(settings, "DIFFUSION_PIPELINE_CACHE_SIZE", None) if settings.configured else None
    if value is None:
        value = os.environ.get("DIFFUSION_PIPELINE_CACHE_SIZE", "").strip() or DEFAULT_CACHE_SIZE
    try:
        return max(1, int(value))
    except (TypeError, ValueError):
        return DEFAULT_CACHE_SIZE


def clear_pipeline_cache() -> None:
    """Drop every cached pipeline (and free the GPU memory they held)."""
    with _cache_lock:
        _cache.clear()
        for key in _stats:
            _stats[key] = 0
    _free_memory()


def cache_info() -> dict:
    """Counters since the last clear (checkpoints loaded, cached pipelines reused, pipelines built
    over cached weights), the cache size, and the cached pipelines' keys (model, revision, pipeline
    class, device, dtype), least recently used first."""
    with _cache_lock:
        keys = [(model, revision, name, device, dtype)
                for (model, revision, device, dtype), checkpoint in _cache.items() for name in checkpoint.pipelines]
        return {**_stats, "size": cache_size(), "keys": keys}


def _free_memory() -> None:
    import gc

    import torch

    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def _pipeline(model: str, revision: str, mode: str, device: str, dtype) -> tuple[_Checkpoint, Any, bool]:
    """(checkpoint, pipeline for the mode, reused): loaded when the checkpoint is not cached, else
    the cached pipeline or one built over the cached components; reused is True when nothing was
    loaded."""
    class_name = PIPELINE_CLASSES[mode]
    key = (model, revision, device, str(dtype).removeprefix("torch."))
    evicted = False
    with _cache_lock:
        checkpoint = _cache.get(key)
        reused = checkpoint is not None
        if checkpoint is None:
            checkpoint = _load(model, revision, device, dtype)
            _stats["loads"] += 1
            _cache[key] = checkpoint  # kept even when this mode cannot use it
            while len(_cache) > cache_size():
                _cache.popitem(last=False)
                evicted = True
        _cache.move_to_end(key)
        _check_checkpoint(model, mode, checkpoint)
        pipeline = checkpoint.pipelines.get(class_name)
        if pipeline is None:
            pipeline = _derive(checkpoint, class_name)
            checkpoint.pipelines[class_name] = pipeline
            _stats["derived"] += 1
        elif reused:
            _stats["hits"] += 1
    if evicted:
        _free_memory()
    return checkpoint, pipeline, reused


def _check_checkpoint(model: str, mode: str, checkpoint: _Checkpoint) -> None:
    if checkpoint.unet_in_channels == 9 and mode != INPAINT:
        raise DiffusionError(f"{model!r} is an inpainting checkpoint (9-channel UNet): it can only inpaint (give an "
                             f"init image and a mask). Use a text-to-image checkpoint for {mode}.")
    if checkpoint.unet_in_channels not in (4, 9):
        raise DiffusionError(f"{model!r} has a {checkpoint.unet_in_channels}-channel UNet input; Stable Diffusion "
                             f"checkpoints have 4 (text-to-image) or 9 (inpainting).")


def _derive(checkpoint: _Checkpoint, class_name: str):
    """A pipeline of `class_name` over the checkpoint's components (the same modules: nothing is
    copied or cast), with no safety checker."""
    import inspect

    import diffusers

    cls = getattr(diffusers, class_name)
    source = next(iter(checkpoint.pipelines.values()))
    accepted = inspect.signature(cls.__init__).parameters
    components = {name: module for name, module in source.components.items() if name in accepted}
    components.update(scheduler=_scheduler("", checkpoint.scheduler_config), safety_checker=None,
                      feature_extractor=None, requires_safety_checker=False)
    pipeline = cls(**components)
    pipeline.set_progress_bar_config(disable=True)
    return pipeline


def _load(model: str, revision: str, device: str, dtype) -> _Checkpoint:
    """Load a Stable Diffusion checkpoint onto a device."""
    from diffusers import DiffusionPipeline
    from diffusers.utils import logging as diffusers_logging
    from transformers.utils import logging as transformers_logging

    at = f" at revision {revision!r}" if revision else ""
    offline = hub_offline()
    bars = diffusers_logging.is_progress_bar_enabled(), transformers_logging.is_progress_bar_enabled()
    diffusers_logging.disable_progress_bar()
    transformers_logging.disable_progress_bar()
    try:
        pipeline = DiffusionPipeline.from_pretrained(
            model, revision=revision or None, dtype=dtype, safety_checker=None, requires_safety_checker=False,
            local_files_only=offline,
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        if local_path(model) is not None:
            reason = f"the folder is not a loadable diffusers pipeline ({type(exc).__name__}: {_first_line(exc)})"
        elif offline:
            reason = ("HF_HUB_OFFLINE=1 and it is not in the local Hugging Face cache (download it first, or pass a "
                      "local folder)")
        else:
            reason = f"not found on the hub or not accessible ({type(exc).__name__}: {_first_line(exc)})"
        raise DiffusionError(f"Cannot load {model!r}{at}: {reason}") from exc
    finally:
        if bars[0]:
            diffusers_logging.enable_progress_bar()
        if bars[1]:
            transformers_logging.enable_progress_bar()
    components = getattr(pipeline, "components", {})
    missing = [name for name in SD_COMPONENTS if components.get(name) is None]
    if missing:
        raise DiffusionError(f"{model!r} is a {type(pipeline).__name__}, not a Stable Diffusion checkpoint "
                             f"(it lacks {', '.join(missing)}).")
    pipeline = pipeline.to(device)
    if device.startswith("cuda"):
        pipeline.enable_attention_slicing()
    pipeline.set_progress_bar_config(disable=True)
    return _Checkpoint(
        revision=_resolved_revision(model, revision),
        unet_in_channels=int(pipeline.unet.config.in_channels),
        scheduler_config=pipeline.scheduler.config,
        pipelines={type(pipeline).__name__: pipeline},
    )


def _resolved_revision(model: str, revision: str) -> str:
    """The commit a model resolved to when it can be known (a HF-cache snapshot, a git checkout),
    else the revision as asked."""
    folder = local_path(model)
    if folder is not None:
        return local_commit_hash(folder) or revision
    try:
        from huggingface_hub import try_to_load_from_cache

        cached = try_to_load_from_cache(model, "model_index.json", revision=revision or None)
    except Exception:  # noqa: BLE001 - the revision is only recorded, never needed to run
        cached = None
    if isinstance(cached, str):
        snapshot = Path(cached).parent
        if snapshot.parent.name == "snapshots":
            return snapshot.name
    return revision


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else ""


# --- Generating -------------------------------------------------------------------------------

def generate(request: ImageRequest, device: str | None = None) -> GeneratedImage:
    """Run one request (see the module docstring); raises DiffusionError for a bad request."""
    import diffusers
    import torch

    started = time.monotonic()
    mode = validate(request)
    device = resolve_device(device)
    dtype = _dtype_for(device)
    model = request.model.strip()
    checkpoint, pipeline, reused = _pipeline(model, request.revision or "", mode, device, dtype)

    kwargs: dict[str, Any] = {
        "prompt": request.prompt,
        "negative_prompt": request.negative_prompt or None,
        "num_inference_steps": request.steps,
        "guidance_scale": float(request.guidance),
    }
    parent = mask = None
    if mode == TEXT2IMAGE:
        kwargs.update(width=request.width, height=request.height)
    else:
        parent = request.init_image.convert("RGB")
        kwargs.update(image=parent, strength=float(request.strength))
    if mode == INPAINT:
        mask = binary_mask(request.mask)
        kwargs.update(mask_image=mask, width=request.width, height=request.height)

    with checkpoint.lock:
        scheduler = _scheduler(request.scheduler, checkpoint.scheduler_config)
        pipeline.scheduler = scheduler
        generator = torch.Generator(device="cpu" if device.startswith("mps") else device).manual_seed(request.seed)
        with torch.inference_mode():
            image = pipeline(generator=generator, output_type="pil", **kwargs).images[0]
    if image.size != (request.width, request.height):  # pragma: no cover - the pipelines keep the asked size
        image = image.resize((request.width, request.height))
    image = image.convert("RGB")
    if mode == INPAINT:
        from PIL import Image

        image = Image.composite(image, parent, mask)  # the parent exactly wherever the mask is black

    seconds = time.monotonic() - started
    provenance = {
        "model": model,
        "revision": checkpoint.revision,
        "prompt": request.prompt,
        "negative_prompt": request.negative_prompt,
        "seed": request.seed,
        "scheduler": type(scheduler).__name__,
        "steps": request.steps,
        "guidance": float(request.guidance),
        "strength": None if mode == TEXT2IMAGE else float(request.strength),
        "width": request.width,
        "height": request.height,
        "mode": mode,
        "parent_sha256": image_sha256(request.init_image),
        "mask_sha256": image_sha256(request.mask),
        "device": device,
        "dtype": str(dtype).removeprefix("torch."),
        "diffusers_version": diffusers.__version__,
        "seconds": round(seconds, 3),
    }
    return GeneratedImage(image=image, provenance=provenance, seconds=seconds, reused_pipeline=reused)


def _scheduler(name: str, config):
    """A fresh scheduler for one call: the named class, or the checkpoint's own, from its config."""
    import diffusers

    class_name = name or config.get("_class_name") or "PNDMScheduler"
    cls = getattr(diffusers, class_name, None)
    if cls is None:
        raise DiffusionError(f"The checkpoint's scheduler {class_name!r} is not in this diffusers version; "
                             f"name one of {', '.join(schedulers())}.")
    return cls.from_config(config)
