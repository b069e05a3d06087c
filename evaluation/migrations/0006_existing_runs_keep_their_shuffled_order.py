"""Runs made before option orders existed showed BlackSwanSuite MCQ and C-VQA synthetic options in an
order drawn from (run seed, request id): they keep that order, as `shuffled:<seed>`, so their stored
predictions still score against the options they were shown. Runs on other benchmarks showed no
reordered options and stay `release`."""

from django.db import migrations

SHUFFLED_BENCHMARKS = ("blackswan", "cvqa")


def keep_shuffled_order(apps, schema_editor):
    EvaluationRun = apps.get_model("evaluation", "EvaluationRun")
    runs = EvaluationRun.objects.filter(version__benchmark__slug__in=SHUFFLED_BENCHMARKS)
    for run in runs.only("pk", "seed").iterator():
        EvaluationRun.objects.filter(pk=run.pk).update(option_order=f"shuffled:{run.seed}")


class Migration(migrations.Migration):

    dependencies = [
        ("evaluation", "0005_run_option_order"),
    ]

    operations = [
        migrations.RunPython(keep_shuffled_order, migrations.RunPython.noop),
    ]
