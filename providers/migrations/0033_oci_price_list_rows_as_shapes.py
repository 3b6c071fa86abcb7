"""Oracle's price list prices GPUs per GPU-hour under part names ("Oracle Cloud Infrastructure - Compute - GPU -
H100"); the OCI client stored each part as a machine of one GPU, which OCI does not rent. It now stores the shapes each
part prices (BM.GPU.H100.8: 8 GPUs at 8 times the part's price; scrapers/oci.py SHAPES). The per-GPU rows stored
before are no longer listed: they are marked inactive here (kept, with their price history), so the client's next run
is not refused by the shrink guard for leaving all of them unseen."""

from django.db import migrations


def forwards(apps, schema_editor):
    offers = apps.get_model("providers", "Offer")
    # Every part name has "Compute" in it ("OCI - Compute - GPU - H200"); no shape name has.
    offers.objects.filter(source__slug="oci", is_active=True, instance_type__contains="Compute").update(is_active=False)


class Migration(migrations.Migration):
    dependencies = [("providers", "0032_price_evidence_zh")]

    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
