"""The response cache: deterministic requests are answered once per (model, revision, backend,
full prompt, input fingerprints, generation parameters); failed or empty answers are never kept.

A row's `texts` is the list of texts; when NUL characters were removed from them (`generation.model_text`) it is
`{"texts": [...], "nul_removed": [count per text]}`, so that an answer taken from the cache is counted as the
model's own was (`texts_of` reads both)."""

import hashlib
import json

from evaluation.models import ResponseCache
from generation import model_text
from generation.backends.base import ChatRequest, ChatResult


def cache_key(*, model_id: str, revision: str, backend: str, request: ChatRequest, backend_options: dict) -> str:
    record = {
        "model": model_id, "revision": revision, "backend": backend,
        "options": {k: v for k, v in sorted(backend_options.items()) if k not in {"api_key_env", "max_concurrency",
                                                                                    "batch_size", "timeout"}},
        "prompt": request.describe(), "params": request.params.as_dict(),
    }
    return hashlib.sha256(json.dumps(record, sort_keys=True, default=str).encode()).hexdigest()


def cacheable(request: ChatRequest) -> bool:
    """Sampled responses are not reproducible unless seeded; only greedy single answers are cached."""
    return not request.params.sampling


def lookup(keys: list[str]) -> dict[str, ResponseCache]:
    return {row.key: row for row in ResponseCache.objects.filter(key__in=keys)}


def texts_of(row: ResponseCache) -> tuple[list[str], list[int]]:
    """A cached answer's texts, and the NUL characters removed from each (empty when none were)."""
    if isinstance(row.texts, dict):
        return list(row.texts["texts"]), list(row.texts.get(model_text.NUL_KEY, []))
    return list(row.texts), []


def store(key: str, *, model_id: str, revision: str, backend: str, result: ChatResult) -> None:
    if not result.ok:
        return
    texts = ({"texts": result.texts, model_text.NUL_KEY: result.nul_removed} if any(result.nul_removed)
             else result.texts)
    # get_or_create: another worker may store the same answer first
    ResponseCache.objects.get_or_create(key=key, defaults={
        "model_id": model_id, "model_revision": revision, "backend": backend, "texts": texts,
        "prompt_tokens": result.prompt_tokens, "completion_tokens": result.completion_tokens,
    })
