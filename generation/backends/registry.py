"""Backends by name. Each module registers its loader; loading is lazy so that importing the
platform does not import torch."""

import importlib

from generation.backends import _hf

LOADERS = {
    # name: (module, class)
    "transformers": ("generation.backends.transformers_vlm", "TransformersVLM"),
    "causal_lm": ("generation.backends.text_lm", "CausalLM"),
    "openai": ("generation.backends.openai_chat", "OpenAIChat"),
    "nli": ("generation.backends.nli", "NLIClassifier"),
    "clip": ("generation.backends.clip", "ClipEncoder"),
}


def load_backend(name: str, model_id: str, *, revision: str = "", **options):
    """Load a backend by name with a hub id or a local folder (`from_pretrained` either way)."""
    try:
        module_name, class_name = LOADERS[name]
    except KeyError:
        raise ValueError(f"Unknown backend {name!r}; choose one of {', '.join(sorted(LOADERS))}.") from None
    cls = getattr(importlib.import_module(module_name), class_name)
    return cls(model_id, revision=revision, **options)


def close_backend(backend) -> None:
    """Release what a backend holds open (the OpenAI-compatible backend's kept-alive connections);
    backends without a `close` (local models) are left to the garbage collector."""
    close = getattr(backend, "close", None)
    if callable(close):
        close()


HF_BACKENDS = ("transformers", "causal_lm", "nli", "clip")


def resolve_revision(name: str, model_id: str, revision: str = "") -> str:
    """The revision a model resolves to, without loading its weights: for Hugging Face backends the
    hub commit, a local checkout's commit, or "local" (read from the config); otherwise as given.
    Raises BackendError when the model cannot be found."""
    if name not in HF_BACKENDS:
        return revision or ""

    return _hf.resolve_revision(model_id, revision, _hf.load_config(name, model_id, revision))
