"""Image generation (`generation.diffusion` and `manage.py generate_image`) on the tiny Stable
Diffusion pipelines: seeded and reproducible, image-to-image and inpainting (the parent kept exactly
outside the mask), the per-process pipeline cache, provenance, and clear refusals of bad requests."""

import hashlib
import json
import threading
from io import StringIO

import numpy as np
import pytest
import torch
from diffusers import DiffusionPipeline
from django.core.management import CommandError, call_command
from PIL import Image

from generation import diffusion
from generation.diffusion import (
    PHOTOREALISTIC_SUFFIX,
    DiffusionError,
    ImageRequest,
    cache_info,
    clear_pipeline_cache,
    generate,
    image_sha256,
    mode_of,
    png_bytes,
    schedulers,
)

SIZE = 64
PROVENANCE_KEYS = {
    "model", "revision", "prompt", "negative_prompt", "seed", "scheduler", "steps", "guidance", "strength", "width",
    "height", "mode", "parent_sha256", "mask_sha256", "device", "dtype", "diffusers_version", "seconds",
}


def request(model, seed=1, **overrides) -> ImageRequest:
    values = {"model": model, "prompt": "a woman holds a red cup" + PHOTOREALISTIC_SUFFIX, "seed": seed, "steps": 2,
              "width": SIZE, "height": SIZE}
    values.update(overrides)
    return ImageRequest(**values)


def pixels(image) -> np.ndarray:
    return np.asarray(image.convert("RGB"), dtype=np.int16)


def square_mask(value=255, box=(16, 16, 48, 40), background=0) -> Image.Image:
    mask = Image.new("L", (SIZE, SIZE), background)
    mask.paste(value, box)
    return mask


@pytest.fixture(scope="module", autouse=True)
def _one_torch_thread():
    """The tiny pipelines run fastest on one thread (several threads only wait for each other on a busy machine)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture
def fresh_cache():
    clear_pipeline_cache()
    yield
    clear_pipeline_cache()


@pytest.fixture
def count_loads(monkeypatch):
    """How many times a pipeline was loaded from disk."""
    calls = []
    original = DiffusionPipeline.from_pretrained.__func__

    def spy(cls, *args, **kwargs):
        calls.append(args[0] if args else kwargs.get("pretrained_model_name_or_path"))
        return original(cls, *args, **kwargs)

    monkeypatch.setattr(DiffusionPipeline, "from_pretrained", classmethod(spy))
    return calls


@pytest.fixture(scope="module")
def parent(tiny_sd) -> Image.Image:
    return generate(request(tiny_sd.text2image, seed=11)).image


def test_same_seed_gives_identical_pixels_and_another_seed_differs(tiny_sd):
    first = generate(request(tiny_sd.text2image, seed=7))
    again = generate(request(tiny_sd.text2image, seed=7))
    other = generate(request(tiny_sd.text2image, seed=8))
    assert first.image.size == (SIZE, SIZE) and first.image.mode == "RGB"
    assert np.array_equal(pixels(first.image), pixels(again.image))
    assert png_bytes(first.image) == png_bytes(again.image)
    assert np.abs(pixels(first.image) - pixels(other.image)).mean() > 1


def test_size_and_prompt_change_the_image(tiny_sd):
    base = generate(request(tiny_sd.text2image))
    wide = generate(request(tiny_sd.text2image, width=96, height=48))
    assert wide.image.size == (96, 48)
    other_prompt = generate(request(tiny_sd.text2image, prompt="two birds on the open door"))
    assert not np.array_equal(pixels(base.image), pixels(other_prompt.image))
    negative = generate(request(tiny_sd.text2image, negative_prompt="blurry"))
    assert not np.array_equal(pixels(base.image), pixels(negative.image))


def test_image_to_image_changes_its_input_and_is_seeded(tiny_sd, parent, fresh_cache, count_loads):
    result = generate(request(tiny_sd.text2image, init_image=parent, strength=0.8))
    again = generate(request(tiny_sd.text2image, init_image=parent, strength=0.8))
    assert result.provenance["mode"] == "image2image"
    assert result.provenance["strength"] == 0.8
    assert result.provenance["parent_sha256"] == image_sha256(parent)
    assert result.provenance["mask_sha256"] is None
    assert np.abs(pixels(result.image) - pixels(parent)).mean() > 1
    assert np.array_equal(pixels(result.image), pixels(again.image))
    # Built over the text-to-image checkpoint's components: one load for both pipelines.
    generate(request(tiny_sd.text2image))
    assert count_loads == [tiny_sd.text2image]
    classes = {key[2] for key in cache_info()["keys"]}
    assert {"StableDiffusionPipeline", "StableDiffusionImg2ImgPipeline"} <= classes


def test_lower_strength_stays_closer_to_the_parent(tiny_sd, parent):
    near = generate(request(tiny_sd.text2image, init_image=parent, strength=0.3, steps=4))
    far = generate(request(tiny_sd.text2image, init_image=parent, strength=1.0, steps=4))
    assert np.abs(pixels(near.image) - pixels(parent)).mean() < np.abs(pixels(far.image) - pixels(parent)).mean()


@pytest.mark.parametrize("checkpoint", ["inpaint", "text2image"])
def test_inpainting_keeps_every_pixel_outside_the_mask(tiny_sd, parent, checkpoint):
    # Grey levels: 200 counts as white (regenerate), 100 as black (keep).
    mask = square_mask(200)
    mask.paste(100, (0, 48, SIZE, SIZE))
    result = generate(request(tiny_sd[checkpoint], init_image=parent, mask=mask, prompt="a blue cup"))
    regenerate = np.asarray(mask) > 127
    out, before = pixels(result.image), pixels(parent)
    assert result.image.size == parent.size
    assert np.array_equal(out[~regenerate], before[~regenerate])
    assert np.abs(out[regenerate] - before[regenerate]).mean() > 1
    assert result.provenance["mode"] == "inpaint"
    assert result.provenance["mask_sha256"] == hashlib.sha256(png_bytes(mask)).hexdigest()
    assert result.provenance["parent_sha256"] == image_sha256(parent)
    again = generate(request(tiny_sd[checkpoint], init_image=parent, mask=mask, prompt="a blue cup"))
    assert np.array_equal(out, pixels(again.image))


def test_an_inpainting_checkpoint_only_inpaints(tiny_sd, parent):
    with pytest.raises(DiffusionError, match="inpainting checkpoint"):
        generate(request(tiny_sd.inpaint))
    with pytest.raises(DiffusionError, match="inpainting checkpoint"):
        generate(request(tiny_sd.inpaint, init_image=parent))


def test_the_second_call_reuses_the_cached_pipeline(tiny_sd, fresh_cache, count_loads):
    first = generate(request(tiny_sd.text2image))
    second = generate(request(tiny_sd.text2image, seed=2))
    assert (first.reused_pipeline, second.reused_pipeline) == (False, True)
    assert count_loads == [tiny_sd.text2image]
    info = cache_info()
    assert info["loads"] == 1 and info["hits"] == 1
    assert info["keys"] == [(tiny_sd.text2image, "", "StableDiffusionPipeline", "cpu", "float32")]
    clear_pipeline_cache()
    assert generate(request(tiny_sd.text2image)).reused_pipeline is False
    assert len(count_loads) == 2


def test_the_cache_keeps_the_most_recent_checkpoints(tiny_sd, parent, fresh_cache, count_loads, settings):
    settings.DIFFUSION_PIPELINE_CACHE_SIZE = 1
    mask = square_mask()
    assert generate(request(tiny_sd.text2image)).reused_pipeline is False
    assert generate(request(tiny_sd.inpaint, init_image=parent, mask=mask)).reused_pipeline is False
    assert generate(request(tiny_sd.text2image)).reused_pipeline is False  # evicted by the inpainting one
    assert count_loads == [tiny_sd.text2image, tiny_sd.inpaint, tiny_sd.text2image]
    settings.DIFFUSION_PIPELINE_CACHE_SIZE = 2
    assert generate(request(tiny_sd.inpaint, init_image=parent, mask=mask)).reused_pipeline is False
    assert generate(request(tiny_sd.text2image)).reused_pipeline is True
    assert generate(request(tiny_sd.inpaint, init_image=parent, mask=mask)).reused_pipeline is True
    assert len(count_loads) == 4


def test_threads_share_the_pipeline_without_mixing_runs(tiny_sd, fresh_cache, count_loads):
    expected = {seed: pixels(generate(request(tiny_sd.text2image, seed=seed)).image) for seed in (1, 2)}
    results, errors = {}, []

    def run(seed, scheduler):
        try:
            results[(seed, scheduler)] = generate(request(tiny_sd.text2image, seed=seed, scheduler=scheduler))
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(seed, scheduler))
               for seed in (1, 2) for scheduler in ("", "DDIMScheduler")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert count_loads == [tiny_sd.text2image]
    for seed in (1, 2):
        assert np.array_equal(pixels(results[(seed, "")].image), expected[seed])
        assert results[(seed, "DDIMScheduler")].provenance["scheduler"] == "DDIMScheduler"


def test_provenance(tiny_sd):
    result = generate(request(tiny_sd.text2image, seed=5, negative_prompt="blurry", guidance=6, steps=3))
    provenance = result.provenance
    assert set(provenance) == PROVENANCE_KEYS
    assert provenance["model"] == tiny_sd.text2image
    assert provenance["prompt"].endswith(", captured with a Nikon D850 and a 24-70mm lens at f/2.8")
    assert (provenance["seed"], provenance["steps"], provenance["guidance"]) == (5, 3, 6.0)
    assert provenance["negative_prompt"] == "blurry"
    assert provenance["scheduler"] == "PNDMScheduler"  # the checkpoint's own
    assert provenance["strength"] is None and provenance["parent_sha256"] is None and provenance["mask_sha256"] is None
    assert (provenance["width"], provenance["height"], provenance["mode"]) == (SIZE, SIZE, "text2image")
    assert (provenance["device"], provenance["dtype"]) == ("cpu", "float32")
    assert provenance["diffusers_version"] == __import__("diffusers").__version__
    assert provenance["revision"] == ""  # a plain local folder: as asked
    assert provenance["seconds"] >= 0 and result.seconds >= provenance["seconds"] - 0.001
    json.dumps(provenance)  # storable as is
    assert generate(request(tiny_sd.text2image, revision="v1")).provenance["revision"] == "v1"


def test_a_named_scheduler_is_used_for_that_call_only(tiny_sd):
    default = generate(request(tiny_sd.text2image, steps=3))
    euler = generate(request(tiny_sd.text2image, steps=3, scheduler="EulerDiscreteScheduler"))
    assert euler.provenance["scheduler"] == "EulerDiscreteScheduler"
    assert not np.array_equal(pixels(default.image), pixels(euler.image))
    after = generate(request(tiny_sd.text2image, steps=3))
    assert after.provenance["scheduler"] == "PNDMScheduler"
    assert np.array_equal(pixels(default.image), pixels(after.image))


@pytest.mark.parametrize("name", ["DDIMScheduler", "EulerAncestralDiscreteScheduler", "DPMSolverMultistepScheduler",
                                  "LMSDiscreteScheduler", "UniPCMultistepScheduler"])
def test_offered_schedulers_run_every_mode(tiny_sd, parent, name):
    assert name in schedulers()
    generate(request(tiny_sd.text2image, scheduler=name))
    generate(request(tiny_sd.text2image, scheduler=name, init_image=parent))
    result = generate(request(tiny_sd.inpaint, scheduler=name, init_image=parent, mask=square_mask()))
    assert result.provenance["scheduler"] == name


def test_mode_of(parent):
    assert mode_of(ImageRequest(model="m", prompt="p", seed=1)) == "text2image"
    assert mode_of(ImageRequest(model="m", prompt="p", seed=1, init_image=parent)) == "image2image"
    assert mode_of(ImageRequest(model="m", prompt="p", seed=1, init_image=parent, mask=square_mask())) == "inpaint"


BAD_REQUESTS = {
    "no model": ({"model": ""}, "A model is required"),
    "missing folder": ({"model": "/nonexistent/tiny-sd"}, "does not exist"),
    "empty prompt": ({"prompt": "  "}, "A prompt is required"),
    "negative seed": ({"seed": -1}, "seed must be"),
    "seed not a number": ({"seed": "7"}, "seed must be"),
    "zero steps": ({"steps": 0}, "Steps must be"),
    "negative guidance": ({"guidance": -1.0}, "Guidance must be"),
    "width not a multiple of 8": ({"width": 60}, "width must be a multiple of 8"),
    "height too large": ({"height": 4096}, "height must be a multiple of 8"),
    "unknown scheduler": ({"scheduler": "MagicScheduler"}, "Unknown scheduler 'MagicScheduler'"),
    "mask without init image": ({"mask": "MASK"}, "A mask needs an init image"),
    "strength zero": ({"init_image": "PARENT", "strength": 0.0}, "Strength must be"),
    "strength above one": ({"init_image": "PARENT", "strength": 1.5}, "Strength must be"),
    "no denoising step": ({"init_image": "PARENT", "strength": 0.2, "steps": 2}, "no denoising step"),
    "init image of another size": ({"init_image": "PARENT", "width": 128}, "must be the same"),
    "mask of another size": ({"init_image": "PARENT", "mask": "SMALL_MASK"}, "mask is 32x32"),
    "black mask": ({"init_image": "PARENT", "mask": "BLACK_MASK"}, "no white pixel"),
}


@pytest.mark.parametrize("case", list(BAD_REQUESTS))
def test_bad_requests_are_refused_before_loading(tiny_sd, parent, case, count_loads):
    overrides, message = BAD_REQUESTS[case]
    images = {"PARENT": parent, "MASK": square_mask(), "SMALL_MASK": Image.new("L", (32, 32), 255),
              "BLACK_MASK": square_mask(100)}
    overrides = {key: images.get(value, value) if isinstance(value, str) else value for key, value in overrides.items()}
    model = overrides.pop("model", tiny_sd.text2image)
    with pytest.raises(DiffusionError, match=message):
        generate(request(model, **overrides))
    assert count_loads == []


def test_models_that_cannot_be_loaded_are_refused(tmp_path, monkeypatch):
    with pytest.raises(DiffusionError, match="no model_index.json"):
        generate(request(str(tmp_path)))
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "model_index.json").write_text('{"_class_name": "StableDiffusionPipeline", "unet": ["diffusers", '
                                             '"UNet2DConditionModel"]}')
    with pytest.raises(DiffusionError, match="Cannot load"):
        generate(request(str(broken)))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(DiffusionError, match="HF_HUB_OFFLINE=1 and it is not in the local Hugging Face cache"):
        generate(request("nobody-here/no-such-diffusion-model"))


def test_devices(tiny_sd):
    with pytest.raises(DiffusionError, match="Unknown device"):
        generate(request(tiny_sd.text2image), device="quantum")
    if not torch.cuda.is_available():
        with pytest.raises(DiffusionError, match="CUDA is not available"):
            generate(request(tiny_sd.text2image), device="cuda")
    assert diffusion.resolve_device(None) == ("cuda" if torch.cuda.is_available() else "cpu")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_cuda_runs_in_float16_with_attention_slicing(tiny_sd, parent, fresh_cache):
    from diffusers.models.attention_processor import SlicedAttnProcessor

    first = generate(request(tiny_sd.text2image), device="cuda")
    again = generate(request(tiny_sd.text2image), device="cuda")
    assert (first.provenance["device"], first.provenance["dtype"]) == ("cuda", "float16")
    assert np.array_equal(pixels(first.image), pixels(again.image))
    inpainted = generate(request(tiny_sd.inpaint, init_image=parent, mask=square_mask()), device="cuda")
    keep = np.asarray(square_mask()) <= 127
    assert np.array_equal(pixels(inpainted.image)[keep], pixels(parent)[keep])
    for checkpoint in diffusion._cache.values():
        for pipeline in checkpoint.pipelines.values():
            assert pipeline.unet.dtype == torch.float16 and pipeline.vae.dtype == torch.float16
            assert pipeline.text_encoder.dtype == torch.float16
            assert pipeline.unet.device.type == "cuda"
            processors = pipeline.unet.attn_processors.values()
            assert processors and all(isinstance(p, SlicedAttnProcessor) for p in processors)


# --- manage.py generate_image -----------------------------------------------------------------

def run_command(*args) -> str:
    stdout = StringIO()
    call_command("generate_image", *[str(a) for a in args], stdout=stdout)
    return stdout.getvalue()


def test_command_writes_the_png_and_its_provenance(tiny_sd, tiny_sd_registry, tmp_path):
    out = tmp_path / "premise.png"
    text = run_command("--model", tiny_sd.text2image, "--prompt", "a red cup", "--seed", 3, "--steps", 2, "--width",
                       SIZE, "--height", SIZE, "--out", out, "--negative-prompt", "blurry", "--guidance", 5,
                       "--scheduler", "DDIMScheduler")
    assert "text2image" in text and str(out) in text
    record = json.loads((tmp_path / "premise.json").read_text())
    assert set(record) >= PROVENANCE_KEYS
    assert record["image_sha256"] == hashlib.sha256(out.read_bytes()).hexdigest()
    assert (record["prompt"], record["negative_prompt"], record["seed"]) == ("a red cup", "blurry", 3)
    assert (record["steps"], record["scheduler"], record["guidance"]) == (2, "DDIMScheduler", 5.0)
    assert (record["width"], record["height"], record["mode"]) == (64, 64, "text2image")
    expected = generate(request(tiny_sd.text2image, prompt="a red cup", seed=3, negative_prompt="blurry", guidance=5,
                                scheduler="DDIMScheduler"))
    assert np.array_equal(pixels(Image.open(out)), pixels(expected.image))

    # Image-to-image, then inpainting on the premise (size taken from the init image).
    mask_path = tmp_path / "mask.png"
    square_mask().save(mask_path)
    run_command("--model", tiny_sd.text2image, "--prompt", "a blue cup", "--seed", 3, "--steps", 2, "--out",
                tmp_path / "h1.png", "--init-image", out, "--strength", 0.6)
    h1 = json.loads((tmp_path / "h1.json").read_text())
    assert (h1["mode"], h1["strength"], h1["width"]) == ("image2image", 0.6, SIZE)
    assert h1["init_image_file_sha256"] == hashlib.sha256(out.read_bytes()).hexdigest()
    assert h1["parent_sha256"] == image_sha256(Image.open(out))
    run_command("--model", tiny_sd.inpaint, "--prompt", "a blue cup", "--seed", 3, "--steps", 2, "--out",
                tmp_path / "h2.png", "--init-image", out, "--mask", mask_path)
    h2 = json.loads((tmp_path / "h2.json").read_text())
    assert h2["mode"] == "inpaint" and h2["mask_file_sha256"] == hashlib.sha256(mask_path.read_bytes()).hexdigest()
    assert h2["mask_sha256"] == image_sha256(Image.open(mask_path))
    keep = np.asarray(square_mask()) <= 127
    assert np.array_equal(pixels(Image.open(tmp_path / "h2.png"))[keep], pixels(Image.open(out))[keep])


def test_command_rejects_bad_input_and_writes_nothing(tiny_sd, tiny_sd_registry, tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    parent_path, mask_path, text_path = folder / "parent.png", folder / "mask.png", folder / "notes.png"
    Image.new("RGB", (SIZE, SIZE), (90, 120, 200)).save(parent_path)
    Image.new("L", (32, 32), 255).save(mask_path)
    text_path.write_text("not an image")
    out = tmp_path / "out" / "image.png"
    base = ["--model", tiny_sd.text2image, "--prompt", "a cup", "--seed", 1, "--steps", 2, "--width", SIZE,
            "--height", SIZE]
    cases = [
        (["--out", out, "--mask", mask_path], "--mask needs --init-image"),
        (["--out", out, "--width", 70], "multiple of 8"),
        (["--out", tmp_path / "image.jpg"], "must name a .png"),
        (["--out", out, "--scheduler", "Nope"], "Unknown scheduler"),
        (["--out", out, "--init-image", text_path], "not a readable image"),
        (["--out", out, "--init-image", folder / "missing.png"], "is not a file"),
        (["--out", out, "--init-image", parent_path, "--mask", mask_path], "mask is 32x32"),
        (["--out", out, "--init-image", parent_path, "--strength", 0], "Strength must be"),
        (["--out", out, "--seed", -3], "seed must be"),
        (["--out", out, "--model", tmp_path / "missing-model"], "Unknown model"),
        (["--out", out, "--model", tiny_sd.inpaint], "not registered for image generation"),
    ]
    for extra, message in cases:
        with pytest.raises(CommandError, match=message):
            run_command(*base, *extra)
    assert not out.parent.exists() and not (tmp_path / "image.jpg").exists()
    written = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file())
    assert written == ["in/mask.png", "in/notes.png", "in/parent.png"]
