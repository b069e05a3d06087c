"""The database itself refuses to rewrite the state history (as it did for `annotation_historyentry`):
PostgreSQL refuses UPDATE and DELETE; SQLite refuses UPDATE (Django's test flush empties tables
with DELETE there, while PostgreSQL uses TRUNCATE, which row triggers do not see)."""

from django.db import migrations

PG_UP = """
CREATE OR REPLACE FUNCTION config_state_change_is_insert_only() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'config_statechange is insert-only';
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER config_statechange_insert_only
    BEFORE UPDATE OR DELETE ON config_statechange
    FOR EACH ROW EXECUTE FUNCTION config_state_change_is_insert_only();
"""
PG_DOWN = """
DROP TRIGGER IF EXISTS config_statechange_insert_only ON config_statechange;
DROP FUNCTION IF EXISTS config_state_change_is_insert_only();
"""
SQLITE_UP = """
CREATE TRIGGER config_statechange_no_update BEFORE UPDATE ON config_statechange
BEGIN SELECT RAISE(ABORT, 'config_statechange is insert-only'); END;
"""
SQLITE_DOWN = "DROP TRIGGER IF EXISTS config_statechange_no_update;"


def _run(sql_by_vendor):
    def run(apps, schema_editor):
        sql = sql_by_vendor.get(schema_editor.connection.vendor)
        if sql:
            schema_editor.execute(sql)

    return run


class Migration(migrations.Migration):
    dependencies = [("config", "0001_state_history")]

    operations = [
        migrations.RunPython(
            _run({"postgresql": PG_UP, "sqlite": SQLITE_UP}),
            _run({"postgresql": PG_DOWN, "sqlite": SQLITE_DOWN}),
        ),
    ]
