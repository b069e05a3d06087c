"""C-VQA's entry in the navigation."""

from config.roles import ADMIN, CURATOR
from frontend.navigation import NavEntry

ENTRIES = [
    NavEntry("C-VQA curation", "cvqa-curation", (CURATOR, ADMIN), "Curate", order=30),
]
