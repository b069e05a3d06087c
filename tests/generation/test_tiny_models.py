"""The tiny models: `make_tiny_models` writes folders that load offline with the Auto classes (and the
Stable Diffusion ones with diffusers' `from_pretrained`), exactly as hub ids do, with real processors,
tokenizers and chat templates; builds are reproducible."""

import json
import os
import time
from io import StringIO

import numpy as np
import pytest
from django.core.management import call_command
from PIL import Image

from generation.tiny_models import (
    DIFFUSERS_MODEL_NAMES,
    MARKER,
    NLI_LABELS,
    TINY_MODEL_NAMES,
    TRANSFORMERS_MODEL_NAMES,
    build_tiny_models,
)

# name -> (Auto model class, model_type, loads with AutoProcessor)
EXPECTED = {
    "qwen2-vl": ("AutoModelForImageTextToText", "qwen2_5_vl", True),
    "llava-onevision": ("AutoModelForImageTextToText", "llava_onevision", True),
    "llava": ("AutoModelForImageTextToText", "llava", True),
    "causal-lm": ("AutoModelForCausalLM", "qwen2", False),
    "nli": ("AutoModelForSequenceClassification", "bert", False),
    "clip": ("AutoModel", "clip", True),
}
TEXT = "How many cups are on the table? Quante tazze ci sono sul tavolo? È già l'una."


def test_hub_is_offline():
    assert os.environ["HF_HUB_OFFLINE"] == "1"


def test_command_builds_the_models_and_keeps_current_ones(tmp_path):
    out = tmp_path / "models"
    stdout = StringIO()
    call_command("make_tiny_models", str(out), "--only", "nli", "causal-lm", stdout=stdout)
    text = stdout.getvalue()
    assert "nli" in text and "causal-lm" in text and "Done" in text
    assert sorted(p.name for p in out.iterdir() if not p.name.startswith(".")) == ["causal-lm", "nli"]
    marker = json.loads((out / "nli" / MARKER).read_text())
    assert marker["name"] == "nli" and "model.safetensors" in marker["files"]
    weights = out / "nli" / "model.safetensors"
    stamp = weights.stat().st_mtime_ns

    call_command("make_tiny_models", str(out), "--only", "nli", stdout=StringIO())  # up to date: kept
    assert weights.stat().st_mtime_ns == stamp
    call_command("make_tiny_models", str(out), "--only", "nli", "--force", stdout=StringIO())
    assert weights.stat().st_mtime_ns != stamp
    assert not [p for p in out.iterdir() if p.name.endswith(".partial")]


def test_unknown_name_is_refused(tmp_path):
    with pytest.raises(ValueError, match="Unknown tiny model"):
        build_tiny_models(tmp_path, ["gpt-9"])


def test_command_writes_every_model_including_the_stable_diffusion_pipelines(tmp_path):
    out = tmp_path / "all"
    call_command("make_tiny_models", str(out), stdout=StringIO())
    assert sorted(p.name for p in out.iterdir() if not p.name.startswith(".")) == sorted(TINY_MODEL_NAMES)
    assert {"sd-text2image", "sd-inpaint"} <= set(TINY_MODEL_NAMES)
    for name in DIFFUSERS_MODEL_NAMES:
        assert (out / name / "model_index.json").is_file()
        files = json.loads((out / name / MARKER).read_text())["files"]
        assert "unet/diffusion_pytorch_model.safetensors" in files and "tokenizer/tokenizer.json" in files


@pytest.mark.parametrize(("name", "pipeline_class", "unet_channels"), [
    ("sd-text2image", "StableDiffusionPipeline", 4),
    ("sd-inpaint", "StableDiffusionInpaintPipeline", 9),
])
def test_stable_diffusion_folders_load_with_diffusers(tiny_models_dir, name, pipeline_class, unet_channels):
    import torch
    from diffusers import DiffusionPipeline

    pipeline = DiffusionPipeline.from_pretrained(tiny_models_dir / name, local_files_only=True)
    assert type(pipeline).__name__ == pipeline_class
    assert pipeline.unet.config.in_channels == unet_channels
    assert pipeline.safety_checker is None and pipeline.feature_extractor is None
    assert pipeline.vae_scale_factor == 8  # as in Stable Diffusion
    assert type(pipeline.scheduler).__name__ == "PNDMScheduler"
    for module in (pipeline.unet, pipeline.vae, pipeline.text_encoder):
        assert sum(p.numel() for p in module.parameters()) < 200_000  # tiny
    ids = pipeline.tokenizer(TEXT)["input_ids"]
    assert ids[0] == pipeline.tokenizer.bos_token_id and ids[-1] == pipeline.tokenizer.eos_token_id
    pipeline.set_progress_bar_config(disable=True)
    kwargs = {}
    if unet_channels == 9:
        kwargs = {"image": Image.new("RGB", (32, 32), (200, 30, 30)), "mask_image": Image.new("L", (32, 32), 255)}
    image = pipeline("a red cup", num_inference_steps=1, width=32, height=32,
                     generator=torch.Generator().manual_seed(0), **kwargs).images[0]
    assert image.size == (32, 32)


@pytest.mark.parametrize("name", TRANSFORMERS_MODEL_NAMES)
def test_folder_loads_with_auto_classes(tiny_models_dir, name):
    import transformers
    from transformers import AutoConfig, AutoProcessor, AutoTokenizer

    folder = tiny_models_dir / name
    auto_class, model_type, has_processor = EXPECTED[name]
    config = AutoConfig.from_pretrained(folder)
    assert config.model_type == model_type
    model = getattr(transformers, auto_class).from_pretrained(folder)
    assert sum(p.numel() for p in model.parameters()) < 500_000  # tiny
    tokenizer = AutoTokenizer.from_pretrained(folder)
    ids = tokenizer(TEXT, add_special_tokens=False)["input_ids"]
    decoded = tokenizer.decode(ids)
    if name == "nli":  # uncased, accents stripped
        assert decoded.startswith("how many cups are on the table?")
    elif name == "clip":  # lower-cased, punctuation split off
        assert decoded.startswith("how many cups are on the table ?")
    else:
        assert decoded == TEXT
        assert tokenizer.unk_token_id not in ids or tokenizer.unk_token_id is None
    if has_processor:
        processor = AutoProcessor.from_pretrained(folder)
        assert type(processor.tokenizer) is type(tokenizer)
    assert (folder / MARKER).is_file()


@pytest.mark.parametrize(("name", "image_text", "video_text"), [
    ("qwen2-vl", "<|vision_start|><|image_pad|><|vision_end|>", "<|vision_start|><|video_pad|><|vision_end|>"),
    ("llava-onevision", "<image>", "<video>"),
    ("llava", "<image>\n", None),
])
def test_vlm_processor_chat_template_and_special_tokens(tiny_models_dir, name, image_text, video_text):
    from transformers import AutoProcessor

    processor = AutoProcessor.from_pretrained(tiny_models_dir / name)
    content = [{"type": "image"}, {"type": "text", "text": "What is shown?"}]
    if video_text:
        content.insert(1, {"type": "video"})
    prompt = processor.apply_chat_template([{"role": "user", "content": content}], add_generation_prompt=True)
    assert image_text in prompt and "What is shown?" in prompt
    assert prompt.rstrip().endswith(("assistant", "ASSISTANT:"))
    if video_text:
        assert video_text in prompt
        assert processor.video_processor is not None
    else:
        assert getattr(processor, "video_processor", None) is None  # LLaVA 1.5: images only
    tokenizer = processor.tokenizer
    for token in (processor.image_token, getattr(processor, "video_token", None)):
        if token:
            assert len(tokenizer(token, add_special_tokens=False)["input_ids"]) == 1
    image = Image.fromarray(np.full((40, 56, 3), 128, dtype=np.uint8))
    inputs = processor(text=[prompt], images=[image], videos=[[image] * 4] if video_text else None,
                       return_tensors="pt")
    image_id = tokenizer.convert_tokens_to_ids(processor.image_token)
    assert int((inputs["input_ids"] == image_id).sum()) > 1  # one placeholder expanded to the image's tokens


def test_generation_defaults_are_short(tiny_models_dir):
    from transformers import GenerationConfig

    for name in ("qwen2-vl", "llava-onevision", "llava", "causal-lm"):
        config = GenerationConfig.from_pretrained(tiny_models_dir / name)
        assert config.max_new_tokens <= 16 and config.do_sample is False
        assert config.eos_token_id is not None and config.pad_token_id is not None


def test_causal_lm_has_a_chat_template(tiny_models_dir):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_models_dir / "causal-lm")
    prompt = tokenizer.apply_chat_template([{"role": "user", "content": "Ciao"}], add_generation_prompt=True,
                                           tokenize=False)
    assert prompt.endswith("<|im_start|>user\nCiao<|im_end|>\n<|im_start|>assistant\n")


def test_nli_labels(tiny_models_dir):
    from transformers import AutoConfig

    config = AutoConfig.from_pretrained(tiny_models_dir / "nli")
    assert {int(k): v for k, v in config.id2label.items()} == NLI_LABELS
    assert sorted(config.id2label.values()) == ["contradiction", "entailment", "neutral"]


def test_builds_are_reproducible_and_fast(tmp_path, tiny_models_dir):
    started = time.monotonic()
    build_tiny_models(tmp_path)
    elapsed = time.monotonic() - started
    assert elapsed < 60
    for name in TINY_MODEL_NAMES:
        ours = json.loads((tmp_path / name / MARKER).read_text())["files"]
        theirs = json.loads((tiny_models_dir / name / MARKER).read_text())["files"]
        assert ours == theirs, name
        for file in ours:
            assert (tmp_path / name / file).read_bytes() == (tiny_models_dir / name / file).read_bytes(), file
