"""The model registry's entries: the models people may use, as an admin configured them.

An entry names a model people pick (`name`), the backend that loads it, its hub id, local folder or API
model name, the revision it is pinned to, what it may be used for (`uses`), and what only an admin
decides: the endpoint of an OpenAI-compatible server, the environment variable holding its key (one of
`settings.MODEL_KEY_VARIABLES`), whether the model folder's own Python may run (`trust_remote_code`),
the options it always loads with and the options people may add. `generation.model_registry` resolves
what people pick against these rows.
"""

import re
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models

from generation.backends import registry

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
CHAT_BACKENDS = ("transformers", "causal_lm", "openai")
HF_BACKENDS = registry.HF_BACKENDS
# options with a field of their own on an entry (never in its `options`)
DEDICATED = {"base_url": "endpoint", "api_key_env": "key_variable", "trust_remote_code": "trust_remote_code"}


class Use(models.TextChoices):
    """What a model may be used for, where the platform tells uses apart."""

    EVALUATION = "evaluation", "Evaluation runs (answering, describing media)"
    JUDGE = "judge", "LLM judge"
    PROPOSALS = "proposals", "Proposals for curation"
    BASELINE = "baseline", "Text-only baseline (scores answers)"
    NLI = "nli", "NLI classifier"
    CLIP = "clip", "CLIP score"
    BERTSCORE = "bertscore", "BERTScore"
    IMAGE_GENERATION = "image_generation", "Image generation (text-to-image, image-to-image)"
    INPAINTING = "inpainting", "Inpainting"


# the backends a use can load its models with
USE_BACKENDS = {
    Use.EVALUATION: CHAT_BACKENDS, Use.JUDGE: CHAT_BACKENDS, Use.PROPOSALS: CHAT_BACKENDS,
    Use.BASELINE: ("causal_lm",), Use.NLI: ("nli",), Use.CLIP: ("clip",), Use.BERTSCORE: ("bertscore",),
    Use.IMAGE_GENERATION: ("diffusion",), Use.INPAINTING: ("diffusion",),
}


def key_variables() -> tuple[str, ...]:
    """The environment variables an entry may name as its key (`settings.MODEL_KEY_VARIABLES`)."""
    return tuple(getattr(settings, "MODEL_KEY_VARIABLES", ()) or ())


def check_endpoint(url: str) -> str:
    """An http:// or https:// URL with a host and no credentials; ValidationError otherwise."""
    url = (url or "").strip()
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:
        raise ValidationError(f"The endpoint {url!r} is not a URL.") from None
    if parts.scheme not in ("http", "https") or not host:
        raise ValidationError(f"The endpoint {url!r} must be an http:// or https:// URL with a host.")
    if parts.username or parts.password:
        raise ValidationError("The endpoint must not hold credentials: name the key's variable instead.")
    return url


def check_key_variable(name: str) -> str:
    """"" (no key) or one of `settings.MODEL_KEY_VARIABLES`; ValidationError otherwise."""
    name = (name or "").strip()
    if name and name not in key_variables():
        raise ValidationError(f"The key variable {name!r} is not one of MODEL_KEY_VARIABLES "
                              f"({', '.join(key_variables()) or 'none is set'}).")
    return name


class RegisteredModel(models.Model):
    """One model people may pick (see the module docstring); admins add, change and disable entries."""

    name = models.CharField(max_length=100, unique=True,
                            help_text="what people pick: letters, digits, '.', '_' and '-'")
    description = models.CharField(max_length=200, blank=True)
    backend = models.CharField(max_length=32, help_text="a backend of generation.backends.registry, or diffusion, "
                                                        "bertscore")
    model_id = models.CharField(max_length=255, help_text="hub id, local folder, or API model name")
    revision = models.CharField(max_length=128, blank=True,
                                help_text="the revision it is pinned to (a hub commit, branch or tag); empty: "
                                          "the default, resolved and recorded when used")
    uses = models.JSONField(default=list, help_text="what it may be used for: " + ", ".join(Use.values))
    endpoint = models.CharField(max_length=500, blank=True,
                                help_text="OpenAI-compatible backends: the API root, e.g. http://host:8000/v1 "
                                          "(empty: $OPENAI_BASE_URL, else OpenAI's)")
    key_variable = models.CharField(max_length=100, blank=True,
                                    help_text="OpenAI-compatible backends: the environment variable holding the "
                                              "API key, one of MODEL_KEY_VARIABLES (empty: no key is sent)")
    options = models.JSONField(default=dict, blank=True,
                               help_text="options it always loads with (device, dtype, timeout, extra_body, …)")
    allowed_options = models.JSONField(default=list, blank=True,
                                       help_text="options people may add when they pick it (empty: every option "
                                                 "the backend lets people pass)")
    trust_remote_code = models.BooleanField(default=False,
                                            help_text="run the model folder's own Python (transformers backends)")
    enabled = models.BooleanField(default=True, help_text="offered and usable; a disabled entry is refused")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]
        verbose_name = "registered model"

    def __str__(self):
        return f"{self.name} ({self.backend}: {self.model_id})"

    @property
    def label(self) -> str:
        """How pickers show it: name, backend and model id."""
        return f"{self.name} ({self.backend}: {self.model_id}{f' @ {self.revision}' if self.revision else ''})"

    def allows(self, use: str) -> bool:
        return use in (self.uses or [])

    def load_options(self) -> dict:
        """The options it loads with: its own, its endpoint and key variable, trust_remote_code."""
        options = dict(self.options or {})
        if self.backend == "openai":
            if self.endpoint:
                options["base_url"] = self.endpoint
            options["api_key_env"] = self.key_variable  # empty: no key is sent
        if self.trust_remote_code:
            options["trust_remote_code"] = True
        return options

    def clean(self):
        errors = {}
        self.name = (self.name or "").strip()
        if not NAME.fullmatch(self.name) or self.name.isdigit():
            errors["name"] = ("Use letters, digits, '.', '_' and '-' (not digits alone), starting with a letter "
                              "or digit.")
        if self.backend not in registry.MODEL_BACKENDS:
            errors["backend"] = f"Choose one of {', '.join(registry.MODEL_BACKENDS)}."
        self.model_id = (self.model_id or "").strip()
        if not self.model_id or any(ch.isspace() or not ch.isprintable() for ch in self.model_id):
            errors["model_id"] = "Give a hub id, a local folder or an API model name, without spaces."
        uses = self.uses if isinstance(self.uses, list) else None
        if not uses or any(use not in Use.values for use in uses):
            errors["uses"] = f"Give a list of one or more of {', '.join(Use.values)}."
        elif "backend" not in errors:
            unfit = [use for use in uses if self.backend not in USE_BACKENDS[use]]
            if unfit:
                errors["uses"] = "; ".join(f"{use} needs a {' or '.join(USE_BACKENDS[use])} model" for use in unfit)
        if self.endpoint and self.backend != "openai":
            errors["endpoint"] = "Only an OpenAI-compatible (openai) model has an endpoint."
        elif self.endpoint:
            try:
                self.endpoint = check_endpoint(self.endpoint)
            except ValidationError as exc:
                errors["endpoint"] = exc.messages
        if self.key_variable and self.backend != "openai":
            errors["key_variable"] = "Only an OpenAI-compatible (openai) model has a key variable."
        elif self.key_variable:
            try:
                self.key_variable = check_key_variable(self.key_variable)
            except ValidationError as exc:
                errors["key_variable"] = exc.messages
        if self.trust_remote_code and self.backend not in HF_BACKENDS:
            errors["trust_remote_code"] = f"Only {', '.join(HF_BACKENDS)} models run code from their folder."
        if "backend" not in errors:
            self._clean_options(errors)
        if errors:
            raise ValidationError(errors)

    def _clean_options(self, errors: dict) -> None:
        if not isinstance(self.options, dict):
            errors["options"] = "Give a JSON object of options."
        else:
            dedicated = [key for key in self.options if key in DEDICATED]
            try:
                if dedicated:
                    raise registry.OptionError(f"Set {dedicated[0]!r} with the entry's {DEDICATED[dedicated[0]]} "
                                               f"field, not as an option.")
                registry.check_options(self.backend, self.options, admin=True)
            except registry.OptionError as exc:
                errors["options"] = str(exc)
        people, _ = registry.option_rules(self.backend)
        allowed = self.allowed_options if isinstance(self.allowed_options, list) else None
        if allowed is None or any(not isinstance(name, str) for name in allowed):
            errors["allowed_options"] = "Give a JSON list of option names."
        elif any(name not in people for name in allowed):
            wrong = next(name for name in allowed if name not in people)
            errors["allowed_options"] = (f"{wrong!r} is not an option people may pass to the {self.backend} backend "
                                         f"({', '.join(people) or 'none'}).")
