"""CVRR-ES's entry in the navigation."""

from config.roles import ADMIN, CURATOR
from frontend.navigation import NavEntry

ENTRIES = [
    NavEntry("CVRR-ES curation", "cvrr-curation", (CURATOR, ADMIN), "Curate", order=40),
]
