"""`manage.py import_cvqa_sources`: alias of `cvqa_import_sources`, kept for the scripts that call it."""

from annotation.management.commands import cvqa_import_sources


class Command(cvqa_import_sources.Command):
    """Alias of `cvqa_import_sources`."""
