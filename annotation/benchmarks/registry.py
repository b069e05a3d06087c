"""The benchmarks the annotation layer knows, each declared once and found by its slug.

A benchmark is a subclass of `BenchmarkDefinition` decorated with `@register`: its slug, display name
and description, its item payload schema (one pydantic model per record kind, told apart by `kind`) and
how its public release is read (`read`, `check_media_facts`) and written back (`write`), optionally the
items of a demo version (`demo_items`), its own API routes (`api_routes`), the image roles its items'
images are generated for in the image studio (`image_slots`), the pages a version's or a library video's
page links to (`version_links`, `video_links`), and what people decided on its items under
curation (`human_decisions`, read by `annotation.decisions`). The packages under
`annotation/benchmarks/` register themselves when the app is ready (`discover`); code elsewhere (a
test's toy benchmark) registers the same way.

Every list of benchmarks (model validation, CLI choices, admin filters, demo seeding, the OpenAPI
schema) asks `all()`, `slugs()` or `choices()`; `get(slug)` raises `UnknownBenchmark` naming the
known ones.
"""

from __future__ import annotations

import operator
import pkgutil
from functools import cached_property, reduce
from importlib import import_module
from typing import Annotated, get_args

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

_registry: dict[str, BenchmarkDefinition] = {}


class Payload(BaseModel):
    """One record kind of a benchmark's items. Fields the schema does not name are kept as they are."""

    model_config = ConfigDict(extra="allow", strict=True)


class UnknownBenchmark(KeyError):
    def __init__(self, slug):
        super().__init__(slug)
        self.slug = slug

    def __str__(self):
        return f"unknown benchmark {self.slug!r}; known: {', '.join(slugs()) or 'none'}"


class BenchmarkDefinition:
    """What a benchmark is as data. Subclasses set the attributes; reading and writing the release go
    to the `importer` module (`read(root, problems)`, optionally `check_media_facts(spec, facts,
    problems)`) and the `exporter` module (`write(items, writer)`), a demo version's items to the
    `demo` module (`demo_items(media)`), or a subclass overrides those methods itself."""

    slug: str = ""
    name: str = ""
    description: str = ""
    payloads: tuple[type[Payload], ...] = ()  # one model per record kind, each with `kind: Literal[...]`
    importer = None  # the module that reads the release
    exporter = None  # the module that writes it back
    demo = None  # the module that makes a demo version's items, if the benchmark has one
    api = None  # the module whose `api_routes(router)` adds the benchmark's own API routes, if it has any
    image_slots: tuple[str, ...] = ()  # media roles whose images curators make in the image studio
    layouts: tuple[str, ...] = ()  # release layouts the exporter writes on request (`export_benchmark --layout`)

    def image_slot_text(self, payload: dict, slot: str) -> str:
        """The text an item's payload gives for one image slot (the scene the image shows), or ""."""
        value = payload.get(slot) if isinstance(payload, dict) else None
        return value if isinstance(value, str) else ""

    def read(self, root, problems) -> list:
        """The release in folder `root` as `ItemSpec`s (`annotation.importers.base`); problems collected."""
        if self.importer is None:
            raise NotImplementedError(f"{self.slug} has no release importer.")
        return self.importer.read(root, problems)

    def check_media_facts(self, spec, facts: dict, problems) -> None:
        """Checks that need the probed media (`facts` by role); the importer's, if it has any."""
        check = getattr(self.importer, "check_media_facts", None)
        if check is not None:
            check(spec, facts, problems)

    def write(self, items, writer) -> None:
        """Write `items` (in release order) with the `ReleaseWriter` in the release's layout."""
        if self.exporter is None:
            raise NotImplementedError(f"{self.slug} has no release exporter.")
        self.exporter.write(items, writer)

    def demo_items(self, media: dict) -> list[tuple[str, dict, dict]]:
        """(external id, payload, media by role) of a demo version over the sample media (`media`: the
        library's ready videos and images by file name); none without a `demo` module."""
        make = getattr(self.demo, "demo_items", None)
        return [] if make is None else make(media)

    def demo_studies(self, curator, say=lambda line: None) -> list:
        """Open crowd studies of the benchmark's curation workflows for the demo (made once, by `curator`);
        the `demo` module's `demo_studies(curator)`, none without. A benchmark whose demo studies need slow
        work first (BlackSwanSuite splits the demo videos) overrides this to tell its progress to `say`."""
        make = getattr(self.demo, "demo_studies", None)
        return [] if make is None else make(curator)

    def demo_curation(self, curator, models: dict, say=lambda line: None) -> list:
        """Curation work the demo shows that needs the tiny models (`models`: name → folder), made once;
        the `demo` module's `demo_curation(curator, models, say)`, none without."""
        make = getattr(self.demo, "demo_curation", None)
        return [] if make is None else make(curator, models, say)

    def api_routes(self, router) -> None:
        """Register the benchmark's own API viewsets on the API's router (`config/api_urls.py` asks every
        registered benchmark): the `api` module's `api_routes(router)`, none without."""
        add_routes = getattr(self.api, "api_routes", None)
        if add_routes is not None:
            add_routes(router)

    def version_links(self, version) -> list[tuple[str, str]]:
        """(label, URL) of the pages a version's own page links to, e.g. a curation pipeline's overview."""
        return []

    def video_links(self, video) -> list[tuple[str, str]]:
        """(label, URL) of the benchmark's curation pages a ready library video's page links to for curators,
        e.g. a split timeline."""
        return []

    def human_decisions(self, version) -> list:
        """What people decided on the items of `version` (`annotation.decisions.Decision`s: accepted, rejected
        or sent back, on which question, where, by whom, when, why), read from where the benchmark's curation
        workflows record it. Freezing refuses an item whose latest decision on a question turns it down."""
        return []

    @cached_property
    def kinds(self) -> dict[str, type[Payload]]:
        """Record kind → its payload model."""
        return {get_args(model.model_fields["kind"].annotation)[0]: model for model in self.payloads}

    @cached_property
    def payload_type(self):
        """The payload schema: the record kinds as a union told apart by `kind`."""
        if len(self.payloads) == 1:
            return self.payloads[0]
        return Annotated[reduce(operator.or_, self.payloads), Field(discriminator="kind")]

    @cached_property
    def payload_adapter(self) -> TypeAdapter:
        return TypeAdapter(self.payload_type)

    @property
    def schema_name(self) -> str:
        """The payload schema's name in the OpenAPI components, e.g. `CvqaPayload`."""
        return "".join(part.capitalize() for part in self.slug.replace("-", "_").split("_")) + "Payload"


def register(definition: type[BenchmarkDefinition]) -> type[BenchmarkDefinition]:
    """Class decorator: add the benchmark to the registry (once; another class with the same slug is refused)."""
    if not definition.slug or not definition.name or not definition.payloads:
        raise ValueError(f"{definition.__qualname__} needs a slug, a name and its payload models")
    known = _registry.get(definition.slug)
    if known is not None and type(known).__qualname__ != definition.__qualname__:
        raise ValueError(f"benchmark {definition.slug!r} is already registered by {type(known).__qualname__}")
    _registry[definition.slug] = definition()
    return definition


def unregister(slug: str) -> None:
    """Remove a benchmark (a test's toy one) from the registry."""
    _registry.pop(slug, None)


def get(slug: str) -> BenchmarkDefinition:
    try:
        return _registry[slug]
    except (KeyError, TypeError):
        raise UnknownBenchmark(slug) from None


def all() -> list[BenchmarkDefinition]:
    return [_registry[slug] for slug in slugs()]


def slugs() -> list[str]:
    return sorted(_registry)


def choices() -> list[tuple[str, str]]:
    """(slug, display name) pairs, e.g. for form choices and the OpenAPI enum."""
    return [(definition.slug, definition.name) for definition in all()]


def discover() -> None:
    """Import every package under `annotation/benchmarks/`, so that each registers itself."""
    package = import_module("annotation.benchmarks")
    for module in pkgutil.iter_modules(package.__path__):
        if module.ispkg:
            import_module(f"annotation.benchmarks.{module.name}")
