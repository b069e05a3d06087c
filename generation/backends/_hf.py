"""Shared helpers of the Hugging Face (`transformers`) backends: where a model comes from (hub id or
local folder), which revision that is, device and dtype, fail-fast loading errors, OOM-adaptive
batching and length-normalised log-probability scoring.

Loading options understood by every HF backend (passed through `load_backend(..., **options)`):

- `device`: "cuda", "cuda:1", "cpu", "mps" or "auto" (shard across the visible GPUs with
  `device_map="auto"`); default: "cuda" when available, else "cpu".
- `device_map`: passed to `from_pretrained` as is (wins over `device`).
- `dtype`: "auto" (default: bfloat16 on a GPU that supports it, else float16 on GPU; float32 on
  CPU), "bfloat16"/"bf16", "float16"/"fp16", "float32"/"fp32". Half precision is a GPU thing:
  on CPU the model always runs in float32.
- `attn_implementation`: "sdpa", "eager", "flash_attention_2", ... (default: transformers' choice).
- `trust_remote_code`: default False.

Revision: the one given; else, for a local folder, the commit it was checked out at (a git clone
of a hub repo, or a snapshot folder of the HF cache), else "local"; for a hub id the commit hash
that was resolved (from the cache when offline).
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from generation.backends.base import BackendError, ChatResult

logger = logging.getLogger(__name__)

# The loading options above that people may pass (`registry.check_options`); `trust_remote_code` runs the
# model folder's own Python on the worker, so only an admin sets it (on the model's registry entry).
LOAD_OPTIONS = ("device", "device_map", "dtype", "attn_implementation")
ADMIN_OPTIONS = ("trust_remote_code",)

_HEX40 = re.compile(r"[0-9a-f]{40}")
_TRUE = {"1", "true", "yes", "on"}

DTYPE_NAMES = {
    "bfloat16": "bfloat16", "bf16": "bfloat16",
    "float16": "float16", "fp16": "float16", "half": "float16",
    "float32": "float32", "fp32": "float32", "float": "float32",
}


def to_rgb(image):
    """A PIL RGB image from a PIL image (any mode) or an HxWx3 array."""
    from PIL import Image

    if not isinstance(image, Image.Image):
        image = Image.fromarray(image)
    return image if image.mode == "RGB" else image.convert("RGB")


def hub_offline() -> bool:
    return any(os.environ.get(name, "").strip().lower() in _TRUE for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"))


def local_path(model_id: str) -> Path | None:
    """The folder `model_id` names, if it is one on this machine."""
    path = Path(os.path.expanduser(str(model_id)))
    return path if path.is_dir() else None


def _looks_like_path(model_id: str) -> bool:
    """A filesystem path rather than a hub id ("name" or "org/name")."""
    return model_id.startswith(("/", ".", "~")) or model_id.count("/") > 1 or "\\" in model_id


def local_commit_hash(path: Path) -> str | None:
    """The commit a local model folder holds: a HF-cache snapshot folder, or a git checkout's HEAD."""
    path = path.resolve()
    if path.parent.name == "snapshots" and _HEX40.fullmatch(path.name):
        return path.name
    git = path / ".git"
    if git.is_file():  # a worktree / submodule: "gitdir: <path>"
        text = git.read_text().strip()
        if text.startswith("gitdir:"):
            git = (path / text.split(":", 1)[1].strip()).resolve()
    if not git.is_dir():
        return None
    try:
        head = (git / "HEAD").read_text().strip()
    except OSError:
        return None
    if _HEX40.fullmatch(head):
        return head
    if head.startswith("ref:"):
        ref = head.split(":", 1)[1].strip()
        ref_file = git / ref
        if ref_file.is_file():
            value = ref_file.read_text().strip()
            return value if _HEX40.fullmatch(value) else None
        packed = git / "packed-refs"
        if packed.is_file():
            for line in packed.read_text().splitlines():
                parts = line.split()
                if len(parts) == 2 and parts[1] == ref and _HEX40.fullmatch(parts[0]):
                    return parts[0]
    return None


def resolve_revision(model_id: str, revision: str = "", config: Any = None) -> str:
    """The revision to record for a loaded model (see the module docstring)."""
    if revision:
        return revision
    path = local_path(model_id)
    if path is not None:
        return local_commit_hash(path) or "local"
    commit = getattr(config, "_commit_hash", None) if config is not None else None
    return commit or "main"


def resolve_device(device: str | None) -> str:
    import torch

    if device in (None, ""):
        return "cuda" if torch.cuda.is_available() else "cpu"
    return str(device)


def resolve_dtype(dtype: Any, device: str):
    """A torch dtype for `dtype` on `device` (see the module docstring)."""
    import torch

    on_gpu = not str(device).startswith(("cpu", "mps")) and torch.cuda.is_available()
    if isinstance(dtype, torch.dtype):
        name = str(dtype).removeprefix("torch.")
    elif dtype in (None, "", "auto"):
        if not on_gpu:
            return torch.float32
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    else:
        name = DTYPE_NAMES.get(str(dtype).lower().removeprefix("torch."))
        if name is None:
            raise BackendError(f"Unknown dtype {dtype!r}; use auto, bfloat16, float16 or float32.")
    if name != "float32" and not on_gpu:
        logger.warning("dtype %s asked for on %s: using float32 (half precision is only used on a GPU)", name, device)
        return torch.float32
    return getattr(torch, name)


def device_map_for(device: str, device_map: Any = None) -> Any:
    if device_map is not None:
        return device_map
    return "auto" if device == "auto" else device


def load_config(backend: str, model_id: str, revision: str = "", *, trust_remote_code: bool = False):
    """The model's config, or a clear BackendError at once when the model cannot be found.

    Loading the (small) config first makes an unknown hub id, a missing folder or an offline miss
    fail in milliseconds, before any processor or weights are touched.
    """
    from transformers import AutoConfig

    if not model_id:
        raise BackendError(f"{backend}: a model id (hub id or local folder) is required")
    at = f" at revision {revision!r}" if revision else ""
    if local_path(model_id) is None and _looks_like_path(model_id):
        raise BackendError(f"{backend}: model folder {model_id!r} does not exist")
    try:
        return AutoConfig.from_pretrained(model_id, revision=revision or None, trust_remote_code=trust_remote_code)
    except (OSError, ValueError, KeyError) as exc:
        if local_path(model_id) is not None:
            reason = f"the folder has no loadable config.json ({type(exc).__name__}: {_first_line(exc)})"
        elif hub_offline():
            reason = ("HF_HUB_OFFLINE=1 and it is not in the local Hugging Face cache (download it first, "
                      "or pass a local folder)")
        else:
            reason = f"not found on the hub or not accessible ({type(exc).__name__}: {_first_line(exc)})"
        raise BackendError(f"{backend}: cannot load {model_id!r}{at}: {reason}") from exc


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else ""


def pretrained_kwargs(revision: str, *, device: str, dtype, device_map: Any = None,
                      attn_implementation: str | None = None, trust_remote_code: bool = False) -> dict:
    kwargs = {
        "revision": revision or None,
        "dtype": dtype,
        "device_map": device_map_for(device, device_map),
        "trust_remote_code": trust_remote_code,
    }
    if attn_implementation:
        kwargs["attn_implementation"] = attn_implementation
    return kwargs


def setup(backend, model_id: str, revision: str, *, device: str | None, dtype: Any, batch_size: int,
          trust_remote_code: bool = False):
    """Common first steps of every local backend: check options, find the model, pick device and
    dtype (set on the backend); return the model's config."""
    if batch_size < 1:
        raise BackendError(f"{backend.name}: batch_size must be at least 1")
    backend.model_id = model_id
    config = load_config(backend.name, model_id, revision, trust_remote_code=trust_remote_code)
    backend.revision = resolve_revision(model_id, revision, config)
    backend.device = resolve_device(device)
    backend.dtype = resolve_dtype(dtype, backend.device)
    backend.batch_size = int(batch_size)
    return config


def load_pretrained(backend, model_id: str, revision: str, config, *, preprocessor_cls, model_cls,
                    device_map: Any = None, attn_implementation: str | None = None, trust_remote_code: bool = False):
    """Load (processor or tokenizer, model) with `from_pretrained`, model in eval mode."""
    try:
        preprocessor = preprocessor_cls.from_pretrained(model_id, revision=revision or None,
                                                        trust_remote_code=trust_remote_code)
        model = model_cls.from_pretrained(model_id, config=config, **pretrained_kwargs(
            revision, device=backend.device, dtype=backend.dtype, device_map=device_map,
            attn_implementation=attn_implementation, trust_remote_code=trust_remote_code))
    except (OSError, ValueError, KeyError, ImportError) as exc:
        raise BackendError(f"{backend.name}: cannot load {model_id!r}: {type(exc).__name__}: {exc}") from exc
    model.eval()
    return preprocessor, model


def input_device(model) -> Any:
    """Where inputs go: the device of the input embeddings (the first shard with device_map="auto")."""
    try:
        return model.get_input_embeddings().weight.device
    except (AttributeError, NotImplementedError):
        return model.device


def is_oom(exc: BaseException) -> bool:
    import torch

    return isinstance(exc, torch.cuda.OutOfMemoryError)


def free_cuda_memory() -> None:
    import gc

    import torch

    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def run_batches(items: Sequence, batch_size: int, run: Callable[[list], None],
                fail: Callable[[list, BaseException], None], *, label: str = "") -> None:
    """Run `run(batch)` over consecutive batches of `items` of at most `batch_size`.

    On a CUDA out-of-memory error the batch is halved and retried (and later batches of this call
    keep the smaller size); a single item that still runs out of memory, or any other exception,
    goes to `fail(batch, exc)` so that the other batches still run.
    """
    size = max(1, int(batch_size))
    start = 0
    while start < len(items):
        batch = list(items[start:start + size])
        try:
            run(batch)
        except Exception as exc:  # noqa: BLE001 - one failed batch must not kill the call
            if is_oom(exc):
                free_cuda_memory()
                if len(batch) > 1:
                    size = max(1, len(batch) // 2)
                    logger.warning("%sCUDA out of memory with a batch of %d: retrying with %d",
                                   f"{label}: " if label else "", len(batch), size)
                    continue
            logger.warning("%sbatch of %d failed: %s: %s", f"{label}: " if label else "", len(batch),
                           type(exc).__name__, exc)
            fail(batch, exc)
        start += len(batch)


def error_text(label: str, exc: BaseException) -> str:
    if is_oom(exc):
        return f"{label}: CUDA out of memory even with a batch of one request: {_first_line(exc)}"
    return f"{label}: {type(exc).__name__}: {_first_line(exc)}"


# --- Log-probability scoring ------------------------------------------------------------------

def score_logprob(model, tokenizer, texts: Sequence[str], prefix: str = "", *, batch_size: int = 8,
                  label: str = "") -> list[float]:
    """Mean log-probability per token of each text given `prefix` (length-normalised), batched.

    The prefix and each text are tokenised separately and concatenated (a BOS token first when the
    tokenizer has one), so whitespace between them belongs in the text (" yes" after "Answer:").
    With neither prefix nor BOS, the end-of-text token stands in as the start of the document;
    a tokenizer without either leaves the first token unscored. An empty text scores NaN.
    """
    import torch

    if not texts:
        return []
    context: list[int] = []
    if tokenizer.bos_token_id is not None:
        context.append(tokenizer.bos_token_id)
    if prefix:
        context += tokenizer(prefix, add_special_tokens=False)["input_ids"]
    if not context and tokenizer.eos_token_id is not None:
        context.append(tokenizer.eos_token_id)
    encoded = [tokenizer(text, add_special_tokens=False)["input_ids"] for text in texts]
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else (tokenizer.eos_token_id or 0)
    device = input_device(model)
    scores: list[float] = [float("nan")] * len(texts)
    order = sorted(range(len(texts)), key=lambda i: len(encoded[i]))
    order = [i for i in order if encoded[i]]

    def run(batch: list[int]) -> None:
        sequences = [context + encoded[i] for i in batch]
        width = max(len(s) for s in sequences)
        ids = torch.full((len(batch), width), pad_id, dtype=torch.long)
        mask = torch.zeros((len(batch), width), dtype=torch.long)
        for row, seq in enumerate(sequences):  # right padding: positions of real tokens are unchanged
            ids[row, :len(seq)] = torch.tensor(seq, dtype=torch.long)
            mask[row, :len(seq)] = 1
        with torch.inference_mode():
            logits = model(input_ids=ids.to(device), attention_mask=mask.to(device)).logits
        for row, i in enumerate(batch):
            first = max(len(context), 1)  # the first token that has something before it
            last = len(sequences[row])
            if first >= last:
                continue
            targets = ids[row, first:last].to(logits.device)
            logprobs = logits[row, first - 1:last - 1].float().log_softmax(-1)
            scores[i] = logprobs.gather(-1, targets[:, None]).mean().item()

    def fail(batch: list[int], exc: BaseException) -> None:
        raise BackendError(error_text(f"{label or 'score_logprob'}", exc)) from exc

    run_batches(order, batch_size, run, fail, label=label)
    return scores


# --- Batched chat generation (shared by the VLM and the text LM backends) -----------------------

class Prepared:
    """One request turned into a prompt (plus media), with an estimate of its input length."""

    __slots__ = ("index", "request", "prompt", "size", "images", "videos", "video_metadata")

    def __init__(self, index: int, request, prompt: str, size: int, images=None, videos=None, video_metadata=None):
        self.index = index
        self.request = request
        self.prompt = prompt
        self.size = size
        self.images = images or []
        self.videos = videos or []
        self.video_metadata = video_metadata or []


def check_params(params) -> None:
    if params.n < 1:
        raise ValueError(f"n must be at least 1, got {params.n}")
    if params.max_new_tokens < 1:
        raise ValueError(f"max_new_tokens must be at least 1, got {params.max_new_tokens}")
    if params.temperature < 0:
        raise ValueError(f"temperature must not be negative, got {params.temperature}")
    if not 0 < params.top_p <= 1:
        raise ValueError(f"top_p must be in (0, 1], got {params.top_p}")


def params_key(params) -> tuple:
    return (params.max_new_tokens, float(params.temperature), float(params.top_p), params.n, params.seed)


class BatchedChatGeneration:
    """`generate()` over a list of requests: group by generation parameters, sort by input size
    (to limit padding), run in left-padded batches of `batch_size` (halved on CUDA OOM), and put
    the results back in request order. Subclasses implement `_prepare` and `_encode`.

    Greedy decoding unless `n > 1` or `temperature > 0`; then sampling with `num_return_sequences=n`,
    the request's temperature (1.0 when 0 with n > 1) and top_p, top_k off (a hub generation
    config's top_k would otherwise override them), after `torch.manual_seed(seed)` for each batch.
    Other defaults of the model's generation config (repetition penalty, ...) still apply.
    `latency_s` of a result is the wall time of the batch it ran in.
    """

    name = "hf"
    model_id = ""
    revision = ""
    batch_size = 8

    model: Any
    tokenizer: Any

    # -- to implement
    def _prepare(self, index: int, request) -> Prepared:
        raise NotImplementedError

    def _encode(self, batch: list[Prepared]):
        """Model inputs (input_ids, attention_mask, pixel values, ...) for a batch, on the model's device."""
        raise NotImplementedError

    # -- shared
    @property
    def _label(self) -> str:
        return f"{self.name} ({self.model_id})"

    def _stop_ids(self) -> set[int]:
        ids: set[int] = set()
        eos = getattr(self.model.generation_config, "eos_token_id", None)
        if isinstance(eos, int):
            ids.add(eos)
        elif eos:
            ids.update(int(e) for e in eos)
        if self.tokenizer.eos_token_id is not None:
            ids.add(self.tokenizer.eos_token_id)
        return ids

    def _pad_id(self) -> int | None:
        pad = getattr(self.model.generation_config, "pad_token_id", None)
        if pad is None:
            pad = self.tokenizer.pad_token_id
        if pad is None:
            pad = self.tokenizer.eos_token_id
        return pad

    def _generation_kwargs(self, params) -> dict:
        kwargs: dict[str, Any] = {"max_new_tokens": params.max_new_tokens}
        pad = self._pad_id()
        if pad is not None:
            kwargs["pad_token_id"] = pad
        if params.sampling:
            kwargs.update(do_sample=True, temperature=params.temperature if params.temperature > 0 else 1.0,
                          top_p=params.top_p, top_k=0, num_return_sequences=params.n)
        else:
            kwargs.update(do_sample=False, num_beams=1, temperature=None, top_p=None, top_k=None)
        return kwargs

    def generate(self, requests: list) -> list:
        results: list = [None] * len(requests)
        groups: dict[tuple, list[Prepared]] = {}
        for index, request in enumerate(requests):
            try:
                check_params(request.params)
                prepared = self._prepare(index, request)
            except Exception as exc:  # noqa: BLE001 - a bad request gives an error result
                results[index] = ChatResult(texts=[], error=error_text(f"{self._label}: could not prepare the request",
                                                                       exc))
                continue
            groups.setdefault(params_key(request.params), []).append(prepared)

        def fail(batch: list[Prepared], exc: BaseException) -> None:
            for item in batch:
                results[item.index] = ChatResult(texts=[], error=error_text(self._label, exc))

        def run(batch: list[Prepared]) -> None:
            import time

            started = time.monotonic()
            batch_results = self._generate_batch(batch)
            latency = time.monotonic() - started
            for item, result in zip(batch, batch_results, strict=True):
                result.latency_s = latency
                results[item.index] = result

        for items in groups.values():
            items.sort(key=lambda item: item.size)  # stable: equal sizes keep the request order
            run_batches(items, self.batch_size, run, fail, label=self._label)
        return results

    def _generate_batch(self, batch: list[Prepared]) -> list:
        """One `model.generate` call over a batch: the inner step (a CUDA OOM here halves the batch)."""
        import torch

        params = batch[0].request.params
        inputs = self._encode(batch)
        input_length = inputs["input_ids"].shape[1]
        torch.manual_seed(params.seed)
        with torch.inference_mode():
            output = self.model.generate(**inputs, **self._generation_kwargs(params))
        sequences = output.sequences if hasattr(output, "sequences") else output
        new_tokens = sequences[:, input_length:].cpu()
        texts = self.tokenizer.batch_decode(new_tokens, skip_special_tokens=True)
        stop = self._stop_ids()
        n = params.n
        prompt_tokens = inputs["attention_mask"].sum(dim=1).tolist()
        results = []
        for row in range(len(batch)):
            rows = range(row * n, (row + 1) * n)
            results.append(ChatResult(
                texts=[texts[r].strip() for r in rows],
                prompt_tokens=int(prompt_tokens[row]),
                completion_tokens=sum(_count_generated(new_tokens[r].tolist(), stop) for r in rows),
            ))
        return results


def _count_generated(tokens: list[int], stop: set[int]) -> int:
    """Generated tokens up to and including the first end-of-text token (the rest is padding)."""
    for position, token in enumerate(tokens):
        if token in stop:
            return position + 1
    return len(tokens)
