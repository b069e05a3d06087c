"""Registering models in the model registry for tests (`generation.model_registry`), as an admin would:
pages, the API and the commands only run registered models. The `register_model` and `tiny_registry`
fixtures of conftest use these."""

from pathlib import Path

from generation import model_registry
from generation.backends import registry
from generation.registered_models import USE_BACKENDS, RegisteredModel
from generation.tiny_models import TINY_MODEL_NAMES


def register_model(model_id: str, *, backend: str, uses=None, name: str = "", **fields) -> RegisteredModel:
    """Register `model_id` (named `name`, by default from the model id) for `uses` (default: every use its backend
    fits). A test double's backend (installed in the backend registry for the test) is stored as it is."""
    name = name or "".join(ch if ch.isalnum() or ch in "._-" else "-" for ch in str(model_id).strip("/"))[-100:]
    name = name.lstrip("._-") or "model"
    if uses is None:
        uses = [use for use, backends in USE_BACKENDS.items() if backend in backends] or list(USE_BACKENDS)
    if backend in registry.MODEL_BACKENDS:
        return model_registry.register(name, backend=backend, model_id=str(model_id), uses=uses, **fields)
    entry, _ = RegisteredModel.objects.update_or_create(
        name=name, defaults={"backend": backend, "model_id": str(model_id), "uses": list(uses), **fields})
    return entry


def register_tiny_models(folder: Path) -> dict[str, RegisteredModel]:
    """The tiny models built under `folder` (`generation.tiny_models`), registered as the demo registers them."""
    paths = {name: Path(folder) / name for name in TINY_MODEL_NAMES if (Path(folder) / name).is_dir()}
    return {entry.name: entry for entry in model_registry.register_tiny_models(paths)}
