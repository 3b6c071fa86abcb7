"""The indexes a page walks in its own order (price per GPU-hour, instance price, memory) carry every column the
common filters check (WALKED_INDEX_INCLUDES: GPU, provider, machine profile, place, region basis, spot price, GPU
count and memory; PostgreSQL INCLUDE, other databases get the same keys without them). A selective filter in another
order walked the index until 50 offers matched, reading each entry's row from the table; now the walk is index-only.
At 1,000,000 offers (bench/api.py's data, one process, 2026-12-05), the slowest of 30 different requests per family:
GPU count and memory 560-670 ms -> 80-120 ms, `gpu=a40&gpu_memory_min=94&ordering=price_hour` 2.3 s -> 0.25 s,
the price ceiling with a rare continent by memory 0.95 s -> 0.19 s; the medians move little (docs/performance.md).

The memory index is PostgreSQL's only, as before (migrations 0004, 0013: SQLite cannot write NULLS LAST in an
index)."""

from django.db import migrations, models

from providers.migration_ops import AddIndexOnPostgreSQL, RemoveIndexOnPostgreSQL


WALKED = ("gpu", "provider", "kubernetes_profile", "continent", "country", "region_confirmed", "spot_price_hour",
          "gpu_count", "gpu_memory_gb")


class Migration(migrations.Migration):

    dependencies = [
        ("providers", "0024_continent_price_index"),
    ]

    operations = [
        migrations.RemoveIndex(model_name="offer", name="offer_active_price"),
        migrations.AddIndex(
            model_name="offer",
            index=models.Index(condition=models.Q(("is_active", True)), fields=["price_per_gpu_hour_usd", "id"],
                               include=WALKED, name="offer_active_price"),
        ),
        migrations.RemoveIndex(model_name="offer", name="offer_active_price_hour"),
        migrations.AddIndex(
            model_name="offer",
            index=models.Index(condition=models.Q(("is_active", True)), fields=["price_hour_usd", "id"],
                               include=(*WALKED, "price_per_gpu_hour_usd"), name="offer_active_price_hour"),
        ),
        RemoveIndexOnPostgreSQL(model_name="offer", name="offer_active_memory_price"),
        AddIndexOnPostgreSQL(
            model_name="offer",
            index=models.Index(models.OrderBy(models.F("gpu_memory_gb"), descending=True, nulls_last=True),
                               models.OrderBy(models.F("price_per_gpu_hour_usd"), nulls_last=True),
                               models.F("id"), condition=models.Q(("is_active", True)),
                               include=[name for name in WALKED if name != "gpu_memory_gb"],
                               name="offer_active_memory_price"),
        ),
    ]
