"""Copy every run's status history (`RunTransition`) into the one state history
(`config.StateChange`), keeping order, times, actors and reasons. The old table is dropped by the
next migration."""

from django.db import migrations

BATCH = 2000


def copy_transitions(apps, schema_editor):
    RunTransition = apps.get_model("evaluation", "RunTransition")
    StateChange = apps.get_model("config", "StateChange")
    ContentType = apps.get_model("contenttypes", "ContentType")
    run_type = ContentType.objects.get_or_create(app_label="evaluation", model="evaluationrun")[0]
    batch = []
    for row in RunTransition.objects.order_by("at", "id").iterator(chunk_size=BATCH):
        batch.append(StateChange(content_type=run_type, object_id=row.run_id, from_state=row.from_status,
                                 to_state=row.to_status, actor_id=row.by_id, reason=row.reason, created_at=row.at))
        if len(batch) >= BATCH:
            StateChange.objects.bulk_create(batch)
            batch = []
    StateChange.objects.bulk_create(batch)


class Migration(migrations.Migration):
    dependencies = [
        ("evaluation", "0008_judgment_kind_from_registry"),
        ("config", "0002_state_history_insert_only_trigger"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [migrations.RunPython(copy_transitions, migrations.RunPython.noop)]
