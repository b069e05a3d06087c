"""`manage.py scene_writing_study`: alias of `nleye_scene_writing_study`, kept for the scripts that call it."""

from annotation.management.commands import nleye_scene_writing_study


class Command(nleye_scene_writing_study.Command):
    """Alias of `nleye_scene_writing_study`."""
