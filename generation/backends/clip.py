"""A CLIP-style dual encoder through `transformers`: `AutoProcessor` + `AutoModel` (CLIP, SigLIP, ...).

`encode_text(texts)` and `encode_images(images)` return L2-normalised float32 numpy arrays of
shape (N, D); `cosine(a, b)` is their similarity matrix (or a float for two single vectors).

Options (besides those of `_hf`: device, device_map, dtype, attn_implementation, trust_remote_code):
    batch_size: texts or images per forward pass (default 32).
"""

from __future__ import annotations

from typing import Any

from generation.backends import _hf
from generation.backends.base import BackendError

OPTIONS = (*_hf.LOAD_OPTIONS, "batch_size")
ADMIN_OPTIONS = _hf.ADMIN_OPTIONS


def _features(output):
    """`get_*_features` return a tensor in older transformers and a model output (pooler_output) in v5."""
    return output if not hasattr(output, "pooler_output") else output.pooler_output


class ClipEncoder:
    name = "clip"

    def __init__(self, model_id: str, revision: str = "", *, device: str | None = None, device_map: Any = None,
                 dtype: Any = "auto", attn_implementation: str | None = None, batch_size: int = 32,
                 trust_remote_code: bool = False):
        from transformers import AutoModel, AutoProcessor

        config = _hf.setup(self, model_id, revision, device=device, dtype=dtype, batch_size=batch_size,
                           trust_remote_code=trust_remote_code)
        self.processor, self.model = _hf.load_pretrained(
            self, model_id, revision, config, preprocessor_cls=AutoProcessor, model_cls=AutoModel,
            device_map=device_map,
            attn_implementation=attn_implementation, trust_remote_code=trust_remote_code)
        if not (hasattr(self.model, "get_text_features") and hasattr(self.model, "get_image_features")):
            raise BackendError(f"{self.name}: {model_id!r} ({type(self.model).__name__}) is not a dual encoder")
        self._input_device = _hf.input_device(self.model)

    def _encode(self, items: list, encode) -> Any:
        import numpy as np
        import torch

        chunks: list = [None] * len(items)

        def run(batch: list[int]) -> None:
            with torch.inference_mode():
                features = _features(encode([items[i] for i in batch])).float()
                features = torch.nn.functional.normalize(features, dim=-1).cpu().numpy()
            for row, i in enumerate(batch):
                chunks[i] = features[row]

        def fail(batch: list[int], exc: BaseException) -> None:
            raise BackendError(_hf.error_text(f"{self.name} ({self.model_id})", exc)) from exc

        _hf.run_batches(list(range(len(items))), self.batch_size, run, fail, label=f"{self.name} ({self.model_id})")
        if not items:
            dim = getattr(self.model.config, "projection_dim", 0) or 0
            return np.zeros((0, dim), dtype=np.float32)
        return np.stack(chunks).astype(np.float32)

    def encode_text(self, texts: list[str]):
        """L2-normalised text embeddings, shape (len(texts), D)."""
        def encode(batch):
            inputs = self.processor(text=batch, padding=True, truncation=True, return_tensors="pt")
            inputs = {k: v.to(self._input_device) for k, v in inputs.items() if k in ("input_ids", "attention_mask")}
            return self.model.get_text_features(**inputs)

        return self._encode(list(texts), encode)

    def encode_images(self, images: list):
        """L2-normalised image embeddings (PIL images or HxWx3 arrays), shape (len(images), D)."""
        def encode(batch):
            inputs = self.processor(images=[_hf.to_rgb(image) for image in batch], return_tensors="pt")
            pixels = inputs["pixel_values"].to(self._input_device, dtype=self.model.dtype)
            return self.model.get_image_features(pixel_values=pixels)

        return self._encode(list(images), encode)

    @staticmethod
    def cosine(a, b):
        """Cosine similarity: a float for two vectors, else the (len(a), len(b)) matrix."""
        import numpy as np

        a = np.asarray(a, dtype=np.float32)
        b = np.asarray(b, dtype=np.float32)
        single = a.ndim == 1 and b.ndim == 1
        a2, b2 = np.atleast_2d(a), np.atleast_2d(b)
        a2 = a2 / np.clip(np.linalg.norm(a2, axis=-1, keepdims=True), 1e-12, None)
        b2 = b2 / np.clip(np.linalg.norm(b2, axis=-1, keepdims=True), 1e-12, None)
        sims = a2 @ b2.T
        return float(sims[0, 0]) if single else sims
