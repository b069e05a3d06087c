"""A local text-only language model through `transformers`: `AutoTokenizer` + `AutoModelForCausalLM`.

- `generate`: chat generation with the tokenizer's chat template (or `chat_template=`), batched
  with left padding like the VLM backend (see `_hf.BatchedChatGeneration`). Requests must be
  text-only, unless `ignore_media=True`, which drops their images and videos (a "blind" baseline).
- `chat_prompt(request)`: the templated prompt `generate` continues (judges' `choices` decoding
  scores each allowed answer after it).
- `score_logprob(texts, prefix)`: the mean log-probability per token of each text given the
  prefix (length-normalised), in batched forward passes (see `_hf.score_logprob`).

Options (besides those of `_hf`: device, device_map, dtype, attn_implementation, trust_remote_code):
    batch_size: requests per `generate` call / texts per scoring forward pass (default 8).
    chat_template: a Jinja template to use instead of the tokenizer's.
    ignore_media: drop image and video parts instead of failing the request (default False).
"""

from __future__ import annotations

from typing import Any

from generation.backends import _hf
from generation.backends.base import BackendError, ChatRequest, TextPart

OPTIONS = (*_hf.LOAD_OPTIONS, "batch_size", "chat_template", "ignore_media")
ADMIN_OPTIONS = _hf.ADMIN_OPTIONS


class CausalLM(_hf.BatchedChatGeneration):
    name = "causal_lm"

    def __init__(self, model_id: str, revision: str = "", *, device: str | None = None, device_map: Any = None,
                 dtype: Any = "auto", attn_implementation: str | None = None, batch_size: int = 8,
                 chat_template: str | None = None, ignore_media: bool = False, trust_remote_code: bool = False):
        from transformers import AutoModelForCausalLM, AutoTokenizer

        config = _hf.setup(self, model_id, revision, device=device, dtype=dtype, batch_size=batch_size,
                           trust_remote_code=trust_remote_code)
        self.ignore_media = bool(ignore_media)
        self.tokenizer, self.model = _hf.load_pretrained(
            self, model_id, revision, config, preprocessor_cls=AutoTokenizer, model_cls=AutoModelForCausalLM,
            device_map=device_map,
            attn_implementation=attn_implementation, trust_remote_code=trust_remote_code)
        self.tokenizer.padding_side = "left"
        if self.tokenizer.pad_token is None and self.tokenizer.eos_token is not None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.chat_template = chat_template  # None: the tokenizer's own (it resolves its default)
        self._input_device = _hf.input_device(self.model)

    def _prepare(self, index: int, request: ChatRequest) -> _hf.Prepared:
        prompt = self.chat_prompt(request)
        size = len(self.tokenizer(prompt, add_special_tokens=False)["input_ids"])
        return _hf.Prepared(index, request, prompt, size)

    def chat_prompt(self, request: ChatRequest) -> str:
        """The request's messages through the chat template, ending where the answer begins."""
        if not (self.chat_template or getattr(self.tokenizer, "chat_template", None)):
            raise BackendError(f"{self.model_id!r} has no chat template (pass chat_template=...)")
        messages = []
        for message in request.messages:
            texts = []
            for part in message.parts:
                if isinstance(part, TextPart):
                    texts.append(part.text)
                elif not self.ignore_media:
                    raise ValueError(f"this backend is text-only and the request has a {part.type} part "
                                     "(use ignore_media=True to drop media)")
            messages.append({"role": message.role, "content": "".join(texts)})
        return self.tokenizer.apply_chat_template(messages, chat_template=self.chat_template,
                                                  add_generation_prompt=True, tokenize=False)

    def _encode(self, batch: list[_hf.Prepared]):
        # Like `tokenizer.apply_chat_template(tokenize=True)`: the template writes any BOS itself.
        inputs = self.tokenizer([item.prompt for item in batch], padding=True, add_special_tokens=False,
                                return_tensors="pt")
        return {key: value.to(self._input_device) for key, value in inputs.items()}

    def score_logprob(self, texts: list[str], *, prefix: str = "") -> list[float]:
        return _hf.score_logprob(self.model, self.tokenizer, texts, prefix, batch_size=self.batch_size,
                                 label=self._label)
