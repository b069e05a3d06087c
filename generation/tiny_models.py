"""Tiny, randomly initialised versions of real model architectures, built locally from configs.

They exist so that the model backends (`generation.backends`) can be exercised end to end without
internet or a model hub: every folder written here loads with the same calls users make with hub
ids (`AutoConfig`, `AutoTokenizer`, `AutoProcessor`, `AutoModelForImageTextToText`,
`AutoModelForCausalLM`, `AutoModelForSequenceClassification`, `AutoModel`). The weights are
random, so the models say nothing sensible; what is real is everything around the weights:
the architecture code, the processors (image and video), the tokenizers and the chat templates.

- "qwen2-vl": Qwen2.5-VL (window-attention ViT, M-RoPE, native video input with fps).
- "llava-onevision": LLaVA-OneVision (SigLIP tower + Qwen2 LM; anyres images and native video).
- "llava": LLaVA 1.5 (CLIP tower + Llama LM; images only, so video frames go in as images).
- "causal-lm": a Qwen2-style chat LM (AutoModelForCausalLM) with the ChatML template.
- "nli": a BERT sequence classifier with entailment / neutral / contradiction labels.
- "clip": a CLIP dual encoder with its processor.

And two tiny Stable Diffusion pipelines (diffusers folders: `model_index.json` plus `unet/`,
`vae/`, `text_encoder/`, `tokenizer/`, `scheduler/`), loadable with `DiffusionPipeline.from_pretrained`
like a hub checkpoint, with no safety checker or feature extractor:

- "sd-text2image": a `StableDiffusionPipeline` (4-channel UNet), SD 1.5's PNDM scheduler settings.
- "sd-inpaint": a `StableDiffusionInpaintPipeline` with a 9-channel UNet (latents, mask, masked
  image), like the SD inpainting checkpoints.

Both have a 2-block UNet (8 and 16 channels, one cross-attention block), a 4-block VAE (scale
factor 8, as in SD) and a 2-layer CLIP text encoder with the CLIP tokenizer below; a 64x64 image
takes a few hundredths of a second per step on a CPU.

Each tokenizer is trained on the fly (`tokenizers` BPE / WordPiece) on a few hundred English and
Italian sentences, using the very normaliser and pre-tokeniser of the architecture's tokenizer
class, then wrapped in that class with the special tokens its processor and chat template need.
Everything is seeded, so a build is byte-for-byte reproducible.

Generation defaults of the tiny generative models are short (`max_new_tokens=8`); they also set
`min_new_tokens` and suppress the structural special tokens (vision placeholders, chat markers),
so a random model always produces a few visible tokens instead of an immediate end of text.

Build them with `python manage.py make_tiny_models <folder>` or `build_tiny_models(folder)`.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import random
import shutil
import time
from collections import Counter
from collections.abc import Callable, Iterable
from functools import cache
from pathlib import Path

# Bump when what a build writes changes, so cached folders (TINY_MODELS_DIR) are rebuilt.
TINY_MODELS_VERSION = 1
MARKER = "tiny_model.json"
SEED = 1234
MAX_NEW_TOKENS = 8
MIN_NEW_TOKENS = 3

# --- Chat templates ---------------------------------------------------------------------------
# The structure of each real model's processor chat template (Qwen2-VL / Qwen2.5-VL Instruct,
# llava-hf LLaVA-OneVision and LLaVA 1.5, Qwen2.5 Instruct).

QWEN2_VL_CHAT_TEMPLATE = (
    "{% set image_count = namespace(value=0) %}{% set video_count = namespace(value=0) %}"
    "{% for message in messages %}{% if loop.first and message['role'] != 'system' %}"
    "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n{% endif %}"
    "<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}<|im_end|>\n"
    "{% else %}{% for content in message['content'] %}"
    "{% if content['type'] == 'image' or 'image' in content or 'image_url' in content %}"
    "{% set image_count.value = image_count.value + 1 %}"
    "{% if add_vision_id %}Picture {{ image_count.value }}: {% endif %}"
    "<|vision_start|><|image_pad|><|vision_end|>"
    "{% elif content['type'] == 'video' or 'video' in content %}"
    "{% set video_count.value = video_count.value + 1 %}"
    "{% if add_vision_id %}Video {{ video_count.value }}: {% endif %}"
    "<|vision_start|><|video_pad|><|vision_end|>"
    "{% elif 'text' in content %}{{ content['text'] }}{% endif %}{% endfor %}<|im_end|>\n"
    "{% endif %}{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)

LLAVA_ONEVISION_CHAT_TEMPLATE = (
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + ' '}}"
    "{# Render all images first #}"
    "{% for content in message['content'] | selectattr('type', 'equalto', 'image') %}{{ '<image>' }}{% endfor %}"
    "{# Render all video then #}"
    "{% for content in message['content'] | selectattr('type', 'equalto', 'video') %}{{ '<video>' }}{% endfor %}"
    "{# Render all text next #}"
    "{% if message['role'] != 'assistant' %}"
    "{% for content in message['content'] | selectattr('type', 'equalto', 'text') %}"
    "{{ '\n' + content['text'] }}{% endfor %}"
    "{% else %}{% for content in message['content'] | selectattr('type', 'equalto', 'text') %}"
    "{% generation %}{{ '\n' + content['text'] }}{% endgeneration %}{% endfor %}{% endif %}"
    "{{'<|im_end|>'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)

LLAVA_CHAT_TEMPLATE = (
    "{% for message in messages %}{% if message['role'] != 'system' %}{{ message['role'].upper() + ': '}}{% endif %}"
    "{# Render all images first #}"
    "{% for content in message['content'] | selectattr('type', 'equalto', 'image') %}{{ '<image>\n' }}{% endfor %}"
    "{# Render all text next #}"
    "{% if message['role'] != 'assistant' %}"
    "{% for content in message['content'] | selectattr('type', 'equalto', 'text') %}"
    "{{ content['text'] + ' '}}{% endfor %}"
    "{% else %}{% for content in message['content'] | selectattr('type', 'equalto', 'text') %}"
    "{% generation %}{{ content['text'] + ' '}}{% endgeneration %}{% endfor %}{% endif %}"
    "{% endfor %}{% if add_generation_prompt %}{{ 'ASSISTANT:' }}{% endif %}"
)

CHATML_TEMPLATE = (
    "{%- for message in messages %}"
    "{%- if loop.first and message['role'] != 'system' %}"
    "{{- '<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n' }}{%- endif %}"
    "{{- '<|im_start|>' + message['role'] + '\n' }}"
    "{%- if message['content'] is string %}{{- message['content'] }}"
    "{%- else %}{%- for content in message['content'] %}"
    "{%- if content['type'] == 'text' %}{{- content['text'] }}{%- endif %}{%- endfor %}{%- endif %}"
    "{{- '<|im_end|>\n' }}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\n' }}{%- endif %}"
)

# Qwen2 special tokens, in the order of the real vocabulary.
QWEN_SPECIAL_TOKENS = [
    "<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|object_ref_start|>", "<|object_ref_end|>",
    "<|box_start|>", "<|box_end|>", "<|quad_start|>", "<|quad_end|>", "<|vision_start|>", "<|vision_end|>",
    "<|vision_pad|>", "<|image_pad|>", "<|video_pad|>",
]

# --- Training corpus --------------------------------------------------------------------------

_EN_SUBJECTS = ["The cat", "A dog", "The woman", "A child", "The man", "Two birds", "The robot", "A teacher",
                "The camera", "Three people"]
_EN_VERBS = ["is holding", "looks at", "walks towards", "picks up", "puts down", "points at", "is next to",
             "moves behind"]
_EN_OBJECTS = ["a red cup", "the blue box", "a green ball", "the wooden table", "two yellow apples",
               "the open door", "a small plant", "the white car"]
_IT_SUBJECTS = ["Il gatto", "Un cane", "La donna", "Un bambino", "L'uomo", "Due uccelli", "Il robot",
                "Una maestra", "La telecamera", "Tre persone"]
_IT_VERBS = ["tiene in mano", "guarda", "cammina verso", "prende", "appoggia", "indica", "è vicino a",
             "si muove dietro"]
_IT_OBJECTS = ["una tazza rossa", "la scatola blu", "una palla verde", "il tavolo di legno", "due mele gialle",
               "la porta aperta", "una piccola pianta", "l'auto bianca"]
_EXTRA = [
    "How many cups are on the table?", "What color is the ball?", "What happens after the person opens the door?",
    "Answer with a single word.", "Describe the video in one sentence.", "Is the statement true or false?",
    "Yes.", "No.", "The answer is two.", "There are three objects in the scene.",
    "Quante tazze ci sono sul tavolo?", "Di che colore è la palla?", "Cosa succede dopo che la persona apre la porta?",
    "Rispondi con una sola parola.", "Descrivi il video in una frase.", "L'affermazione è vera o falsa?",
    "Sì.", "No.", "La risposta è due.", "Ci sono tre oggetti nella scena.",
    "Numbers: 0 1 2 3 4 5 6 7 8 9 10 12 25 100; symbols: ( ) [ ] { } < > | / \\ - _ + = * & % $ # @ ! ? , . ; :",
    "Accenti: à è é ì ò ù À È É Ì Ò Ù; quotes: \"double\" 'single' `back`.",
    "Frame 1, frame 2, frame 3: the first, second and third frames of the clip.",
    "A) red B) green C) blue D) yellow", "Option A is correct because the cup is red.",
]


@cache
def training_corpus() -> tuple[str, ...]:
    """A few hundred English and Italian sentences, in a fixed (seeded) order."""
    rng = random.Random(SEED)
    english = [f"{s} {v} {o}." for s, v, o in itertools.product(_EN_SUBJECTS, _EN_VERBS, _EN_OBJECTS)]
    italian = [f"{s} {v} {o}." for s, v, o in itertools.product(_IT_SUBJECTS, _IT_VERBS, _IT_OBJECTS)]
    rng.shuffle(english)
    rng.shuffle(italian)
    sentences = english[:200] + italian[:200] + _EXTRA * 3
    rng.shuffle(sentences)
    return tuple(sentences)


# --- Tokenizers -------------------------------------------------------------------------------

def _words(template_tokenizer) -> Counter:
    """Pre-tokenised words of the corpus (and their counts), by the tokenizer's own normaliser and
    pre-tokeniser, so that the trained merges fit the pipeline the tokenizer class rebuilds on load."""
    backend = template_tokenizer.backend_tokenizer
    words: Counter = Counter()
    for sentence in training_corpus():
        text = backend.normalizer.normalize_str(sentence) if backend.normalizer is not None else sentence
        words.update(piece for piece, _ in backend.pre_tokenizer.pre_tokenize_str(text))
    return words


def train_bpe(words: Counter, vocab_size: int, alphabet: Iterable[str], *, prefix: str = "",
              suffix: str = "") -> tuple[list[str], list[tuple[str, str]]]:
    """A small, deterministic BPE trainer: (vocabulary in order, merges in rank order).

    The `tokenizers` trainers break ties between equally frequent pairs by hash order, which
    changes between runs; here the most frequent pair wins and ties go to the smallest pair, so a
    build is reproducible. `prefix` marks word-continuing pieces (WordPiece "##"), `suffix` the
    end of a word (CLIP "</w>").
    """
    def symbols(word: str) -> list[str]:
        chars = list(word)
        out = [chars[0]] + [prefix + c for c in chars[1:]]
        if suffix:
            out[-1] += suffix
        return out

    entries = [(symbols(word), count) for word, count in sorted(words.items()) if word]
    vocab = list(dict.fromkeys([*alphabet, *sorted({sym for syms, _ in entries for sym in syms})]))
    known = set(vocab)
    pair_counts: Counter = Counter()
    where: dict[tuple[str, str], set[int]] = {}
    for index, (syms, count) in enumerate(entries):
        for pair in zip(syms, syms[1:], strict=False):
            pair_counts[pair] += count
            where.setdefault(pair, set()).add(index)
    merges: list[tuple[str, str]] = []
    while len(vocab) < vocab_size and pair_counts:
        best = min(pair_counts, key=lambda pair: (-pair_counts[pair], pair))
        if pair_counts[best] < 2:
            break
        left, right = best
        merged = left + (right[len(prefix):] if prefix and right.startswith(prefix) else right)
        merges.append(best)
        if merged not in known:
            known.add(merged)
            vocab.append(merged)
        for index in sorted(where.pop(best, ())):
            syms, count = entries[index]
            for pair in zip(syms, syms[1:], strict=False):
                pair_counts[pair] -= count
                if pair_counts[pair] <= 0:
                    del pair_counts[pair]
            out, i = [], 0
            while i < len(syms):
                if i + 1 < len(syms) and syms[i] == left and syms[i + 1] == right:
                    out.append(merged)
                    i += 2
                else:
                    out.append(syms[i])
                    i += 1
            entries[index] = (out, count)
            for pair in zip(out, out[1:], strict=False):
                pair_counts[pair] += count
                where.setdefault(pair, set()).add(index)
    return vocab, merges


def _byte_level_alphabet() -> list[str]:
    from tokenizers import pre_tokenizers

    return sorted(pre_tokenizers.ByteLevel.alphabet())


def build_qwen2_tokenizer(extra_special_tokens: list[str], *, eos_token: str = "<|im_end|>", chat_template=None):
    """A byte-level BPE `Qwen2Tokenizer` (the Qwen2 pre-tokeniser regex) with the given special tokens."""
    from tokenizers import AddedToken
    from transformers import Qwen2Tokenizer

    tokens, merges = train_bpe(_words(Qwen2Tokenizer()), 600, _byte_level_alphabet())
    tokenizer = Qwen2Tokenizer(vocab={t: i for i, t in enumerate(tokens)}, merges=merges, unk_token=None,
                               bos_token=None, eos_token="<|endoftext|>", pad_token="<|endoftext|>", errors="replace")
    # Added (special) tokens come after the BPE vocabulary, in order, like the real ids 151643+.
    specials = list(dict.fromkeys(["<|endoftext|>", "<|im_start|>", "<|im_end|>", *extra_special_tokens]))
    tokenizer.add_tokens([AddedToken(t, special=True, normalized=False) for t in specials], special_tokens=True)
    tokenizer.eos_token = eos_token
    tokenizer.model_max_length = 32768
    if chat_template is not None:
        tokenizer.chat_template = chat_template
    return tokenizer


def build_llama_tokenizer():
    """A Llama 2 style tokenizer: Metaspace BPE with byte fallback (<0x00>..<0xFF>), plus <image> and <pad>."""
    from tokenizers import AddedToken
    from transformers import LlamaTokenizer

    trained, merges = train_bpe(_words(LlamaTokenizer()), 700, ["▁"])
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2}
    for byte in range(256):
        vocab[f"<0x{byte:02X}>"] = len(vocab)
    for token in trained:
        vocab.setdefault(token, len(vocab))
    tokenizer = LlamaTokenizer(vocab=vocab, merges=merges, unk_token="<unk>", bos_token="<s>", eos_token="</s>",
                               add_bos_token=True, add_eos_token=False, legacy=False)
    tokenizer.add_tokens([AddedToken("<image>", special=True, normalized=False)], special_tokens=True)
    tokenizer.add_special_tokens({"pad_token": "<pad>"})
    tokenizer.model_max_length = 4096
    return tokenizer


def build_bert_tokenizer():
    """An uncased BERT WordPiece tokenizer (its vocabulary grown by BPE merges with the "##" prefix)."""
    from transformers import BertTokenizer

    template = BertTokenizer()
    words = _words(template)
    chars = sorted({ch for word in words for ch in word})
    alphabet = [*chars, *(f"##{ch}" for ch in chars)]
    tokens, _ = train_bpe(words, 600, alphabet, prefix="##")
    vocab = {t: i for i, t in enumerate(dict.fromkeys(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *tokens]))}
    bert = BertTokenizer(vocab=vocab, do_lower_case=True)
    bert.model_max_length = 128
    return bert


def build_clip_tokenizer():
    """A CLIP byte-level BPE tokenizer with the `</w>` end-of-word suffix."""
    from transformers import CLIPTokenizer

    alphabet = _byte_level_alphabet()
    # Like the real CLIP vocabulary: every byte character alone and at the end of a word first.
    tokens, merges = train_bpe(_words(CLIPTokenizer()), 800, [*alphabet, *(ch + "</w>" for ch in alphabet)],
                               suffix="</w>")
    vocab = {t: i for i, t in enumerate(dict.fromkeys([*tokens, "<|startoftext|>", "<|endoftext|>"]))}
    tokenizer = CLIPTokenizer(vocab=vocab, merges=merges)
    tokenizer.model_max_length = 77
    return tokenizer


# --- Models -----------------------------------------------------------------------------------

def _seed(offset: int = 0) -> None:
    import numpy as np
    import torch

    random.seed(SEED + offset)
    np.random.seed(SEED + offset)
    torch.manual_seed(SEED + offset)


def _generation_config(tokenizer, *, eos_tokens: list[str], suppress: list[str]):
    """Short greedy outputs by default; `suppress` (structural special tokens) and whitespace-only
    tokens are never generated, so that a random model's few first tokens are visible text."""
    from transformers import GenerationConfig

    eos_ids = [tokenizer.convert_tokens_to_ids(t) for t in eos_tokens]
    suppressed = {tokenizer.convert_tokens_to_ids(t) for t in suppress}
    for token_id in tokenizer.get_vocab().values():
        if token_id not in eos_ids and not tokenizer.decode([token_id], skip_special_tokens=True).strip():
            suppressed.add(token_id)
    suppressed -= {*eos_ids, tokenizer.pad_token_id}
    return GenerationConfig(
        max_new_tokens=MAX_NEW_TOKENS,
        min_new_tokens=MIN_NEW_TOKENS,
        do_sample=False,
        eos_token_id=eos_ids if len(eos_ids) > 1 else eos_ids[0],
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        suppress_tokens=sorted(suppressed) or None,
    )


def _save_model(model, folder: Path, generation_config=None) -> None:
    if generation_config is not None:
        model.generation_config = generation_config
    model.save_pretrained(folder)


def _small_text(vocab_size: int, **overrides) -> dict:
    base = {
        "vocab_size": vocab_size,
        "hidden_size": 32,
        "intermediate_size": 64,
        "num_hidden_layers": 2,
        "num_attention_heads": 2,
        "num_key_value_heads": 1,
        "max_position_embeddings": 4096,
    }
    base.update(overrides)
    return base


def build_qwen2_vl(folder: Path) -> None:
    """Qwen2.5-VL: 2-layer ViT (patch 8, merge 2, window 32), 2-layer M-RoPE LM, hidden 32."""
    from transformers import (
        Qwen2_5_VLConfig,
        Qwen2_5_VLForConditionalGeneration,
        Qwen2_5_VLProcessor,
        Qwen2VLImageProcessor,
        Qwen2VLVideoProcessor,
    )

    tokenizer = build_qwen2_tokenizer(QWEN_SPECIAL_TOKENS, chat_template=QWEN2_VL_CHAT_TEMPLATE)
    patch, merge, temporal = 8, 2, 2
    size = {"shortest_edge": 32 * 32, "longest_edge": 64 * 64}
    image_processor = Qwen2VLImageProcessor(size=size, patch_size=patch, merge_size=merge,
                                            temporal_patch_size=temporal)
    video_processor = Qwen2VLVideoProcessor(size=size, patch_size=patch, merge_size=merge,
                                            temporal_patch_size=temporal, min_frames=2, max_frames=64,
                                            cap_pixels_per_frame=True, max_video_tokens=4096)
    processor = Qwen2_5_VLProcessor(image_processor=image_processor, tokenizer=tokenizer,
                                    video_processor=video_processor, chat_template=QWEN2_VL_CHAT_TEMPLATE)
    ids = tokenizer.convert_tokens_to_ids
    config = Qwen2_5_VLConfig(
        text_config=_small_text(
            len(tokenizer), model_type="qwen2_5_vl_text",
            rope_parameters={"rope_type": "default", "rope_theta": 1000000.0, "mrope_section": [2, 3, 3]},
            bos_token_id=None, eos_token_id=ids("<|im_end|>"), pad_token_id=ids("<|endoftext|>"),
        ),
        vision_config={
            "depth": 2, "hidden_size": 32, "intermediate_size": 64, "num_heads": 2, "patch_size": patch,
            "spatial_merge_size": merge, "temporal_patch_size": temporal, "window_size": 32,
            "fullatt_block_indexes": [1], "out_hidden_size": 32, "tokens_per_second": 2,
        },
        image_token_id=ids("<|image_pad|>"),
        video_token_id=ids("<|video_pad|>"),
        vision_start_token_id=ids("<|vision_start|>"),
        vision_end_token_id=ids("<|vision_end|>"),
    )
    _seed(1)
    model = Qwen2_5_VLForConditionalGeneration(config)
    suppress = [t for t in QWEN_SPECIAL_TOKENS if t not in ("<|im_end|>", "<|endoftext|>")]
    _save_model(model, folder, _generation_config(tokenizer, eos_tokens=["<|im_end|>", "<|endoftext|>"],
                                                  suppress=suppress))
    processor.save_pretrained(folder)


def build_llava_onevision(folder: Path) -> None:
    """LLaVA-OneVision: 1-layer SigLIP (32 px, patch 8: 16 tokens), anyres grid up to 64 px, 2-layer Qwen2 LM."""
    from transformers import (
        LlavaOnevisionConfig,
        LlavaOnevisionForConditionalGeneration,
        LlavaOnevisionImageProcessor,
        LlavaOnevisionProcessor,
        LlavaOnevisionVideoProcessor,
    )

    extra = ["<image>", "<video>"]
    tokenizer = build_qwen2_tokenizer(extra, chat_template=LLAVA_ONEVISION_CHAT_TEMPLATE)
    pinpoints = [[32, 32], [32, 64], [64, 32], [64, 64]]
    image_processor = LlavaOnevisionImageProcessor(size={"height": 32, "width": 32}, image_grid_pinpoints=pinpoints)
    video_processor = LlavaOnevisionVideoProcessor(size={"height": 32, "width": 32})
    processor = LlavaOnevisionProcessor(
        image_processor=image_processor, tokenizer=tokenizer, video_processor=video_processor,
        num_image_tokens=16, vision_feature_select_strategy="full", chat_template=LLAVA_ONEVISION_CHAT_TEMPLATE,
        vision_aspect_ratio="anyres_max_9",
    )
    ids = tokenizer.convert_tokens_to_ids
    config = LlavaOnevisionConfig(
        vision_config={"model_type": "siglip_vision_model", "hidden_size": 32, "intermediate_size": 64,
                       "num_hidden_layers": 1, "num_attention_heads": 2, "image_size": 32, "patch_size": 8},
        text_config=_small_text(len(tokenizer), model_type="qwen2", bos_token_id=None,
                                eos_token_id=ids("<|im_end|>"), pad_token_id=ids("<|endoftext|>")),
        image_token_index=ids("<image>"),
        video_token_index=ids("<video>"),
        vision_feature_select_strategy="full",
        vision_feature_layer=-1,
        image_grid_pinpoints=pinpoints,
        vision_aspect_ratio="anyres_max_9",
    )
    _seed(2)
    model = LlavaOnevisionForConditionalGeneration(config)
    _save_model(model, folder, _generation_config(tokenizer, eos_tokens=["<|im_end|>", "<|endoftext|>"],
                                                  suppress=["<|im_start|>", *extra]))
    processor.save_pretrained(folder)


def build_llava(folder: Path) -> None:
    """LLaVA 1.5: 2-layer CLIP ViT (32 px, patch 8: 16 tokens after dropping CLS), 2-layer Llama LM."""
    from transformers import CLIPImageProcessor, LlavaConfig, LlavaForConditionalGeneration, LlavaProcessor

    tokenizer = build_llama_tokenizer()
    image_processor = CLIPImageProcessor(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32})
    processor = LlavaProcessor(image_processor=image_processor, tokenizer=tokenizer, patch_size=8,
                               vision_feature_select_strategy="default", num_additional_image_tokens=1,
                               chat_template=LLAVA_CHAT_TEMPLATE)
    ids = tokenizer.convert_tokens_to_ids
    config = LlavaConfig(
        vision_config={"model_type": "clip_vision_model", "hidden_size": 32, "intermediate_size": 64,
                       "num_hidden_layers": 2, "num_attention_heads": 2, "image_size": 32, "patch_size": 8,
                       "projection_dim": 32},
        text_config=_small_text(len(tokenizer), model_type="llama", num_key_value_heads=2,
                                bos_token_id=ids("<s>"), eos_token_id=ids("</s>"), pad_token_id=ids("<pad>")),
        image_token_index=ids("<image>"),
        image_seq_length=16,
        vision_feature_select_strategy="default",
        vision_feature_layer=-2,
        pad_token_id=ids("<pad>"),
    )
    _seed(3)
    model = LlavaForConditionalGeneration(config)
    _save_model(model, folder, _generation_config(tokenizer, eos_tokens=["</s>"], suppress=["<image>", "<s>"]))
    processor.save_pretrained(folder)


def build_causal_lm(folder: Path) -> None:
    """A 2-layer Qwen2 chat LM (hidden 32) with the ChatML template."""
    from transformers import Qwen2Config, Qwen2ForCausalLM

    tokenizer = build_qwen2_tokenizer([], chat_template=CHATML_TEMPLATE)
    ids = tokenizer.convert_tokens_to_ids
    config = Qwen2Config(**_small_text(len(tokenizer), bos_token_id=None, eos_token_id=ids("<|im_end|>"),
                                       pad_token_id=ids("<|endoftext|>"), tie_word_embeddings=False))
    _seed(4)
    model = Qwen2ForCausalLM(config)
    _save_model(model, folder, _generation_config(tokenizer, eos_tokens=["<|im_end|>", "<|endoftext|>"],
                                                  suppress=["<|im_start|>"]))
    tokenizer.save_pretrained(folder)


NLI_LABELS = {0: "contradiction", 1: "entailment", 2: "neutral"}


def build_nli(folder: Path) -> None:
    """A 2-layer BERT (hidden 32) sequence classifier with NLI labels in config.id2label."""
    from transformers import BertConfig, BertForSequenceClassification

    tokenizer = build_bert_tokenizer()
    config = BertConfig(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=128, pad_token_id=tokenizer.pad_token_id,
                        id2label=dict(NLI_LABELS), label2id={v: k for k, v in NLI_LABELS.items()})
    _seed(5)
    model = BertForSequenceClassification(config)
    _save_model(model, folder)
    tokenizer.save_pretrained(folder)


def build_clip(folder: Path) -> None:
    """CLIP: 2-layer text and vision towers (hidden 32, 32 px images, patch 8), projection 16."""
    from transformers import CLIPConfig, CLIPImageProcessor, CLIPModel, CLIPProcessor

    tokenizer = build_clip_tokenizer()
    image_processor = CLIPImageProcessor(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32})
    processor = CLIPProcessor(image_processor=image_processor, tokenizer=tokenizer)
    config = CLIPConfig(
        text_config={"vocab_size": len(tokenizer), "hidden_size": 32, "intermediate_size": 64,
                     "num_hidden_layers": 2, "num_attention_heads": 2, "max_position_embeddings": 77,
                     "bos_token_id": tokenizer.bos_token_id, "eos_token_id": tokenizer.eos_token_id,
                     "pad_token_id": tokenizer.pad_token_id, "projection_dim": 16},
        vision_config={"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2,
                       "image_size": 32, "patch_size": 8, "projection_dim": 16},
        projection_dim=16,
    )
    _seed(6)
    model = CLIPModel(config)
    _save_model(model, folder)
    processor.save_pretrained(folder)


def _sd_components(unet_in_channels: int, seed_offset: int) -> dict:
    """UNet, VAE, text encoder, tokenizer and scheduler of a tiny Stable Diffusion pipeline."""
    from diffusers import AutoencoderKL, PNDMScheduler, UNet2DConditionModel
    from transformers import CLIPTextConfig, CLIPTextModel

    tokenizer = build_clip_tokenizer()
    _seed(seed_offset)
    unet = UNet2DConditionModel(
        sample_size=8, in_channels=unet_in_channels, out_channels=4, layers_per_block=1,
        block_out_channels=(8, 16), down_block_types=("DownBlock2D", "CrossAttnDownBlock2D"),
        up_block_types=("CrossAttnUpBlock2D", "UpBlock2D"), cross_attention_dim=32, attention_head_dim=4,
        norm_num_groups=4,
    )
    vae = AutoencoderKL(
        in_channels=3, out_channels=3, latent_channels=4, layers_per_block=1, sample_size=64,
        block_out_channels=(8, 8, 16, 16), down_block_types=("DownEncoderBlock2D",) * 4,
        up_block_types=("UpDecoderBlock2D",) * 4, norm_num_groups=4,
    )
    text_encoder = CLIPTextModel(CLIPTextConfig(
        vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
        max_position_embeddings=77, projection_dim=32, bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id,
    ))
    # Stable Diffusion 1.5's scheduler settings.
    scheduler = PNDMScheduler(beta_start=0.00085, beta_end=0.012, beta_schedule="scaled_linear",
                              skip_prk_steps=True, steps_offset=1, set_alpha_to_one=False)
    scheduler.register_to_config(clip_sample=False)  # read by the schedulers built from this config (DDIM)
    return {"unet": unet, "vae": vae, "text_encoder": text_encoder, "tokenizer": tokenizer, "scheduler": scheduler,
            "safety_checker": None, "feature_extractor": None, "requires_safety_checker": False}


def build_sd_text2image(folder: Path) -> None:
    """Stable Diffusion text-to-image: 4-channel UNet (8/16 channels), 4-block VAE, 2-layer CLIP text encoder."""
    from diffusers import StableDiffusionPipeline

    StableDiffusionPipeline(**_sd_components(4, 7)).save_pretrained(folder)


def build_sd_inpaint(folder: Path) -> None:
    """Stable Diffusion inpainting: the same, with a 9-channel UNet input (latents, mask, masked image)."""
    from diffusers import StableDiffusionInpaintPipeline

    StableDiffusionInpaintPipeline(**_sd_components(9, 8)).save_pretrained(folder)


BUILDERS: dict[str, Callable[[Path], None]] = {
    "qwen2-vl": build_qwen2_vl,
    "llava-onevision": build_llava_onevision,
    "llava": build_llava,
    "causal-lm": build_causal_lm,
    "nli": build_nli,
    "clip": build_clip,
    "sd-text2image": build_sd_text2image,
    "sd-inpaint": build_sd_inpaint,
}
TINY_MODEL_NAMES = tuple(BUILDERS)
DIFFUSERS_MODEL_NAMES = ("sd-text2image", "sd-inpaint")
# How the demo and the tests register the tiny models (`generation.model_registry.register_tiny_models`), so that
# pages, the API and the commands can pick them: tiny model → [(entry name, backend, uses)]. The NLI encoder
# also stands in for BERTScore's.
REGISTRY_ENTRIES = {
    "qwen2-vl": [("tiny-qwen2-vl", "transformers", ("evaluation", "proposals"))],
    "llava-onevision": [("tiny-llava-onevision", "transformers", ("evaluation", "proposals"))],
    "llava": [("tiny-llava", "transformers", ("evaluation", "proposals"))],
    "causal-lm": [("tiny-causal-lm", "causal_lm", ("evaluation", "judge", "proposals", "baseline"))],
    "nli": [("tiny-nli", "nli", ("nli",)), ("tiny-bertscore", "bertscore", ("bertscore",))],
    "clip": [("tiny-clip", "clip", ("clip",))],
    "sd-text2image": [("tiny-sd-text2image", "diffusion", ("image_generation", "inpainting"))],
    "sd-inpaint": [("tiny-sd-inpaint", "diffusion", ("inpainting",))],
}
TRANSFORMERS_MODEL_NAMES = tuple(name for name in TINY_MODEL_NAMES if name not in DIFFUSERS_MODEL_NAMES)


def folder_size(folder: Path) -> int:
    return sum(p.stat().st_size for p in Path(folder).rglob("*") if p.is_file())


def _is_current(target: Path) -> bool:
    try:
        marker = json.loads((target / MARKER).read_text())
    except (OSError, ValueError):
        return False
    files = marker.get("files") or {}
    return marker.get("version") == TINY_MODELS_VERSION and bool(files) and \
        all((target / file).is_file() for file in files)


def build_tiny_model(name: str, folder: str | Path, *, force: bool = False) -> Path:
    """Build one tiny model into `<folder>/<name>` (kept as is when already built by this version)."""
    if name not in BUILDERS:
        raise ValueError(f"Unknown tiny model {name!r}; choose from {', '.join(TINY_MODEL_NAMES)}.")
    target = Path(folder) / name
    if not force and _is_current(target):
        return target
    import numpy as np
    import torch

    # Build into a private folder and move it into place, so that a half-written model is never
    # seen and concurrent builders (test workers sharing TINY_MODELS_DIR) do not collide.
    partial = Path(folder) / f".{name}.{os.getpid()}.partial"
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    from diffusers.utils import logging as diffusers_logging
    from transformers.utils import logging as hf_logging

    started = time.monotonic()
    bars = hf_logging.is_progress_bar_enabled()
    diffusers_bars = diffusers_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    diffusers_logging.disable_progress_bar()
    python_state, numpy_state = random.getstate(), np.random.get_state()
    try:
        with torch.random.fork_rng(devices=[]):  # the caller's random states are left as they were
            BUILDERS[name](partial)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    finally:
        random.setstate(python_state)
        np.random.set_state(numpy_state)
        if bars:
            hf_logging.enable_progress_bar()
        if diffusers_bars:
            diffusers_logging.enable_progress_bar()
    files = {p.relative_to(partial).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()[:16]
             for p in sorted(partial.rglob("*")) if p.is_file()}
    (partial / MARKER).write_text(json.dumps({
        "name": name, "version": TINY_MODELS_VERSION, "seed": SEED,
        "build_seconds": round(time.monotonic() - started, 3), "files": files,
    }, indent=2))
    if not force and _is_current(target):  # another process finished it meanwhile
        shutil.rmtree(partial, ignore_errors=True)
        return target
    shutil.rmtree(target, ignore_errors=True)
    partial.rename(target)
    return target


def build_tiny_models(folder: str | Path, names: Iterable[str] | None = None, *, force: bool = False) -> dict:
    """Build the tiny models (all by default) under `folder`; returns {name: path}."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    return {name: build_tiny_model(name, folder, force=force) for name in (names or TINY_MODEL_NAMES)}
