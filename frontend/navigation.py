"""The role-aware navigation: which entries each role sees, in order."""

from dataclasses import dataclass

from config.roles import ADMIN, ANNOTATOR, CURATOR, RESEARCHER, user_roles


@dataclass(frozen=True)
class NavEntry:
    label: str
    url_name: str
    roles: tuple[str, ...]
    section: str


ENTRIES = [
    NavEntry("My tasks", "my-tasks", (ANNOTATOR,), "Annotate"),
    NavEntry("Queues", "queues", (CURATOR, ADMIN), "Curate"),
    NavEntry("Studies", "crowd-studies", (CURATOR, ADMIN), "Curate"),
    NavEntry("Media", "media-library", (CURATOR, RESEARCHER, ADMIN), "Curate"),
    NavEntry("Generation", "generation", (CURATOR, ADMIN), "Curate"),
    NavEntry("Image studio", "studio", (CURATOR, ADMIN), "Curate"),
    NavEntry("BlackSwan variants", "blackswan-variants", (CURATOR, ADMIN), "Curate"),
    NavEntry("NL-EYE triplets", "nleye-triplets", (CURATOR, ADMIN), "Curate"),
    NavEntry("C-VQA curation", "cvqa-curation", (CURATOR, ADMIN), "Curate"),
    NavEntry("CVRR-ES curation", "cvrr-curation", (CURATOR, ADMIN), "Curate"),
    NavEntry("MAIA curation", "maia-categories", (CURATOR, ADMIN), "Curate"),
    NavEntry("Benchmarks", "benchmarks", (CURATOR, RESEARCHER, ADMIN), "Research"),
    NavEntry("Runs", "runs", (RESEARCHER, ADMIN), "Research"),
    NavEntry("Results", "results", (RESEARCHER, ADMIN), "Research"),
    NavEntry("Judge validation", "judge-validation-samples", (CURATOR, RESEARCHER, ADMIN), "Research"),
    NavEntry("Jobs", "jobs", (CURATOR, RESEARCHER, ADMIN), "System"),
    NavEntry("Models", "models", (CURATOR, RESEARCHER, ADMIN), "System"),
]


def entries_for(user) -> list[NavEntry]:
    roles = user_roles(user)
    return [entry for entry in ENTRIES if roles & set(entry.roles)]
