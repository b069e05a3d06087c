"""A local vision-language model through `transformers`: `AutoProcessor` + `AutoModelForImageTextToText`.

Works with any image-text-to-text model whose processor has a chat template (Qwen2-VL and
Qwen2.5-VL, LLaVA 1.5, LLaVA-OneVision, ...), from a hub id or a local folder.

- Prompts are built with the processor's own chat template, from the request's messages in the
  HF content format ({"type": "text"}, {"type": "image"}, {"type": "video"}).
- Video: when the processor has a video processor (Qwen2-VL, LLaVA-OneVision), a `VideoPart`'s
  frames go in as one native video, with metadata giving the rate of the frames passed (source
  fps scaled by the spacing of `frame_indices`); the processor samples nothing more. Otherwise
  (or with `native_video=False`) the frames go in as separate images, in order.
- Batching, sampling, OOM halving and results: see `_hf.BatchedChatGeneration`. Padding is on the
  left (`processor.tokenizer.padding_side = "left"`), so a batch decodes like single requests.
- `score_logprob` scores text with the language model alone (no images).

Options (besides those of `_hf`: device, device_map, dtype, attn_implementation, trust_remote_code):
    batch_size: requests per `generate` call (default 4).
    native_video: use the video processor when there is one (default True).
    processor_kwargs: extra keyword arguments for every processor call (e.g. {"images_kwargs": {...}}).
    chat_template: a Jinja template to use instead of the processor's.
"""

from __future__ import annotations

import logging
from typing import Any

from generation.backends import _hf
from generation.backends.base import BackendError, ChatRequest, ImagePart, TextPart, VideoPart

logger = logging.getLogger(__name__)

OPTIONS = (*_hf.LOAD_OPTIONS, "batch_size", "native_video", "processor_kwargs", "chat_template")
ADMIN_OPTIONS = _hf.ADMIN_OPTIONS


def video_metadata(part: VideoPart, frames: list) -> dict:
    """Metadata of the frames passed as a video: their count, size and frame rate.

    The rate is that of the frames given, not of the source: `fps` scaled by the mean spacing of
    `frame_indices` (8 frames taken 25 apart from a 25 fps clip are 1 frame per second).
    """
    count = len(frames)
    fps = float(part.fps) if part.fps and part.fps > 0 else 1.0
    indices = list(part.frame_indices)
    if len(indices) == count and count >= 2 and indices[-1] > indices[0]:
        fps = fps * (count - 1) / (indices[-1] - indices[0])
    width, height = frames[0].size
    return {"total_num_frames": count, "fps": fps, "frames_indices": list(range(count)),
            "duration": count / fps, "width": width, "height": height}


class TransformersVLM(_hf.BatchedChatGeneration):
    name = "transformers"

    def __init__(self, model_id: str, revision: str = "", *, device: str | None = None, device_map: Any = None,
                 dtype: Any = "auto", attn_implementation: str | None = None, batch_size: int = 4,
                 native_video: bool = True, processor_kwargs: dict | None = None, chat_template: str | None = None,
                 trust_remote_code: bool = False):
        from transformers import AutoModelForImageTextToText, AutoProcessor

        config = _hf.setup(self, model_id, revision, device=device, dtype=dtype, batch_size=batch_size,
                           trust_remote_code=trust_remote_code)
        self.processor_kwargs = dict(processor_kwargs or {})
        self.processor, self.model = _hf.load_pretrained(
            self, model_id, revision, config, preprocessor_cls=AutoProcessor, model_cls=AutoModelForImageTextToText,
            device_map=device_map,
            attn_implementation=attn_implementation, trust_remote_code=trust_remote_code)
        self.tokenizer = getattr(self.processor, "tokenizer", None)
        if self.tokenizer is None:
            raise BackendError(f"{self.name}: the processor of {model_id!r} has no tokenizer")
        self.tokenizer.padding_side = "left"
        # An explicit template, else the processor's own (None: it resolves its default, even among several).
        self.chat_template = chat_template
        if not chat_template and not getattr(self.processor, "chat_template", None):
            if not getattr(self.tokenizer, "chat_template", None):
                raise BackendError(f"{self.name}: {model_id!r} has no chat template (pass chat_template=...)")
            self.chat_template = self.tokenizer.chat_template
        self.native_video = bool(native_video) and self.has_video_processor
        self._input_device = _hf.input_device(self.model)

    @property
    def has_video_processor(self) -> bool:
        return getattr(self.processor, "video_processor", None) is not None and \
            getattr(self.processor, "video_token", None) is not None

    # -- prompts
    def conversation(self, request: ChatRequest) -> tuple[list[dict], list, list, list]:
        """HF chat messages for a request, and its images, videos and video metadata in order."""
        messages, images, videos, metadata = [], [], [], []
        for message in request.messages:
            content = []
            for part in message.parts:
                if isinstance(part, TextPart):
                    content.append({"type": "text", "text": part.text})
                elif isinstance(part, ImagePart):
                    content.append({"type": "image"})
                    images.append(_hf.to_rgb(part.image))
                elif isinstance(part, VideoPart):
                    frames = [_hf.to_rgb(frame) for frame in part.frames]
                    if not frames:
                        raise ValueError("a video part has no frames")
                    if self.native_video:
                        size = frames[0].size
                        frames = [f if f.size == size else f.resize(size) for f in frames]
                        content.append({"type": "video"})
                        videos.append(frames)
                        metadata.append(video_metadata(part, frames))
                    else:
                        content.extend({"type": "image"} for _ in frames)
                        images.extend(frames)
                else:
                    raise ValueError(f"unknown message part {type(part).__name__}")
            messages.append({"role": message.role, "content": content})
        return messages, images, videos, metadata

    def _prepare(self, index: int, request: ChatRequest) -> _hf.Prepared:
        messages, images, videos, metadata = self.conversation(request)
        prompt = self.processor.apply_chat_template(messages, chat_template=self.chat_template,
                                                    add_generation_prompt=True, tokenize=False)
        size = len(self.tokenizer(prompt, add_special_tokens=False)["input_ids"])
        size += self._media_tokens(images, videos)
        return _hf.Prepared(index, request, prompt, size, images, videos, metadata)

    def _media_tokens(self, images: list, videos: list) -> int:
        """About how many input tokens the media take (to sort requests by input size)."""
        if not images and not videos:
            return 0
        sizes: dict[str, list] = {}
        if images:
            sizes["image_sizes"] = [(image.height, image.width) for image in images]
        if videos:
            sizes["video_sizes"] = [(len(frames), frames[0].height, frames[0].width) for frames in videos]
        try:
            data = self.processor._get_num_multimodal_tokens(**sizes)
            total = sum(data.num_image_tokens or []) if images else 0
            total += sum(data.num_video_tokens or []) if videos else 0
            return int(total)
        except Exception:  # noqa: BLE001 - only an estimate: fall back to pixels / (28 x 28)
            pixels = sum(i.width * i.height for i in images) + sum(len(v) * v[0].width * v[0].height for v in videos)
            return pixels // 784

    def _encode(self, batch: list[_hf.Prepared]):
        import torch

        kwargs: dict[str, Any] = dict(self.processor_kwargs)
        if any(item.images for item in batch):
            kwargs["images"] = [item.images for item in batch]
        if any(item.videos for item in batch):
            kwargs["videos"] = [video for item in batch for video in item.videos]
            kwargs["video_metadata"] = [meta for item in batch for meta in item.video_metadata]
        inputs = self.processor(text=[item.prompt for item in batch], padding=True, return_tensors="pt", **kwargs)
        moved = {}
        for key, value in inputs.items():
            if isinstance(value, torch.Tensor):
                value = value.to(self._input_device)
                if value.is_floating_point():
                    value = value.to(self.model.dtype)
            moved[key] = value
        return moved

    # -- scoring
    def score_logprob(self, texts: list[str], *, prefix: str = "") -> list[float]:
        """Length-normalised log-probability of each text after `prefix`, by the language model alone."""
        return _hf.score_logprob(self.model, self.tokenizer, texts, prefix, batch_size=self.batch_size,
                                 label=self._label)
