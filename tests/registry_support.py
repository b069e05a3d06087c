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
    if uses is None:  # every use the backend fits; a test double's chat backend: the uses that chat
        uses = [use for use, backends in USE_BACKENDS.items() if backend in backends] or [
            use for use, backends in USE_BACKENDS.items() if "causal_lm" in backends]
    if backend in registry.MODEL_BACKENDS:
        return model_registry.register(name, backend=backend, model_id=str(model_id), uses=uses, **fields)
    entry, _ = RegisteredModel.objects.update_or_create(
        name=name, defaults={"backend": backend, "model_id": str(model_id), "uses": list(uses), **fields})
    return entry


def register_tiny_models(folder: Path) -> dict[str, RegisteredModel]:
    """The tiny models built under `folder` (`generation.tiny_models`), registered as the demo registers them."""
    paths = {name: Path(folder) / name for name in TINY_MODEL_NAMES if (Path(folder) / name).is_dir()}
    return {entry.name: entry for entry in model_registry.register_tiny_models(paths)}


def register_models(backend: str, *model_ids: str) -> list[RegisteredModel]:
    """Each model id registered (named after it) with `backend` (a test double's, as it is installed)."""
    return [register_model(model_id, backend=backend) for model_id in model_ids]


def register_api_model(server, model_id: str = "gpt-test", *, name: str = "", **options) -> RegisteredModel:
    """An OpenAI-compatible model served by a local test server (tests/openai_test_server.py): its endpoint is
    the server's, no key, no retries unless `options` say otherwise."""
    return register_model(model_id, backend="openai", name=name or model_id.replace("/", "-"),
                          endpoint=server.base_url, options={"max_retries": 0, **options})


def register_tiny_sd(tiny_sd) -> dict[str, RegisteredModel]:
    """The tiny Stable Diffusion pipelines (the `tiny_sd` fixture), registered as the demo registers them."""
    paths = {"sd-text2image": tiny_sd.text2image, "sd-inpaint": tiny_sd.inpaint}
    return {entry.name: entry for entry in model_registry.register_tiny_models(paths)}
