"""The benchmarks' pages, one package each (`frontend/benchmarks/<slug>/`), and their registry.

A benchmark's package holds its views (modules named for what they show), its `urls.py` (`urlpatterns`;
`frontend/urls.py` includes it) and its `navigation.py` (`ENTRIES`, a list of `frontend.navigation.NavEntry`;
`frontend.navigation.entries` adds them to the generic ones). Its templates live under
`frontend/templates/<slug>/`, its page scripts and styles under `frontend/static/frontend/<slug>/`.

`FrontendConfig.ready` calls `discover`, which imports every package here and registers its URL module (by
name: it is imported when `frontend/urls.py` is read, after the URL converters are registered) and its
navigation entries. Pages written outside the packages (a test's toy benchmark) register the same way with
`register(slug, urls="dotted.module.name", entries=[...])`.

`frontend/urls.py` is read once, when the first address is resolved: a benchmark registered after that is
served once the URL modules are read again (`importlib.reload` of `frontend.urls` and `config.urls`, then
`django.urls.clear_url_caches()`), as a restart would.
"""

from __future__ import annotations

import pkgutil
from dataclasses import dataclass
from importlib import import_module
from importlib.util import find_spec


@dataclass(frozen=True)
class BenchmarkPages:
    slug: str
    urls: str | None = None  # the dotted name of the module whose `urlpatterns` serve its pages
    entries: tuple = ()  # its navigation entries (`frontend.navigation.NavEntry`)


_REGISTRY: dict[str, BenchmarkPages] = {}


def register(slug: str, *, urls: str | None = None, entries=()) -> BenchmarkPages:
    """Register a benchmark's pages under its slug (again: replaces them)."""
    if not slug:
        raise ValueError("A benchmark's pages need its slug.")
    pages = BenchmarkPages(slug, urls, tuple(entries))
    _REGISTRY[slug] = pages
    return pages


def unregister(slug: str) -> None:
    """Forget a benchmark's pages (nothing happens for an unknown slug)."""
    _REGISTRY.pop(slug, None)


def registered() -> list[BenchmarkPages]:
    """The registered benchmarks' pages, by slug."""
    return [_REGISTRY[slug] for slug in sorted(_REGISTRY)]


def url_modules() -> list[str]:
    """The URL modules of the registered benchmarks, by slug."""
    return [pages.urls for pages in registered() if pages.urls]


def nav_entries() -> list:
    """The navigation entries of the registered benchmarks, by slug (`frontend.navigation` orders them)."""
    return [entry for pages in registered() for entry in pages.entries]


def discover() -> list[str]:
    """Register every package here: its `urls` module (when it has one) and its `navigation.ENTRIES`; the
    packages' names."""
    names = [info.name for info in pkgutil.iter_modules(__path__) if info.ispkg and not info.name.startswith("_")]
    for name in names:
        package = f"{__name__}.{name}"
        urls = f"{package}.urls" if find_spec(f"{package}.urls") is not None else None
        navigation = import_module(f"{package}.navigation") if find_spec(f"{package}.navigation") else None
        register(name, urls=urls, entries=getattr(navigation, "ENTRIES", ()))
    return names
