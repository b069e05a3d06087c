import hashlib
import json
import os
import tempfile
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from PIL import Image, UnidentifiedImageError

from generation import model_registry
from generation.diffusion import (
    DiffusionError,
    ImageRequest,
    generate,
    mode_of,
    png_bytes,
    schedulers,
    validate,
)
from generation.registered_models import Use


class Command(BaseCommand):
    help = ("Generate one image with a Stable Diffusion checkpoint (hub id or local diffusers folder): "
            "text-to-image, image-to-image with --init-image, or inpainting with --init-image and --mask "
            "(white = regenerate; every pixel outside the mask stays the init image's). Writes the PNG and, "
            "beside it, FILE.json (for --out FILE.png) with the provenance (model, revision, prompt, seed, "
            "scheduler, steps, guidance, strength, size, checksums of the init image and the mask).")

    def add_arguments(self, parser):
        parser.add_argument("--model", required=True, help="a registered image-generation model (inpainting: an "
                                                           "inpainting one): its name, or the hub id or diffusers "
                                                           "folder its entry holds")
        parser.add_argument("--prompt", required=True)
        parser.add_argument("--seed", type=int, required=True)
        parser.add_argument("--out", type=Path, required=True, help="the PNG to write (FILE.json is written beside it)")
        parser.add_argument("--steps", type=int, default=30)
        parser.add_argument("--width", type=int, help="default: the init image's width, else 512")
        parser.add_argument("--height", type=int, help="default: the init image's height, else 512")
        parser.add_argument("--negative-prompt", default="")
        parser.add_argument("--guidance", type=float, default=7.5)
        parser.add_argument("--init-image", type=Path, help="image-to-image input, or the image to inpaint")
        parser.add_argument("--strength", type=float, default=0.8,
                            help="how far from the init image (0 < strength <= 1)")
        parser.add_argument("--mask", type=Path, help="inpainting mask, the init image's size: white = regenerate")
        parser.add_argument("--scheduler", default="", help=f"one of {', '.join(schedulers())}; "
                                                            f"default: the checkpoint's own")
        parser.add_argument("--revision", default="", help="the registered model's pinned revision (default: it)")
        parser.add_argument("--device", default=None, help="cpu, cuda or cuda:N (default: cuda when available)")

    def handle(self, *args, **options):
        out: Path = options["out"]
        if out.suffix.lower() != ".png":
            raise CommandError(f"--out must name a .png file, got {str(out)!r}.")
        if out.exists() and not out.is_file():
            raise CommandError(f"{out} exists and is not a file.")
        if out.parent.exists() and not out.parent.is_dir():
            raise CommandError(f"{out.parent} is not a folder.")
        if options["mask"] is not None and options["init_image"] is None:
            raise CommandError("--mask needs --init-image: inpainting edits the masked region of the init image.")
        init_image, init_bytes = _read_image(options["init_image"], "--init-image")
        mask, mask_bytes = _read_image(options["mask"], "--mask")
        default_size = init_image.size if init_image is not None else (512, 512)
        try:
            chosen = model_registry.choose(options["model"], revision=options["revision"],
                                           use=Use.INPAINTING if mask is not None else Use.IMAGE_GENERATION)
        except model_registry.ModelRefused as exc:
            raise CommandError(str(exc)) from None
        request = ImageRequest(
            model=chosen.model_id, prompt=options["prompt"], seed=options["seed"], revision=chosen.revision,
            negative_prompt=options["negative_prompt"], steps=options["steps"], guidance=options["guidance"],
            width=options["width"] if options["width"] is not None else default_size[0],
            height=options["height"] if options["height"] is not None else default_size[1],
            scheduler=options["scheduler"], init_image=init_image, strength=options["strength"], mask=mask,
        )
        try:
            validate(request)
            result = generate(request, device=options["device"])
        except DiffusionError as exc:
            raise CommandError(str(exc)) from exc

        data = png_bytes(result.image)
        record = {
            **result.provenance,
            "image": out.name,
            "image_sha256": hashlib.sha256(data).hexdigest(),
            "init_image": str(options["init_image"]) if options["init_image"] else None,
            "init_image_file_sha256": hashlib.sha256(init_bytes).hexdigest() if init_bytes is not None else None,
            "mask": str(options["mask"]) if options["mask"] else None,
            "mask_file_sha256": hashlib.sha256(mask_bytes).hexdigest() if mask_bytes is not None else None,
        }
        sidecar = out.with_suffix(".json")
        out.parent.mkdir(parents=True, exist_ok=True)
        _write_atomic(out, data)
        _write_atomic(sidecar, (json.dumps(record, indent=2, ensure_ascii=False) + "\n").encode())
        self.stdout.write(f"{mode_of(request)} {result.image.size[0]}x{result.image.size[1]} "
                          f"seed {request.seed} in {result.seconds:.1f} s -> {out}")
        self.stdout.write(self.style.SUCCESS(f"Provenance: {sidecar}"))


def _read_image(path: Path | None, option: str):
    """(image, file bytes) of an image file, or (None, None) without one; CommandError when unreadable."""
    if path is None:
        return None, None
    if not path.is_file():
        raise CommandError(f"{option}: {path} is not a file.")
    data = path.read_bytes()
    try:
        with Image.open(path) as image:
            image.load()
            return image.copy(), data
    except (UnidentifiedImageError, OSError, ValueError, Image.DecompressionBombError) as exc:
        raise CommandError(f"{option}: {path} is not a readable image ({exc}).") from exc


def _write_atomic(path: Path, data: bytes) -> None:
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".partial")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
