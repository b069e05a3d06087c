"""Backends by name. Each module registers its loader; loading is lazy so that importing the
platform does not import torch.

Options: each backend's module declares the options people may pass (`OPTIONS`) and those only an
admin may set, on a model's registry entry (`ADMIN_OPTIONS`: what runs the model folder's own code,
picks a URL, a path or an environment variable); `check_options` is the one check pages, the API
and the commands use. Two kinds of model are picked from the registry without loading through
`load_backend`: `diffusion` (image generation, `generation.diffusion`) and `bertscore` (BERTScore
reads a transformers encoder; `evaluation.similarity`).
"""

import importlib
import threading

from generation.backends import _hf

LOADERS = {
    # name: (module, class)
    "transformers": ("generation.backends.transformers_vlm", "TransformersVLM"),
    "causal_lm": ("generation.backends.text_lm", "CausalLM"),
    "openai": ("generation.backends.openai_chat", "OpenAIChat"),
    "nli": ("generation.backends.nli", "NLIClassifier"),
    "clip": ("generation.backends.clip", "ClipEncoder"),
}


# model kinds with a registry entry that do not load through `load_backend`, with their option modules
# (BERTScore's options are listed here: its loader lives in `evaluation`, which this layer cannot import)
OTHER_KINDS = {"diffusion": "generation.diffusion", "bertscore": None}
BERTSCORE_OPTIONS = ("device", "num_layers")
MODEL_BACKENDS = (*LOADERS, *OTHER_KINDS)


class OptionError(ValueError):
    """An option the backend does not take, or one that only an admin may set; the message names it."""


def option_rules(name: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(options people may pass, options only an admin may set) of a backend or model kind."""
    if name == "bertscore":
        return BERTSCORE_OPTIONS, ()
    if name in LOADERS:
        module_name = LOADERS[name][0]
    elif name in OTHER_KINDS:
        module_name = OTHER_KINDS[name]
    else:
        raise OptionError(f"Unknown backend {name!r}; choose one of {', '.join(MODEL_BACKENDS)}.")
    module = importlib.import_module(module_name)
    return tuple(getattr(module, "OPTIONS", ())), tuple(getattr(module, "ADMIN_OPTIONS", ()))


def check_options(name: str, options: dict, *, admin: bool = False, allowed: tuple | list | None = None) -> dict:
    """`options` if the backend takes every one of them and the caller may set them; OptionError naming
    the first one refused otherwise. `allowed` narrows the options people may pass (a registry entry's
    list); admin-only options pass only with `admin`."""
    if not isinstance(options, dict):
        raise OptionError("Backend options are key=value pairs (a JSON object).")
    people, admins = option_rules(name)
    narrowed = set(people) if not allowed else set(people) & set(allowed)
    for key in options:
        if key in admins:
            if not admin:
                raise OptionError(f"The option {key!r} is set by an admin on the model's registry entry; "
                                  f"it cannot be passed here.")
        elif key not in people:
            known = ", ".join(sorted(people)) or "none"
            raise OptionError(f"Unknown option {key!r} for the {name} backend; it takes: {known}.")
        elif key not in narrowed:
            raise OptionError(f"The option {key!r} is not allowed for this model; allowed: "
                              f"{', '.join(sorted(narrowed)) or 'none'}.")
    return dict(options)


def generate(backend, requests: list, *, stop: threading.Event | None = None) -> list:
    """`backend.generate(requests)`, giving `stop` to backends that wait on servers (`accepts_stop`):
    once it is set they make no further attempt and stop waiting to retry."""
    if stop is not None and getattr(backend, "accepts_stop", False):
        return backend.generate(requests, stop=stop)
    return backend.generate(requests)


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
