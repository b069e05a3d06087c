"""The role-aware navigation: which entries each role sees, in order.

`ENTRIES` are the generic entries; each benchmark adds its own from its package
(`frontend/benchmarks/<slug>/navigation.py`, `ENTRIES`, registered by `frontend.benchmarks`). `entries()`
puts them together: section by section (in the order the sections first appear), the generic entries in
the order listed, then the benchmarks' entries by their `order`, a number each benchmark's package gives its
entries (a new benchmark picks one not taken: the place it should have among the others).
"""

from dataclasses import dataclass

from config.roles import ADMIN, ANNOTATOR, CURATOR, RESEARCHER, user_roles
from frontend import benchmarks


@dataclass(frozen=True)
class NavEntry:
    label: str
    url_name: str
    roles: tuple[str, ...]
    section: str
    order: int = 0  # a benchmark's entry: its place among the benchmarks' entries of its section; 0: generic


ENTRIES = [
    NavEntry("My tasks", "my-tasks", (ANNOTATOR,), "Annotate"),
    NavEntry("Queues", "queues", (CURATOR, ADMIN), "Curate"),
    NavEntry("Studies", "crowd-studies", (CURATOR, ADMIN), "Curate"),
    NavEntry("Media", "media-library", (CURATOR, RESEARCHER, ADMIN), "Curate"),
    NavEntry("Generation", "generation", (CURATOR, ADMIN), "Curate"),
    NavEntry("Image studio", "studio", (CURATOR, ADMIN), "Curate"),
    NavEntry("Benchmarks", "benchmarks", (CURATOR, RESEARCHER, ADMIN), "Research"),
    NavEntry("Runs", "runs", (RESEARCHER, ADMIN), "Research"),
    NavEntry("Results", "results", (RESEARCHER, ADMIN), "Research"),
    NavEntry("Judge validation", "judge-validation-samples", (CURATOR, RESEARCHER, ADMIN), "Research"),
    NavEntry("Jobs", "jobs", (CURATOR, RESEARCHER, ADMIN), "System"),
    NavEntry("Models", "models", (CURATOR, RESEARCHER, ADMIN), "System"),
]


def entries() -> list[NavEntry]:
    """Every entry, generic and the registered benchmarks', in the order the navigation shows them."""
    listed = [*ENTRIES, *benchmarks.nav_entries()]
    sections = list(dict.fromkeys(entry.section for entry in listed))
    return sorted(listed, key=lambda entry: (sections.index(entry.section), entry.order))


def entries_for(user) -> list[NavEntry]:
    roles = user_roles(user)
    return [entry for entry in entries() if roles & set(entry.roles)]
