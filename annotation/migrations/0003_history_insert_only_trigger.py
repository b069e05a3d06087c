from django.db import migrations

PG_UP = """
CREATE OR REPLACE FUNCTION annotation_history_is_insert_only() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'annotation_historyentry is insert-only';
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER annotation_historyentry_insert_only
    BEFORE UPDATE OR DELETE ON annotation_historyentry
    FOR EACH ROW EXECUTE FUNCTION annotation_history_is_insert_only();
"""
PG_DOWN = """
DROP TRIGGER IF EXISTS annotation_historyentry_insert_only ON annotation_historyentry;
DROP FUNCTION IF EXISTS annotation_history_is_insert_only();
"""
# SQLite guards updates only: Django's test flush empties tables with DELETE there
# (PostgreSQL uses TRUNCATE, which row triggers do not see).
SQLITE_UP = """
CREATE TRIGGER annotation_historyentry_no_update BEFORE UPDATE ON annotation_historyentry
BEGIN SELECT RAISE(ABORT, 'annotation_historyentry is insert-only'); END;
"""
SQLITE_DOWN = "DROP TRIGGER IF EXISTS annotation_historyentry_no_update;"


def _run(sql_by_vendor):
    def run(apps, schema_editor):
        sql = sql_by_vendor.get(schema_editor.connection.vendor)
        if sql:
            schema_editor.execute(sql)

    return run


class Migration(migrations.Migration):
    dependencies = [("annotation", "0002_crowd_engine")]

    operations = [
        migrations.RunPython(
            _run({"postgresql": PG_UP, "sqlite": SQLITE_UP}),
            _run({"postgresql": PG_DOWN, "sqlite": SQLITE_DOWN}),
        ),
    ]
