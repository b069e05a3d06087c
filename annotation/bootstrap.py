"""Rows every installation needs: the five benchmarks and one group per role."""

from django.contrib.auth.models import Group, Permission

from config.roles import GROUP_PERMISSIONS

BENCHMARK_DESCRIPTIONS = {
    "blackswan": "Staged video reveal: Forecaster, Detective, Reporter (abductive and defeasible reasoning).",
    "cvqa": "Counterfactual VQA on real and synthetic images.",
    "nleye": "Image triplets for abductive NLI, with explanation voting.",
    "cvrr": "Open-ended video QA across 11 dimensions, with an LLM judge and DSCP prompting.",
    "maia": "Italian video statement verification and open-ended QA, aggregate accuracy.",
}


def ensure_benchmarks() -> None:
    from annotation.models import Benchmark

    for slug, name in Benchmark.Slug.choices:
        Benchmark.objects.get_or_create(
            slug=slug, defaults={"name": name, "description": BENCHMARK_DESCRIPTIONS.get(slug, "")}
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
