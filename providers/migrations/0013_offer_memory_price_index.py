"""The memory index follows the memory ordering, which now breaks ties by the price per GPU-hour before the id
(every ordering does, so a provider's or a memory size's cheapest offers come first): (gpu_memory_gb DESC NULLS LAST,
price_per_gpu_hour_usd ASC NULLS LAST, id) on active offers, including gpu_count. Without it "8+ GPUs, 80+ GB, by
memory" sorted every matching offer (2.4x slower at 1,000,000 offers than at 100,000 in bench/scale.py).

PostgreSQL only, like the index it replaces (migration 0004): SQLite cannot write NULLS LAST in an index."""

from django.db import migrations, models

from providers.migration_ops import AddIndexOnPostgreSQL, RemoveIndexOnPostgreSQL


class Migration(migrations.Migration):

    dependencies = [
        ("providers", "0012_offer_profile_price_index"),
    ]

    operations = [
        RemoveIndexOnPostgreSQL(model_name="offer", name="offer_active_memory_desc"),
        AddIndexOnPostgreSQL(
            model_name="offer",
            index=models.Index(models.OrderBy(models.F("gpu_memory_gb"), descending=True, nulls_last=True),
                               models.OrderBy(models.F("price_per_gpu_hour_usd"), nulls_last=True),
                               models.F("id"), condition=models.Q(("is_active", True)), include=["gpu_count"],
                               name="offer_active_memory_price"),
        ),
    ]
