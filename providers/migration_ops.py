"""What the hand-written migrations share, defined once: index operations that run on PostgreSQL only, and the
triggers that raise the data version after every write to a table (migrations 0004, 0009, 0013, 0014, 0025).

Migrations import this module, so what it does must not change for a migration already applied: add, never edit."""

from __future__ import annotations

from django.db import migrations

BUMP = "UPDATE providers_dataversion SET version = version + 1 WHERE id = 1"


class OnPostgreSQL:
    """An operation run on PostgreSQL only: SQLite (the embedded development default) cannot write NULLS LAST or
    INCLUDE in an index definition. Without the index SQLite sorts instead of reading in order; the state is the
    same on both."""

    def database_forwards(self, app_label, schema_editor, from_state, to_state):
        if schema_editor.connection.vendor == "postgresql":
            super().database_forwards(app_label, schema_editor, from_state, to_state)

    def database_backwards(self, app_label, schema_editor, from_state, to_state):
        if schema_editor.connection.vendor == "postgresql":
            super().database_backwards(app_label, schema_editor, from_state, to_state)


class AddIndexOnPostgreSQL(OnPostgreSQL, migrations.AddIndex):
    pass


class RemoveIndexOnPostgreSQL(OnPostgreSQL, migrations.RemoveIndex):
    pass


def data_version_triggers_add(schema_editor, tables) -> None:
    """After every write to each table, the data version goes up: one statement-level trigger per table on
    PostgreSQL (calling providers_data_version_bump(), created by migration 0009), one row-level trigger per table
    and operation on SQLite, which has no other kind."""
    execute = schema_editor.execute
    for table in tables:
        if schema_editor.connection.vendor == "postgresql":
            execute(f"CREATE TRIGGER {table}_data_version AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON {table} "
                    "FOR EACH STATEMENT EXECUTE FUNCTION providers_data_version_bump()")
        elif schema_editor.connection.vendor == "sqlite":
            for operation in ("INSERT", "UPDATE", "DELETE"):
                execute(f"CREATE TRIGGER {table}_data_version_{operation.lower()} AFTER {operation} ON {table} "
                        f"BEGIN {BUMP}; END")


def data_version_triggers_drop(schema_editor, tables) -> None:
    execute = schema_editor.execute
    for table in tables:
        if schema_editor.connection.vendor == "postgresql":
            execute(f"DROP TRIGGER IF EXISTS {table}_data_version ON {table}")
        elif schema_editor.connection.vendor == "sqlite":
            for operation in ("insert", "update", "delete"):
                execute(f"DROP TRIGGER IF EXISTS {table}_data_version_{operation}")
