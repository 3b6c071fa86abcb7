"""A data-version counter that the database itself raises after every write to the tables offer counts and filter
lookups depend on (providers.models.DATA_VERSION_TABLES), so cached counts are valid until the data changes, not for a
fixed time (providers.versions.data_version).

PostgreSQL: one statement-level trigger per table (a COPY of a million offers raises it once). The counter row is
updated inside the writer's transaction, so a reader sees the new version exactly when it can see the new rows.
SQLite (the embedded default) has row-level triggers only: one per table and operation.
"""

from django.db import migrations, models

TABLES = ("providers_offer", "providers_capability", "providers_provider", "providers_gpumodel",
          "providers_exchangerate", "providers_instancetypefact", "providers_kubernetesprofile")
BUMP = "UPDATE providers_dataversion SET version = version + 1 WHERE id = 1"


def create_triggers(apps, schema_editor):
    apps.get_model("providers", "DataVersion").objects.create(id=1, version=0)
    execute = schema_editor.execute
    if schema_editor.connection.vendor == "postgresql":
        execute("CREATE FUNCTION providers_data_version_bump() RETURNS trigger LANGUAGE plpgsql AS "
                f"$$ BEGIN {BUMP}; RETURN NULL; END $$")
        for table in TABLES:
            execute(f"CREATE TRIGGER {table}_data_version AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON {table} "
                    "FOR EACH STATEMENT EXECUTE FUNCTION providers_data_version_bump()")
    elif schema_editor.connection.vendor == "sqlite":
        for table in TABLES:
            for operation in ("INSERT", "UPDATE", "DELETE"):
                execute(f"CREATE TRIGGER {table}_data_version_{operation.lower()} AFTER {operation} ON {table} "
                        f"BEGIN {BUMP}; END")


def drop_triggers(apps, schema_editor):
    execute = schema_editor.execute
    if schema_editor.connection.vendor == "postgresql":
        for table in TABLES:
            execute(f"DROP TRIGGER IF EXISTS {table}_data_version ON {table}")
        execute("DROP FUNCTION IF EXISTS providers_data_version_bump()")
    elif schema_editor.connection.vendor == "sqlite":
        for table in TABLES:
            for operation in ("insert", "update", "delete"):
                execute(f"DROP TRIGGER IF EXISTS {table}_data_version_{operation}")


class Migration(migrations.Migration):
    dependencies = [("providers", "0008_instance_facts_and_kubernetes_profiles")]

    operations = [
        migrations.CreateModel(
            name="DataVersion",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("version", models.BigIntegerField(default=0)),
            ],
        ),
        migrations.RunPython(create_triggers, drop_triggers),
    ]
