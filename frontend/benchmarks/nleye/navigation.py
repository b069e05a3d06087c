"""NL-EYE's entry in the navigation."""

from config.roles import ADMIN, CURATOR
from frontend.navigation import NavEntry

ENTRIES = [
    NavEntry("NL-EYE triplets", "nleye-triplets", (CURATOR, ADMIN), "Curate", order=20),
]
