"""`manage.py import_cvqa_subgroups`: alias of `cvqa_import_subgroups`, kept for the scripts that call it."""

from annotation.management.commands import cvqa_import_subgroups


class Command(cvqa_import_subgroups.Command):
    """Alias of `cvqa_import_subgroups`."""
