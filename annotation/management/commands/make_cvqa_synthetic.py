"""`manage.py make_cvqa_synthetic`: alias of `cvqa_make_synthetic`, kept for the scripts that call it."""

from annotation.management.commands import cvqa_make_synthetic


class Command(cvqa_make_synthetic.Command):
    """Alias of `cvqa_make_synthetic`."""
