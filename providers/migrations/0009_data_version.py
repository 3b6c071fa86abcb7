"""A data-version counter that the database itself raises after every write to the tables offer counts and filter
lookups depend on (providers.models.DATA_VERSION_TABLES), so cached counts are valid until the data changes, not for a
fixed time (providers.versions.data_version).

PostgreSQL: one statement-level trigger per table (a COPY of a million offers raises it once). The counter row is
updated inside the writer's transaction, so a reader sees the new version exactly when it can see the new rows.
SQLite (the embedded default) has row-level triggers only: one per table and operation.
"""

from django.db import migrations, models

from providers.migration_ops import BUMP, data_version_triggers_add, data_version_triggers_drop

TABLES = ("providers_offer", "providers_capability", "providers_provider", "providers_gpumodel",
          "providers_exchangerate", "providers_instancetypefact", "providers_kubernetesprofile")


def create_triggers(apps, schema_editor):
    apps.get_model("providers", "DataVersion").objects.create(id=1, version=0)
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("CREATE FUNCTION providers_data_version_bump() RETURNS trigger LANGUAGE plpgsql AS "
                              f"$$ BEGIN {BUMP}; RETURN NULL; END $$")
    data_version_triggers_add(schema_editor, TABLES)


def drop_triggers(apps, schema_editor):
    data_version_triggers_drop(schema_editor, TABLES)
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("DROP FUNCTION IF EXISTS providers_data_version_bump()")


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
