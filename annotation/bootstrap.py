"""Rows every installation needs: one per registered benchmark and one group per role."""

from django.contrib.auth.models import Group, Permission

from annotation.benchmarks import registry
from annotation.models import Benchmark
from config.roles import GROUP_PERMISSIONS


def ensure_benchmarks() -> None:
    """A `Benchmark` row for every registered benchmark (existing rows are left as they are)."""
    for definition in registry.all():
        Benchmark.objects.get_or_create(
            slug=definition.slug, defaults={"name": definition.name, "description": definition.description}
        )


def ensure_role_groups() -> None:
    for role, perms in GROUP_PERMISSIONS.items():
        group, _ = Group.objects.get_or_create(name=role)
        if perms == ["*"]:
            wanted = Permission.objects.all()
        else:
            pairs = [p.split(".", 1) for p in perms]
            wanted = [
                p for p in Permission.objects.select_related("content_type")
                if [p.content_type.app_label, p.codename] in pairs
            ]
        group.permissions.set(wanted)


def on_post_migrate(sender, **kwargs) -> None:
    """Once per migrate (or flush): after the last app with models, when every app's permissions exist."""
    from django.apps import apps

    last = [config for config in apps.get_app_configs() if config.models_module is not None][-1]
    if sender.label != last.label:
        return
    ensure_benchmarks()
    ensure_role_groups()
