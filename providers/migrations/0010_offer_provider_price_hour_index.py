"""(provider, price_hour_usd, id) including spot_price_hour, partial on active offers: a provider list ordered by
instance-hour (`provider=azure,oci&spot=true&ordering=price_hour`) is read as one range per provider merged in order
(offer_reads.offer_page_ids), and its spot count is an index-only scan of those ranges instead of a sequential scan of
the whole table (113 ms at 1,000,000 offers before; bench/scale.py prints the plans). `last_seen` stays out."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('providers', '0009_data_version'),
    ]

    operations = [
        migrations.AddIndex(
            model_name='offer',
            index=models.Index(condition=models.Q(('is_active', True)), fields=['provider', 'price_hour_usd', 'id'], include=('spot_price_hour',), name='offer_active_provider_hour'),
        ),
    ]
