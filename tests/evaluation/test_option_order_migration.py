"""Runs made before option orders existed keep the shuffled order their predictions were made with."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("evaluation", "0005_run_option_order")]
AFTER = [("evaluation", "0006_existing_runs_keep_their_shuffled_order")]


@pytest.mark.django_db(transaction=True)
def test_existing_runs_on_shuffling_benchmarks_become_shuffled_with_their_seed():
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    apps = executor.loader.project_state(BEFORE).apps
    Benchmark = apps.get_model("annotation", "Benchmark")
    BenchmarkVersion = apps.get_model("annotation", "BenchmarkVersion")
    EvaluationRun = apps.get_model("evaluation", "EvaluationRun")
    made = {}
    for slug, seed in (("blackswan", 7), ("cvqa", 3), ("cvrr", 5)):
        benchmark, _ = Benchmark.objects.get_or_create(slug=slug, defaults={"name": slug})
        version = BenchmarkVersion.objects.create(benchmark=benchmark, label=f"old-{slug}")
        made[slug] = EvaluationRun.objects.create(version=version, model_id="org/vlm", seed=seed).pk

    executor = MigrationExecutor(connection)
    executor.migrate(AFTER)
    apps = executor.loader.project_state(AFTER).apps
    orders = dict(apps.get_model("evaluation", "EvaluationRun").objects.values_list("pk", "option_order"))
    assert orders == {made["blackswan"]: "shuffled:7", made["cvqa"]: "shuffled:3", made["cvrr"]: "release"}
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())
