"""The transformers backends (VLM, causal LM, NLI, CLIP) on the tiny local models, on CPU, offline.

The models are random, so nothing here checks what they say: only that the machinery around
them (chat templates, native video vs frames as images, left-padded batching, sampling, OOM
halving, scoring, loading errors) does what it promises.
"""

import math
import os
import time

import numpy as np
import pytest
import torch
from PIL import Image

from generation.backends import _hf
from generation.backends.base import (
    BackendError,
    ChatRequest,
    ChatResult,
    GenerationParams,
    ImagePart,
    Message,
    TextPart,
    VideoPart,
)
from generation.backends.registry import load_backend
from generation.backends.transformers_vlm import TransformersVLM, video_metadata

SHORT = 5  # max_new_tokens in these tests


def image(seed: int, size=(56, 40)) -> Image.Image:
    rng = np.random.default_rng(seed)
    return Image.fromarray(rng.integers(0, 256, (size[1], size[0], 3), dtype=np.uint8))


FRAMES = tuple(image(i, (64, 48)) for i in range(6))
VIDEO = VideoPart(frames=FRAMES, fingerprint="clip-1", frame_indices=(0, 10, 20, 30, 40, 50), fps=25.0)


def ask(*parts, system: str | None = None, **params) -> ChatRequest:
    params.setdefault("max_new_tokens", SHORT)
    messages = [Message("system", (TextPart(system),))] if system else []
    messages.append(Message("user", tuple(TextPart(p) if isinstance(p, str) else p for p in parts)))
    return ChatRequest(messages=messages, params=GenerationParams(**params))


def combined(frames, columns: int = 3) -> Image.Image:
    """The frames tiled into one image (a contact sheet)."""
    width, height = frames[0].size
    rows = math.ceil(len(frames) / columns)
    sheet = Image.new("RGB", (width * columns, height * rows))
    for i, frame in enumerate(frames):
        sheet.paste(frame, ((i % columns) * width, (i // columns) * height))
    return sheet


def assert_ok(result: ChatResult, n: int = 1):
    assert result.error == "", result.error
    assert len(result.texts) == n and all(t.strip() for t in result.texts), result.texts
    assert result.prompt_tokens > 0 and 0 < result.completion_tokens <= n * SHORT
    assert result.latency_s > 0


@pytest.fixture(scope="module")
def qwen(tiny_models_dir):
    return load_backend("transformers", str(tiny_models_dir / "qwen2-vl"), device="cpu", batch_size=4)


@pytest.fixture(scope="module")
def onevision(tiny_models_dir):
    return load_backend("transformers", str(tiny_models_dir / "llava-onevision"), device="cpu")


@pytest.fixture(scope="module")
def llava(tiny_models_dir):
    return load_backend("transformers", str(tiny_models_dir / "llava"), device="cpu")


@pytest.fixture(scope="module")
def lm(tiny_models_dir):
    return load_backend("causal_lm", str(tiny_models_dir / "causal-lm"), device="cpu", batch_size=4)


# --- Loading --------------------------------------------------------------------------------------

def test_loading_records_model_revision_device_and_dtype(qwen, lm, tiny_models_dir):
    assert isinstance(qwen, TransformersVLM)
    assert (qwen.name, qwen.model_id, qwen.revision) == ("transformers", str(tiny_models_dir / "qwen2-vl"), "local")
    assert (lm.name, lm.revision) == ("causal_lm", "local")
    assert qwen.device == lm.device == "cpu"
    assert qwen.model.device.type == lm.model.device.type == "cpu"
    assert qwen.model.dtype == lm.model.dtype == torch.float32
    assert qwen.tokenizer.padding_side == lm.tokenizer.padding_side == "left"


def test_options_pass_through(tiny_models_dir):
    backend = load_backend("causal_lm", str(tiny_models_dir / "causal-lm"), revision="v1.2", device="cpu",
                           dtype="bfloat16", attn_implementation="eager", batch_size=2)
    assert backend.revision == "v1.2"  # a given revision is recorded as is
    assert backend.model.device.type == "cpu"
    assert backend.model.dtype == torch.float32  # half precision only on a GPU
    assert backend.model.config._attn_implementation == "eager"
    assert_ok(backend.generate([ask("Hello")])[0])


@pytest.mark.parametrize("name", ["transformers", "causal_lm", "nli", "clip"])
def test_unknown_hub_id_fails_fast_offline(name, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    started = time.monotonic()
    with pytest.raises(BackendError) as caught:
        load_backend(name, "no-such-org/no-such-model-xyz", revision="abc123")
    assert time.monotonic() - started < 5
    message = str(caught.value)
    assert "no-such-org/no-such-model-xyz" in message and "HF_HUB_OFFLINE=1" in message
    assert "'abc123'" in message and "cache" in message


def test_missing_local_folder_is_a_clear_error(tmp_path):
    with pytest.raises(BackendError, match="does not exist"):
        load_backend("transformers", str(tmp_path / "nowhere"))
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(BackendError, match="no loadable config.json"):
        load_backend("causal_lm", str(empty))


def test_revision_of_local_folders(tmp_path):
    plain = tmp_path / "plain"
    plain.mkdir()
    assert _hf.resolve_revision(str(plain)) == "local"
    assert _hf.resolve_revision(str(plain), "given") == "given"
    commit = "0123456789abcdef0123456789abcdef01234567"
    snapshot = tmp_path / "models--org--name" / "snapshots" / commit
    snapshot.mkdir(parents=True)
    assert _hf.resolve_revision(str(snapshot)) == commit
    clone = tmp_path / "clone"
    (clone / ".git" / "refs" / "heads").mkdir(parents=True)
    (clone / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (clone / ".git" / "refs" / "heads" / "main").write_text(commit + "\n")
    assert _hf.resolve_revision(str(clone)) == commit
    (clone / ".git" / "refs" / "heads" / "main").unlink()
    (clone / ".git" / "packed-refs").write_text(f"# pack-refs\n{commit} refs/heads/main\n")
    assert _hf.resolve_revision(str(clone)) == commit


def test_device_and_dtype_resolution():
    assert _hf.resolve_device(None) == ("cuda" if torch.cuda.is_available() else "cpu")
    assert _hf.resolve_device("cpu") == "cpu"
    assert _hf.resolve_dtype("auto", "cpu") == torch.float32
    assert _hf.resolve_dtype("fp16", "cpu") == torch.float32
    assert _hf.resolve_dtype("float32", "cpu") == torch.float32
    with pytest.raises(BackendError, match="Unknown dtype"):
        _hf.resolve_dtype("int3", "cpu")
    assert _hf.device_map_for("auto") == "auto" and _hf.device_map_for("cpu", {"": 0}) == {"": 0}


# --- VLMs: video, images, text --------------------------------------------------------------------

def test_video_metadata_gives_the_rate_of_the_frames_passed():
    meta = video_metadata(VIDEO, list(FRAMES))
    assert meta["total_num_frames"] == 6 and meta["frames_indices"] == list(range(6))
    assert meta["fps"] == pytest.approx(2.5)  # 6 frames 10 apart at 25 fps
    assert (meta["width"], meta["height"]) == (64, 48)
    plain = VideoPart(frames=FRAMES, fingerprint="x", fps=4.0)
    assert video_metadata(plain, list(FRAMES))["fps"] == 4.0


def test_qwen_video_as_native_video_and_as_separate_images(qwen, tiny_models_dir):
    assert qwen.native_video and qwen.has_video_processor
    request = ask(VIDEO, "What happens in the video?")
    prepared = qwen._prepare(0, request)
    assert prepared.prompt.count("<|video_pad|>") == 1 and "<|image_pad|>" not in prepared.prompt
    inputs = qwen._encode([prepared])
    assert "pixel_values_videos" in inputs and "pixel_values" not in inputs
    assert inputs["second_per_grid_ts"].tolist() == pytest.approx([2 / 2.5])  # temporal patch 2 at 2.5 fps

    as_images = TransformersVLM(str(tiny_models_dir / "qwen2-vl"), device="cpu", native_video=False)
    assert not as_images.native_video
    prepared = as_images._prepare(0, request)
    assert prepared.prompt.count("<|image_pad|>") == len(FRAMES) and "<|video_pad|>" not in prepared.prompt
    inputs = as_images._encode([prepared])
    assert "pixel_values" in inputs and "pixel_values_videos" not in inputs
    assert inputs["image_grid_thw"].shape[0] == len(FRAMES)

    native, separate = qwen.generate([request])[0], as_images.generate([request])[0]
    assert_ok(native)
    assert_ok(separate)
    assert separate.prompt_tokens > native.prompt_tokens  # frames as images: no temporal merging


def test_llava_frames_as_separate_images_and_as_one_combined_image(llava):
    assert not llava.has_video_processor and not llava.native_video
    separate = ask(VIDEO, "What happens?")
    prepared = llava._prepare(0, separate)
    assert prepared.prompt.startswith("USER: ") and prepared.prompt.endswith("ASSISTANT:")
    assert prepared.prompt.count("<image>") == len(FRAMES)
    assert llava._encode([prepared])["pixel_values"].shape[0] == len(FRAMES)

    sheet = ask(ImagePart(combined(FRAMES), "sheet"), "What happens?")
    assert llava._prepare(0, sheet).prompt.count("<image>") == 1
    results = llava.generate([separate, sheet])
    for result in results:
        assert_ok(result)
    assert results[0].prompt_tokens > results[1].prompt_tokens


def test_onevision_video_and_images(onevision):
    assert onevision.native_video
    results = onevision.generate([
        ask(VIDEO, "What happens?"),
        ask(ImagePart(image(1), "a"), ImagePart(image(2, (80, 30)), "b"), "Compare the images."),
        ask(ImagePart(image(3), "c"), "Describe."),
    ])
    for result in results:
        assert_ok(result)
    prompt = onevision._prepare(0, ask(VIDEO, "What happens?")).prompt
    assert prompt.startswith("<|im_start|>user <video>\nWhat happens?<|im_end|>")


def test_text_only_requests(qwen, llava, lm):
    request = ask("How many cups are on the table?", system="Answer briefly.")
    for backend in (qwen, llava, lm):
        result = backend.generate([request])[0]
        assert_ok(result)
    assert "Answer briefly." in qwen._prepare(0, request).prompt
    assert lm._prepare(0, request).prompt.startswith("<|im_start|>system\nAnswer briefly.<|im_end|>")


# --- Sampling and batching ------------------------------------------------------------------------

def test_n_samples(qwen, lm):
    for backend in (qwen, lm):
        result = backend.generate([ask(ImagePart(image(5), "x"), "Describe.", n=3, temperature=0.9, seed=7)
                                   if backend is qwen else ask("Tell me a story.", n=3, temperature=0.9, seed=7)])[0]
        assert_ok(result, n=3)
    # n > 1 samples even at temperature 0; one seed gives the same samples again
    first = lm.generate([ask("Tell me a story.", n=3, seed=11)])[0]
    again = lm.generate([ask("Tell me a story.", n=3, seed=11)])[0]
    assert_ok(first, n=3)
    assert first.texts == again.texts


def test_batch_of_four_keeps_order_and_matches_single_requests(qwen, lm):
    """Left padding: a batch of prompts of different lengths decodes like each prompt alone (greedy)."""
    lm_requests = [
        ask("Hi."),
        ask("Describe, in as much detail as you can, what a cat does on a sunny afternoon in Rome."),
        ask("Quante tazze?"),
        ask("What happens after the person opens the door, and why does the dog run away from it?"),
    ]
    vlm_requests = [
        ask(ImagePart(image(1), "a"), "Hi."),
        ask("A text-only question that is quite a bit longer than the others in this batch, on purpose."),
        ask(VIDEO, "What happens?"),
        ask(ImagePart(image(2, (96, 64)), "b"), ImagePart(image(3), "c"), "Compare."),
    ]
    for backend, requests in ((lm, lm_requests), (qwen, vlm_requests)):
        sizes = [backend._prepare(i, r).size for i, r in enumerate(requests)]
        assert len(set(sizes)) == 4  # really different lengths
        calls = []
        inner = backend._generate_batch

        def spy(batch, inner=inner, calls=calls):
            calls.append([item.index for item in batch])
            return inner(batch)

        backend._generate_batch = spy
        try:
            backend.batch_size = 4
            batched = backend.generate(requests)
            backend.batch_size = 1
            single = backend.generate(requests)
        finally:
            del backend._generate_batch
            backend.batch_size = 4
        assert calls[0] == sorted(range(4), key=lambda i: sizes[i])  # one batch, shortest first
        assert len(calls) == 5
        for one, alone in zip(batched, single, strict=True):
            assert_ok(one)
            assert one.texts == alone.texts
            assert one.prompt_tokens == alone.prompt_tokens
        assert [r.prompt_tokens for r in batched] == [r.prompt_tokens for r in single]


def test_requests_with_different_parameters_run_in_separate_batches(lm):
    results = lm.generate([ask("a", max_new_tokens=3), ask("b", max_new_tokens=4), ask("c", max_new_tokens=3)])
    for result in results:
        assert result.error == "" and result.texts[0]
    assert results[0].completion_tokens <= 3 and results[1].completion_tokens <= 4


def test_cuda_oom_halves_the_batch_and_retries(lm, monkeypatch):
    inner = lm._generate_batch
    sizes = []

    def fake_oom(batch):
        sizes.append(len(batch))
        if len(batch) > 3:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 20.00 GiB")
        return inner(batch)

    monkeypatch.setattr(lm, "_generate_batch", fake_oom)
    monkeypatch.setattr(lm, "batch_size", 8)
    requests = [ask(f"Question number {i}" + " more" * i) for i in range(7)]
    results = lm.generate(requests)
    assert sizes == [7, 3, 3, 1]  # OOM at 7: retried as 3, and the rest of the call keeps batches of 3
    for result in results:
        assert_ok(result)
    monkeypatch.undo()
    assert [r.texts for r in results] == [r.texts for r in lm.generate(requests)]


def test_oom_with_a_single_request_and_other_failures_mark_only_their_batch(lm, monkeypatch):
    inner = lm._generate_batch

    def flaky(batch):
        prompts = " ".join(item.prompt for item in batch)
        if "explode" in prompts:
            raise RuntimeError("boom")
        if "huge" in prompts:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory")
        return inner(batch)

    monkeypatch.setattr(lm, "_generate_batch", flaky)
    monkeypatch.setattr(lm, "batch_size", 1)
    results = lm.generate([ask("fine"), ask("please explode"), ask("a huge one"), ask("also fine")])
    assert_ok(results[0])
    assert_ok(results[3])
    assert results[1].texts == [] and "RuntimeError: boom" in results[1].error
    assert results[2].texts == [] and "out of memory even with a batch of one" in results[2].error


def test_bad_requests_give_error_results(lm):
    results = lm.generate([ask("ok"), ask("bad", n=0), ask(ImagePart(image(1), "i"), "blind?")])
    assert_ok(results[0])
    assert "n must be at least 1" in results[1].error
    assert "text-only" in results[2].error
    assert lm.generate([]) == []


def test_blind_baseline_drops_media(tiny_models_dir):
    blind = load_backend("causal_lm", str(tiny_models_dir / "causal-lm"), device="cpu", ignore_media=True)
    assert_ok(blind.generate([ask(ImagePart(image(1), "i"), VIDEO, "What happens?")])[0])


# --- Scoring --------------------------------------------------------------------------------------

def test_score_logprob(lm, qwen):
    texts = ["the the the the the the", "Il gatto dorme sul divano.", "A red cup is on the table."]
    for backend in (lm, qwen):
        scores = backend.score_logprob(texts)
        assert len(scores) == 3
        assert all(math.isfinite(s) and s < 0 for s in scores)
        assert scores[0] != scores[1]
        with_prefix = backend.score_logprob(texts, prefix="Question: what is on the table? Answer:")
        assert all(math.isfinite(s) and s < 0 for s in with_prefix) and with_prefix != scores
        # batching does not change the scores
        backend.batch_size, saved = 1, backend.batch_size
        try:
            assert backend.score_logprob(texts) == pytest.approx(scores, abs=1e-4)
        finally:
            backend.batch_size = saved
    assert lm.score_logprob([]) == []
    assert math.isnan(lm.score_logprob([""])[0])


# --- NLI and CLIP ---------------------------------------------------------------------------------

def test_nli_entailment_probabilities(tiny_models_dir):
    nli = load_backend("nli", str(tiny_models_dir / "nli"), device="cpu", batch_size=2)
    assert (nli.name, nli.revision) == ("nli", "local")
    assert nli.labels[nli.entailment_index] == "entailment"
    premises = ["A cat sits on the table.", "Il cane dorme.", "Two birds fly over the open door today.", "x"]
    hypotheses = ["An animal is on the table.", "Il cane corre.", "Birds.", "y"]
    probs = nli.entailment(premises, hypotheses)
    assert len(probs) == 4 and all(0.0 <= p <= 1.0 for p in probs)
    full = nli.probabilities(premises, hypotheses)
    for row, p in zip(full, probs, strict=True):
        assert set(row) == {"entailment", "neutral", "contradiction"}
        assert sum(row.values()) == pytest.approx(1.0, abs=1e-5)
        assert row["entailment"] == p
    assert nli.entailment(premises[1:2], hypotheses[1:2]) == pytest.approx(probs[1:2], abs=1e-5)
    with pytest.raises(ValueError):
        nli.entailment(["a"], ["b", "c"])


def test_clip_embeddings(tiny_models_dir):
    clip = load_backend("clip", str(tiny_models_dir / "clip"), device="cpu", batch_size=2)
    texts = clip.encode_text(["a red cup", "una tazza rossa", "a dog running in the park"])
    images = clip.encode_images([image(1), image(2, (80, 30)), np.asarray(image(3))])
    assert texts.shape == (3, 16) and images.shape == (3, 16)
    assert np.allclose(np.linalg.norm(texts, axis=1), 1.0, atol=1e-5)
    assert np.allclose(np.linalg.norm(images, axis=1), 1.0, atol=1e-5)
    assert clip.cosine(texts[0], texts[0]) == pytest.approx(1.0, abs=1e-5)
    assert clip.cosine(images[1], images[1]) == pytest.approx(1.0, abs=1e-5)
    sims = clip.cosine(texts, images)
    assert sims.shape == (3, 3) and np.all(np.abs(sims) <= 1.0 + 1e-5)
    assert np.allclose(clip.encode_text(["a red cup"])[0], texts[0], atol=1e-5)  # batching does not matter
    assert clip.encode_text([]).shape == (0, 16)


def test_hub_offline_is_set():
    assert os.environ.get("HF_HUB_OFFLINE") == "1"


def test_chat_template_option_overrides_the_models(lm, tiny_models_dir):
    template = "{% for m in messages %}[{{ m['role'] }}] {{ m['content'] }}\n{% endfor %}[assistant]"
    custom = load_backend("causal_lm", str(tiny_models_dir / "causal-lm"), device="cpu", chat_template=template)
    assert custom._prepare(0, ask("Ciao")).prompt == "[user] Ciao\n[assistant]"
    assert_ok(custom.generate([ask("Ciao")])[0])
