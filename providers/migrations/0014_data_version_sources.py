"""The data sources join the data version (migration 0009): an offers page shows each offer's source, its last
success and whether it is stale, so a page kept under the version (the API's kept pages, providers.api) must be
written again when a source row changes (a run's success, an admin edit). Same triggers as 0009's."""

from django.db import migrations

TABLE = "providers_datasource"
BUMP = "UPDATE providers_dataversion SET version = version + 1 WHERE id = 1"


def create_triggers(apps, schema_editor):
    execute = schema_editor.execute
    if schema_editor.connection.vendor == "postgresql":
        execute(f"CREATE TRIGGER {TABLE}_data_version AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON {TABLE} "
                "FOR EACH STATEMENT EXECUTE FUNCTION providers_data_version_bump()")
    elif schema_editor.connection.vendor == "sqlite":
        for operation in ("INSERT", "UPDATE", "DELETE"):
            execute(f"CREATE TRIGGER {TABLE}_data_version_{operation.lower()} AFTER {operation} ON {TABLE} "
                    f"BEGIN {BUMP}; END")


def drop_triggers(apps, schema_editor):
    execute = schema_editor.execute
    if schema_editor.connection.vendor == "postgresql":
        execute(f"DROP TRIGGER IF EXISTS {TABLE}_data_version ON {TABLE}")
    elif schema_editor.connection.vendor == "sqlite":
        for operation in ("insert", "update", "delete"):
            execute(f"DROP TRIGGER IF EXISTS {TABLE}_data_version_{operation}")


class Migration(migrations.Migration):
    dependencies = [("providers", "0013_offer_memory_price_index")]

    operations = [migrations.RunPython(create_triggers, drop_triggers)]
