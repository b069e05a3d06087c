"""MAIA's entry in the navigation."""

from config.roles import ADMIN, CURATOR
from frontend.navigation import NavEntry

ENTRIES = [
    NavEntry("MAIA curation", "maia-categories", (CURATOR, ADMIN), "Curate", order=50),
]
