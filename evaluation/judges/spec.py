"""The judge model: `--judge-model` read as (backend, model id), its backend spec and its parameters;
`registered_spec` picks it from the model registry (pages, API and commands)."""

from __future__ import annotations

from evaluation import runner
from evaluation.judges.base import CHAT_BACKENDS, DEFAULT_BACKEND, DEFAULT_MAX_NEW_TOKENS, JudgeError
from generation import model_registry
from generation.backends import registry
from generation.backends.base import BackendError, GenerationParams
from generation.registered_models import Use


def split_model(model: str, backend: str = "") -> tuple[str, str]:
    """(backend, model id) from `--judge-model`: "openai:gpt-4o" names its backend; otherwise `backend`
    or `causal_lm`."""
    prefix, sep, rest = (model or "").partition(":")
    if sep and prefix in CHAT_BACKENDS and rest:
        if backend and backend != prefix:
            raise JudgeError(f"The judge model {model!r} names backend {prefix!r} but {backend!r} was asked.")
        return prefix, rest
    return backend or DEFAULT_BACKEND, model


def judge_spec(model: str, *, backend: str = "", revision: str = "", options: dict | None = None) -> runner.BackendSpec:
    """The judge as loaded and as keyed in the cache (its revision resolved without loading weights)."""
    backend, model_id = split_model(model, backend)
    if not model_id:
        raise JudgeError("A judge model (hub id, local folder or API model name) is required.")
    if backend not in CHAT_BACKENDS:
        raise JudgeError(f"A judge needs a chat backend: {', '.join(CHAT_BACKENDS)} (got {backend!r}).")
    try:
        resolved = registry.resolve_revision(backend, model_id, revision)
    except BackendError as exc:
        raise JudgeError(str(exc)) from None
    return runner.BackendSpec.make(backend, model_id, revision, resolved, options)


def registered_judge(model: str, *, backend: str = "", revision: str = "", options: dict | None = None,
                     admin: bool = False) -> model_registry.ModelChoice:
    """The judge picked from the model registry: `model` is a registered judge's name, or the model id it
    holds ("openai:gpt-4o" names its backend too); the entry gives backend, model id, revision and options
    (with `options` added; admin-only ones with `admin` only). JudgeError says what was refused."""
    prefix, sep, rest = (model or "").partition(":")
    if sep and prefix in CHAT_BACKENDS and rest:
        if backend and backend != prefix:
            raise JudgeError(f"The judge model {model!r} names backend {prefix!r} but {backend!r} was asked.")
        model, backend = rest, prefix
    try:
        return model_registry.choose(model, use=Use.JUDGE, backend=backend, revision=revision, options=options,
                                     admin=admin)
    except model_registry.ModelRefused as exc:
        raise JudgeError(str(exc)) from None


def registered_spec(model: str, **choice) -> runner.BackendSpec:
    """The backend spec of the registered judge `model` names (`registered_judge`)."""
    chosen = registered_judge(model, **choice)
    return judge_spec(chosen.model_id, backend=chosen.backend, revision=chosen.revision, options=chosen.options)


def judge_params(params: dict | GenerationParams | None = None) -> GenerationParams:
    """Greedy single answers unless told otherwise (so verdicts are reproducible and cached)."""
    if isinstance(params, GenerationParams):
        return params
    given = {key: value for key, value in (params or {}).items() if value is not None}
    unknown = sorted(set(given) - {"max_new_tokens", "temperature", "top_p", "seed"})
    if unknown:
        raise JudgeError(f"Unknown judge parameters {', '.join(unknown)}.")
    return GenerationParams(max_new_tokens=int(given.get("max_new_tokens", DEFAULT_MAX_NEW_TOKENS)),
                            temperature=float(given.get("temperature", 0.0)), top_p=float(given.get("top_p", 1.0)),
                            n=1, seed=int(given.get("seed", 0)))
