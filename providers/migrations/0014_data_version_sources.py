"""The data sources join the data version (migration 0009): an offers page shows each offer's source, its last
success and whether it is stale, so a page kept under the version (the API's kept pages, providers.api) must be
written again when a source row changes (a run's success, an admin edit). Same triggers as 0009's."""

from django.db import migrations

from providers.migration_ops import data_version_triggers_add, data_version_triggers_drop

TABLES = ("providers_datasource",)


def create_triggers(apps, schema_editor):
    data_version_triggers_add(schema_editor, TABLES)


def drop_triggers(apps, schema_editor):
    data_version_triggers_drop(schema_editor, TABLES)


class Migration(migrations.Migration):
    dependencies = [("providers", "0013_offer_memory_price_index")]

    operations = [migrations.RunPython(create_triggers, drop_triggers)]
