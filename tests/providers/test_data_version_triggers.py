"""The database raises the data version after a write to any table a filter's lookups or counts depend on
(providers.models.DATA_VERSION_TABLES), whoever writes it: the triggers that migrations 0009 and 0014 create through
providers.migration_ops. A table left without its trigger would let kept lookups outlive the data they came from."""

import pytest
from django.db import connection

from providers.models import DATA_VERSION_TABLES, DataVersion

pytestmark = [pytest.mark.django_db,
              pytest.mark.skipif(connection.vendor != "postgresql", reason="statement-level triggers: PostgreSQL's")]


def version() -> int:
    return DataVersion.objects.get_or_create(id=1)[0].version


@pytest.mark.parametrize("table", DATA_VERSION_TABLES)
def test_a_write_to_each_table_raises_the_data_version_once(table):
    before = version()
    with connection.cursor() as cursor:
        cursor.execute(f"UPDATE {table} SET id = id WHERE id < 0")  # a statement that writes no row still counts
    assert version() == before + 1


def test_a_table_outside_the_list_leaves_the_version_alone():
    before = version()
    with connection.cursor() as cursor:
        cursor.execute("UPDATE providers_priceobservation SET id = id WHERE id < 0")
    assert version() == before
