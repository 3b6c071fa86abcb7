"""Offers on real provider slugs (their node labels come from providers/data/node_labels.toml), built in code."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

import pytest

from tests.api.conftest import gpu, offer, succeeded
from tests.factories import DataSourceFactory, ProviderFactory

AS_OF = datetime(2026, 8, 3, tzinfo=UTC)


@pytest.fixture
def machines(db, settings):
    settings.API_ANON_RATE = None
    h100 = gpu("h100-sxm", "NVIDIA H100 SXM 80GB", "nvidia", "H100", "80")
    l4 = gpu("l4", "NVIDIA L4 24GB", "nvidia", "L4", "24")
    a100 = gpu("a100-80gb", "NVIDIA A100 80GB", "nvidia", "A100", "80")
    mi300 = gpu("mi300x", "AMD Instinct MI300X", "amd", "MI300", "192")
    made = {}

    def add(slug, name, model, region, price, count="1", spot=None, share=None, fraction=None):
        provider = ProviderFactory(slug=slug)
        source = DataSourceFactory(slug=f"{slug}-src", provider=provider)
        succeeded(source)
        row = offer(name, provider, source, model, count=count, price=price, spot=spot, region=region,
                    share_7d=share)
        row.price_as_of = AS_OF
        row.gpu_fraction = Decimal(fraction) if fraction else None
        row.save()
        made[(slug, name, region)] = row
        return row

    add("gcp", "a3-highgpu-8g", h100, "us-central1", "88.49", count="8", spot="30.1")
    add("gcp", "a3-highgpu-8g", h100, "europe-west4", "96.77", count="8")
    add("gcp", "a3-highgpu-1g", h100, "us-central1", "11.06")
    add("gcp", "g2-standard-4", l4, "us-central1", "0.70683", spot="0.3")
    add("azure", "Standard_NC24ads_A100_v4", a100, "eastus", "3.673", spot="0.404", share="0.2")
    add("aws", "p5.48xlarge", h100, "us-east-1", "55.04", count="8", share="0.9")
    add("aws", "g6f.large", l4, "us-east-1", "0.202", count="0.125", fraction="0.125")
    add("lambda", "gpu_1x_h100_sxm5", h100, "us-east-1", "2.99")
    add("oci", "BM.GPU.A10.4", l4, "us-ashburn-1", "8.0", count="4")
    add("oci", "BM.GPU.A10.4", l4, "eu-frankfurt-1", "8.0", count="4")
    add("oci", "VM.GPU.A10.1", l4, "us-ashburn-1", "2.0")
    add("oci", "VM.GPU.A10.1", l4, "eu-frankfurt-1", "2.5")
    add("oci", "BM.GPU H100.8", h100, "us-ashburn-1", "80", count="8")
    add("azure", "Standard_ND96isr_MI300X_v5", mi300, "eastus", "48", count="8")
    add("vultr", "vcg-a100-12c-120g-80vram", a100, "ewr", "2.397")
    return made
