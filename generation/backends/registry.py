"""Backends by name. Each module registers its loader; loading is lazy so that importing the
platform does not import torch."""

import importlib

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
