import django.db.models.deletion
from django.db import migrations, models

# A submitted step is frozen: the database refuses to change a row once `submitted_at` is set.
# SQLite guards updates only (Django's test flush empties tables with DELETE there); PostgreSQL
# also refuses deleting a submitted step (its flush uses TRUNCATE, which row triggers do not see).
PG_UP = """
CREATE OR REPLACE FUNCTION annotation_stagedstep_frozen() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'annotation_stagedstep: a submitted step cannot change';
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER annotation_stagedstep_frozen
    BEFORE UPDATE OR DELETE ON annotation_stagedstep
    FOR EACH ROW WHEN (OLD.submitted_at IS NOT NULL) EXECUTE FUNCTION annotation_stagedstep_frozen();
"""
PG_DOWN = """
DROP TRIGGER IF EXISTS annotation_stagedstep_frozen ON annotation_stagedstep;
DROP FUNCTION IF EXISTS annotation_stagedstep_frozen();
"""
SQLITE_UP = """
CREATE TRIGGER annotation_stagedstep_frozen BEFORE UPDATE ON annotation_stagedstep
WHEN OLD.submitted_at IS NOT NULL
BEGIN SELECT RAISE(ABORT, 'annotation_stagedstep: a submitted step cannot change'); END;
"""
SQLITE_DOWN = "DROP TRIGGER IF EXISTS annotation_stagedstep_frozen;"


def _run(sql_by_vendor):
    def run(apps, schema_editor):
        sql = sql_by_vendor.get(schema_editor.connection.vendor)
        if sql:
            schema_editor.execute(sql)

    return run


class Migration(migrations.Migration):

    dependencies = [
        ('annotation', '0006_videosplit'),
    ]

    operations = [
        migrations.CreateModel(
            name='StagedStep',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('step', models.CharField(choices=[('forecaster', 'Forecaster'), ('detective', 'Detective'), ('reporter', 'Reporter')], max_length=16)),
                ('draft', models.JSONField(blank=True, default=dict)),
                ('draft_revision', models.PositiveIntegerField(default=0)),
                ('draft_saved_at', models.DateTimeField(blank=True, null=True)),
                ('answers', models.JSONField(blank=True, help_text='the submitted answers; frozen once set', null=True)),
                ('active_seconds', models.FloatField(default=0, help_text='time with the page visible and focused')),
                ('wall_seconds', models.FloatField(blank=True, help_text="from the step's opening to its submission", null=True)),
                ('started_at', models.DateTimeField(help_text="when the step opened (the claim's time for the first step)")),
                ('submitted_at', models.DateTimeField(blank=True, null=True)),
                ('claim', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='staged_steps', to='annotation.claim')),
            ],
            options={
                'ordering': ['claim_id', 'started_at', 'id'],
                'constraints': [models.UniqueConstraint(fields=('claim', 'step'), name='one_staged_step_per_claim_and_step'), models.CheckConstraint(condition=models.Q(('step__in', ('forecaster', 'detective', 'reporter'))), name='staged_step_known_step'), models.CheckConstraint(condition=models.Q(models.Q(('answers__isnull', True), ('submitted_at__isnull', True)), models.Q(('answers__isnull', False), ('submitted_at__isnull', False), ('wall_seconds__isnull', False)), _connector='OR'), name='staged_step_submitted_with_answers')],
            },
        ),
        migrations.RunPython(
            _run({"postgresql": PG_UP, "sqlite": SQLITE_UP}),
            _run({"postgresql": PG_DOWN, "sqlite": SQLITE_DOWN}),
        ),
    ]
