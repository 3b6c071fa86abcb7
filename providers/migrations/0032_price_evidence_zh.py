"""Each source's price-dating evidence in Chinese (`price_evidence_zh`, from price_dating.toml's `evidence_zh`),
which Chinese pages show where they showed the English text. Sources registered before get it at their next run or
`load_snapshot` (runs.source_register writes both)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("providers", "0031_instance_fact_detail_zh")]

    operations = [migrations.AddField("datasource", "price_evidence_zh",
                                      models.TextField(blank=True, help_text="The same in Chinese"))]
