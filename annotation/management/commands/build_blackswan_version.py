"""`manage.py build_blackswan_version`: alias of `blackswan_build_version`, kept for the scripts that call it."""

from annotation.management.commands import blackswan_build_version


class Command(blackswan_build_version.Command):
    """Alias of `blackswan_build_version`."""
