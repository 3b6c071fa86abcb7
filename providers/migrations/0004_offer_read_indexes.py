"""Indexes shaped like the OfferFilterSet's reads, replacing the three (is_active, x) / (x, is_active) ones.

Measured with EXPLAIN ANALYZE on 100,000 offers (bench/api.py's data): the old indexes left every filtered page to a
sequential scan of the whole table twice (count, then page), and even the default page to a sort of its first price
group, because the id tiebreak of every ordering was in no index. Each new index is partial on is_active (the
default of every page, the API and the digest; `include_inactive=true` reads are rare and still correct) and ends in
id, so a page is read in index order and stops after one page, and a count is an index-only scan:

- (price_per_gpu_hour_usd, id) including gpu and provider: the default order. The planner walks it for a filtered
  page too when it expects the matches to be spread evenly over prices; they are not (H100 offers are dear, so the
  cheapest of them is 30,000 entries in), and the included columns make that walk an index-only scan (7 ms instead
  of 31 ms for `gpu=h100,...&price_per_gpu_hour_max=4`);
- (gpu, price_per_gpu_hour_usd, id) and (provider, price_per_gpu_hour_usd, id): GPU, provider and capability filters,
  which the FilterSet resolves to literal id lists first, so the planner can estimate them;
- (price_hour_usd, id): the per-instance price order (the page's "per instance" unit);
- (gpu_memory_gb DESC NULLS LAST, id) including gpu_count: largest memory first, and counts of "N GPUs with M GB"
  from the index alone.

`last_seen` stays out of every index, so the per-run last_seen update stays a HOT update (migration 0003).
"""

from django.db import migrations, models

from providers.migration_ops import AddIndexOnPostgreSQL

ACTIVE = models.Q(("is_active", True))


class Migration(migrations.Migration):
    dependencies = [("providers", "0003_offer_fillfactor")]

    operations = [
        migrations.RemoveIndex(model_name="offer", name="providers_o_is_acti_205ad0_idx"),
        migrations.RemoveIndex(model_name="offer", name="providers_o_gpu_id_d13e7a_idx"),
        migrations.RemoveIndex(model_name="offer", name="providers_o_provide_6c6cd8_idx"),
        migrations.AddIndex(
            model_name="offer",
            index=models.Index(condition=ACTIVE, fields=["price_per_gpu_hour_usd", "id"], include=["gpu", "provider"],
                               name="offer_active_price"),
        ),
        migrations.AddIndex(
            model_name="offer",
            index=models.Index(condition=ACTIVE, fields=["gpu", "price_per_gpu_hour_usd", "id"],
                               name="offer_active_gpu_price"),
        ),
        migrations.AddIndex(
            model_name="offer",
            index=models.Index(condition=ACTIVE, fields=["provider", "price_per_gpu_hour_usd", "id"],
                               name="offer_active_provider_price"),
        ),
        migrations.AddIndex(
            model_name="offer",
            index=models.Index(condition=ACTIVE, fields=["price_hour_usd", "id"], name="offer_active_price_hour"),
        ),
        AddIndexOnPostgreSQL(
            model_name="offer",
            index=models.Index(models.OrderBy(models.F("gpu_memory_gb"), descending=True, nulls_last=True),
                               models.F("id"), condition=ACTIVE, include=["gpu_count"], name="offer_active_memory_desc"),
        ),
    ]
