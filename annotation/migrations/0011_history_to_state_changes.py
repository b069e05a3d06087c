"""Copy every crowd and video-split history row into the one state history (`config.StateChange`),
keeping ids' order, times, actors and reasons; a row's study becomes its scope. The old table's
insert-only trigger goes with it (the table itself is dropped by the next migration)."""

from django.conf import settings
from django.db import migrations

# what `entity` named → (app label, model) of the object that changed
ENTITIES = {
    "study": ("annotation", "study"),
    "claim": ("annotation", "claim"),
    "submission": ("annotation", "submission"),
    "video_split": ("annotation", "videosplit"),
    "qualification": ("annotation", "qualificationattempt"),
    "worker": tuple(settings.AUTH_USER_MODEL.lower().split(".")),
}
DROP_OLD_GUARD = {
    "postgresql": """
        DROP TRIGGER IF EXISTS annotation_historyentry_insert_only ON annotation_historyentry;
        DROP FUNCTION IF EXISTS annotation_history_is_insert_only();""",
    "sqlite": "DROP TRIGGER IF EXISTS annotation_historyentry_no_update;",
}
BATCH = 2000


def copy_history(apps, schema_editor):
    HistoryEntry = apps.get_model("annotation", "HistoryEntry")
    StateChange = apps.get_model("config", "StateChange")
    ContentType = apps.get_model("contenttypes", "ContentType")
    types = {}

    def type_of(app_label, model):
        if (app_label, model) not in types:
            types[app_label, model] = ContentType.objects.get_or_create(app_label=app_label, model=model)[0]
        return types[app_label, model]

    unknown = set(HistoryEntry.objects.exclude(entity__in=ENTITIES).values_list("entity", flat=True))
    if unknown:
        raise RuntimeError(f"History rows of unknown kinds {sorted(unknown)}: map them in ENTITIES first.")
    study_type = type_of("annotation", "study")
    batch = []
    for entry in HistoryEntry.objects.order_by("id").iterator(chunk_size=BATCH):
        batch.append(StateChange(
            content_type=type_of(*ENTITIES[entry.entity]), object_id=entry.entity_id,
            scope_type=study_type if entry.study_id else None, scope_id=entry.study_id,
            from_state=entry.from_state, to_state=entry.to_state, actor_id=entry.actor_id, reason=entry.reason,
            created_at=entry.created_at))
        if len(batch) >= BATCH:
            StateChange.objects.bulk_create(batch)
            batch = []
    StateChange.objects.bulk_create(batch)
    sql = DROP_OLD_GUARD.get(schema_editor.connection.vendor)
    if sql:
        schema_editor.execute(sql)


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0010_benchmark_slug_from_registry"),
        ("config", "0002_state_history_insert_only_trigger"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [migrations.RunPython(copy_history, migrations.RunPython.noop)]
