"""The model registry: what people pick a model from, on pages, the API and the commands.

Curators and researchers never type where a model comes from: they name a registered entry
(`generation.registered_models.RegisteredModel`), by its name, its id, or the model id / local path
it holds, and `choose` turns that into what the services take (backend, model id, revision, load
options). Provenance (model id, revision) comes from the entry. Refusals (`ModelRefused`, a ValueError
with a message for the person) name what was wrong: an unknown model (with the list of those
registered for that use), one registered for something else, a disabled one, a revision or backend
other than the entry's, an option outside the backend's allow-list, an admin-only option passed by
someone else (`registry.check_options`).

Admins manage entries in the Django admin or with `manage.py models` (`register`, `remove`); an admin
may also pass admin-only options when picking (their values are checked as an entry's are: an
http(s) endpoint, a key variable from `settings.MODEL_KEY_VARIABLES`).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.core.exceptions import ValidationError

from config import json_text
from config.roles import ADMIN, has_role
from generation.backends import registry
from generation.registered_models import (
    RegisteredModel,
    Use,
    check_endpoint,
    check_key_variable,
    key_variables,
)
from generation.tiny_models import REGISTRY_ENTRIES


class ModelRefused(ValueError):
    """A model (or an option for it) that cannot be used as asked; the message says why and what exists."""


@dataclass(frozen=True)
class ModelChoice:
    """A registered model as the services take it."""

    entry: RegisteredModel
    options: dict

    @property
    def name(self) -> str:
        return self.entry.name

    @property
    def backend(self) -> str:
        return self.entry.backend

    @property
    def model_id(self) -> str:
        return self.entry.model_id

    @property
    def revision(self) -> str:
        return self.entry.revision

    def load(self, **extra):
        """The backend, loaded with the entry's model id, revision and options (`extra` over them)."""
        return registry.load_backend(self.backend, self.model_id, revision=self.revision, **{**self.options, **extra})

    def service_kwargs(self) -> dict:
        """backend, model_id, revision and backend_options, as proposal and run services name them."""
        return {"backend": self.backend, "model_id": self.model_id, "revision": self.revision,
                "backend_options": dict(self.options)}


def use_label(use: str) -> str:
    return Use(use).label if use in Use.values else use


def is_admin(user) -> bool:
    """Whether `user` may pass admin-only options when picking a model (the admin role)."""
    return user is not None and has_role(user, ADMIN)


def entries(use: str | None = None, *, enabled: bool = True) -> list[RegisteredModel]:
    """Registered models (enabled ones by default), by name; those for `use` when given."""
    rows = RegisteredModel.objects.order_by("name")
    if enabled:
        rows = rows.filter(enabled=True)
    return [row for row in rows if use is None or row.allows(use)]


def names(use: str | None = None) -> list[str]:
    return [entry.name for entry in entries(use)]


def _registered_text(use: str) -> str:
    found = names(use)
    listed = ", ".join(found) if found else "none yet (an admin registers models)"
    return f"models registered for {use_label(use).lower()}: {listed}"


def _matches(entry: RegisteredModel, reference: str) -> bool:
    return entry.model_id == reference or entry.model_id.rstrip("/") == reference.rstrip("/")


def find(reference, *, use: str, backend: str = "") -> RegisteredModel:
    """The enabled entry for `use` named by `reference`: its name, its id, or the model id / local path it
    holds (with `backend` telling entries of one model apart). ModelRefused names what is registered."""
    reference = str(reference or "").strip()
    if not reference:
        raise ModelRefused(f"Choose a model: {_registered_text(use)}.")
    every = list(RegisteredModel.objects.order_by("name"))
    named = [e for e in every if e.name == reference] or (
        [e for e in every if str(e.pk) == reference] if reference.isdigit() else [])
    if not named:
        named = [e for e in every if _matches(e, reference)]
    if backend and named and not any(e.backend == backend for e in named):
        registered = " or ".join(sorted({e.backend for e in named}))
        raise ModelRefused(f"The model {reference!r} is registered with the {registered} backend, not {backend!r}.")
    named = [e for e in named if not backend or e.backend == backend]
    usable = [e for e in named if e.enabled and e.allows(use)]
    if len(usable) == 1:
        return usable[0]
    if len(usable) > 1:
        raise ModelRefused(f"{reference!r} is registered as {', '.join(e.name for e in usable)}: pick one by name.")
    if any(not e.enabled for e in named):
        raise ModelRefused(f"The model {reference!r} is disabled in the registry; {_registered_text(use)}.")
    if named:
        raise ModelRefused(f"The model {reference!r} is not registered for {use_label(use).lower()}; "
                           f"{_registered_text(use)}.")
    raise ModelRefused(f"Unknown model {reference!r}: it is not in the model registry; {_registered_text(use)}.")


def parse_option(text: str) -> tuple[str, object]:
    """`key=value`; the value is read as JSON when it is JSON (numbers, true/false, objects), else text.
    ModelRefused when there is no `=` or no key."""
    key, sep, value = str(text).partition("=")
    if not sep or not key.strip():
        raise ModelRefused(f"A backend option takes key=value (got {text!r}).")
    try:
        parsed = json_text.loads(value)
    except json_text.JsonTooDeep as exc:
        raise ModelRefused(f"Backend option {key.strip()!r}: {exc}") from None
    except ValueError:
        parsed = value
    return key.strip(), parsed


def options_from_text(text: str) -> dict:
    """Options written on a page: one `key=value` per line or separated by commas (`parse_option`)."""
    parts = [part.strip() for line in (text or "").splitlines() for part in line.split(",") if part.strip()]
    return dict(parse_option(part) for part in parts)


def check_admin_values(options: dict) -> None:
    """The values of admin-only options an admin passed, checked as an entry's fields are."""
    try:
        if "base_url" in options:
            check_endpoint(str(options["base_url"] or ""))
        if "api_key_env" in options:
            check_key_variable(str(options["api_key_env"] or ""))
    except ValidationError as exc:
        raise ModelRefused(" ".join(exc.messages)) from None
    if "trust_remote_code" in options and not isinstance(options["trust_remote_code"], bool):
        raise ModelRefused("trust_remote_code is true or false.")
    if "extra_body" in options and not isinstance(options["extra_body"], dict):
        raise ModelRefused("extra_body is a JSON object.")


def check_options(backend: str, options: dict | None, *, admin: bool = False, entry: RegisteredModel | None = None
                  ) -> dict:
    """`options` checked against the backend's allow-list (and the entry's), admin-only ones for admins
    only (`registry.check_options`); ModelRefused names the option refused."""
    options = {} if options is None else options
    try:
        checked = registry.check_options(backend, options, admin=admin,
                                         allowed=entry.allowed_options if entry is not None else None)
    except registry.OptionError as exc:
        raise ModelRefused(str(exc)) from None
    if admin:
        check_admin_values(checked)
    return checked


def choose(reference, *, use: str, backend: str = "", revision: str = "", options: dict | None = None,
           admin: bool = False) -> ModelChoice:
    """The registered model `reference` names for `use`, with `options` added to the entry's own load
    options. `backend` and `revision`, when given, must be the entry's (the entry pins them)."""
    entry = find(reference, use=use, backend=backend)
    revision = str(revision or "").strip()
    if revision and revision != entry.revision:
        pinned = f"pinned to revision {entry.revision!r}" if entry.revision else "registered without a revision"
        raise ModelRefused(f"{entry.name} is {pinned}: its revision is set on its registry entry, not here "
                           f"(got {revision!r}).")
    if entry.backend == "openai" and entry.key_variable and entry.key_variable not in key_variables():
        raise ModelRefused(f"{entry.name} names the key variable {entry.key_variable!r}, which MODEL_KEY_VARIABLES "
                           f"no longer lists; an admin must choose another.")
    checked = check_options(entry.backend, options, admin=admin, entry=entry)
    return ModelChoice(entry, {**entry.load_options(), **checked})


def choose_for(user, reference, *, use: str, backend: str = "", revision: str = "",
               options: dict | None = None) -> ModelChoice:
    """`choose` for a person: admin-only options pass only for an admin."""
    return choose(reference, use=use, backend=backend, revision=revision, options=options, admin=is_admin(user))


# --- Managing entries (admins: the Django admin, `manage.py models`, the demo) -------------------

def register(name: str, *, backend: str, model_id: str, uses, **fields) -> RegisteredModel:
    """Add an entry, or change the one with this name; ModelRefused with every field's problem."""
    entry = RegisteredModel.objects.filter(name=str(name).strip()).first() or RegisteredModel(name=str(name).strip())
    entry.backend, entry.model_id, entry.uses = backend, model_id, list(uses)
    for field, value in fields.items():
        if field not in {f.name for f in RegisteredModel._meta.fields} or field in ("id", "created_at", "updated_at"):
            raise ModelRefused(f"A registered model has no field {field!r}.")
        setattr(entry, field, value)
    try:
        entry.full_clean()
    except ValidationError as exc:
        raise ModelRefused("; ".join(f"{field}: {' '.join(messages)}" if field != "__all__" else " ".join(messages)
                                     for field, messages in exc.message_dict.items())) from None
    entry.save()
    return entry


def remove(name: str) -> None:
    """Delete the entry named `name` (what was made with it keeps its model id and revision)."""
    deleted, _ = RegisteredModel.objects.filter(name=name).delete()
    if not deleted:
        raise ModelRefused(f"There is no registered model {name!r}; registered: {', '.join(names()) or 'none'}.")

def register_tiny_models(paths: dict) -> list[RegisteredModel]:
    """Register the tiny models built by `generation.tiny_models` ({tiny model name: folder}) under their
    entries (`tiny_models.REGISTRY_ENTRIES`): what the demo and the tests pick on pages, the API and commands."""
    return [register(name, backend=backend, model_id=str(paths[tiny]), uses=uses, description=f"tiny {tiny} model")
            for tiny, rows in REGISTRY_ENTRIES.items() if tiny in paths for name, backend, uses in rows]
