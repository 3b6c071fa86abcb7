"""Two indexes by memory, largest first, then price per GPU-hour and id, within one GPU model and within one provider
(PostgreSQL only, as the memory index: SQLite cannot write NULLS LAST in an index; migrations 0004, 0013). Sorted by
memory, a GPU or provider list is read as one range per value (offer_reads.RANGE_INDEXED) where the page walked the
whole memory index: at 1,000,000 offers `gpu=t4g&offering=byo&spot=true&unknown=include&ordering=-gpu_memory` dropped
754,409 entries (676 ms) to find 50 offers of 16 GB; 0.47 ms with them. docs/performance.md has their cost."""

from django.db import migrations, models

from providers.migration_ops import AddIndexOnPostgreSQL

INCLUDED = ("kubernetes_profile", "continent", "country", "region_confirmed", "spot_price_hour", "gpu_count")


class Migration(migrations.Migration):

    dependencies = [
        ("providers", "0029_kubernetes_answers_confidence"),
    ]

    operations = [
        AddIndexOnPostgreSQL(
            model_name="offer",
            index=models.Index(models.F(key),
                               models.OrderBy(models.F("gpu_memory_gb"), descending=True, nulls_last=True),
                               models.OrderBy(models.F("price_per_gpu_hour_usd"), nulls_last=True), models.F("id"),
                               condition=models.Q(("is_active", True)), include=(other, *INCLUDED),
                               name=f"offer_active_{key}_memory"),
        )
        for key, other in (("gpu", "provider"), ("provider", "gpu"))
    ]
