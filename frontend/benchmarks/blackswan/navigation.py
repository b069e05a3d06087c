"""BlackSwanSuite's entry in the navigation."""

from config.roles import ADMIN, CURATOR
from frontend.navigation import NavEntry

ENTRIES = [
    NavEntry("BlackSwan variants", "blackswan-variants", (CURATOR, ADMIN), "Curate", order=10),
]
