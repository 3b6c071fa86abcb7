"""Small builders for the page tests: a known set of providers, capabilities, GPU models and offers.

The shape of the data is chosen so each filter and badge has something to find: two managed providers with
MIG and InfiniBand (one cheap, one dear), a bring-your-own provider without sources for most questions, and a
provider whose only source has not succeeded for days (stale)."""

from __future__ import annotations

import re
from datetime import date, timedelta
from decimal import Decimal

from django.utils import timezone

from providers.models import Capability, DataSource, ExchangeRate, GpuModel, Offer, PriceObservation, Provider

VERIFIED = date(2026, 11, 1)


def gpu(slug="h100-sxm", name="NVIDIA H100 SXM5 80GB", family="H100", memory="80", mig=("1g.10gb", "7g.80gb")):
    return GpuModel.objects.get_or_create(slug=slug, defaults=dict(
        name=name, vendor="nvidia", family=family, architecture="Hopper", memory_gb=Decimal(memory),
        memory_type="HBM3", form_factor="SXM", mig_profiles=list(mig),
        mig_source_url="https://docs.nvidia.com/datacenter/tesla/mig-user-guide/" if mig else "",
        source_url="https://www.nvidia.com/en-us/data-center/h100/", verified_on=VERIFIED))[0]


def provider(slug, name=None, *, kind="gpu_cloud", caps=None, name_zh=""):
    """A provider and its capability cells: caps maps key -> value (or (value, label))."""
    prov = Provider.objects.create(slug=slug, name=name or slug.title(), name_zh=name_zh,
                                   website=f"https://{slug}.example.com/", kind=kind, headquarters="US")
    for key, value in (caps or {}).items():
        value, label = value if isinstance(value, tuple) else (value, "")
        Capability.objects.create(
            provider=prov, key=key, value=value, label=label,
            source_url=f"https://docs.{slug}.example.com/{key}" if value != "unknown" else "",
            verified_on=VERIFIED if value != "unknown" else None,
            confidence="documented" if value != "unknown" else "")
    return prov


def source(prov, *, last_success_hours=1):
    return DataSource.objects.create(
        slug=f"{prov.slug}-api", name=f"{prov.name} API", kind="api", provider=prov,
        url=f"https://api.{prov.slug}.example.com/",
        last_success_at=timezone.now() - timedelta(hours=last_success_hours))


def offer(prov, src, gpu_model, instance_type, price_per_gpu, *, count=1, region="us-east-1", spot=None,
          availability="unknown", seen_hours=1, **extra):
    now = timezone.now()
    per_gpu = Decimal(price_per_gpu)
    created = Offer.objects.create(
        provider=prov, source=src, instance_type=instance_type, region=region, country=extra.pop("country", "US"),
        continent=extra.pop("continent", "NA"),
        region_confirmed=extra.pop("region_confirmed", True), gpu=gpu_model,
        gpu_name=gpu_model.name if gpu_model else "Mystery GPU", gpu_count=Decimal(count),
        gpu_memory_gb=gpu_model.memory_gb if gpu_model else None, currency="USD",
        price_hour=per_gpu * count, price_hour_usd=per_gpu * count, price_per_gpu_hour_usd=per_gpu,
        spot_price_hour=Decimal(spot) * count if spot else None,
        spot_price_hour_usd=Decimal(spot) * count if spot else None,
        spot_price_per_gpu_hour_usd=Decimal(spot) if spot else None,
        availability=availability, first_seen=now - timedelta(days=10), last_seen=now - timedelta(hours=seen_hours),
        **extra)
    PriceObservation.objects.create(offer=created, observed_at=created.first_seen, price_hour=created.price_hour,
                                    price_hour_usd=created.price_hour_usd, currency="USD",
                                    availability=availability)
    return created


FULL = {"offering": ("managed", "Acme Kubernetes"), "mig": "yes", "infiniband": "yes", "roce": "n/a", "efa": "n/a",
        "gpudirect_tcpx": "n/a", "scale_to_zero": "yes", "spot_nodes": "yes", "rwx_storage": "yes",
        "control_plane_fee": "free", "gpu_operator": "preinstalled"}


def catalog():
    """The known subset: returns a dict of the objects by name."""
    h100 = gpu()
    a100 = gpu("a100-sxm4-80gb", "NVIDIA A100 SXM4 80GB", "A100", "80", mig=("1g.10gb",))
    l4 = gpu("l4", "NVIDIA L4 24GB", "L4", "24", mig=())
    acme = provider("acme", "Acme Cloud", caps=FULL, name_zh="阿克米云")
    dear = provider("dearco", "Dear Co", caps=FULL)
    byo = provider("metal", "Metal Rentals", caps={"offering": "byo", "mig": "unknown", "infiniband": "no"})
    old = provider("oldie", "Oldie GPUs", caps={"offering": "managed", "mig": "no"})
    sources = {p.slug: source(p) for p in (acme, dear, byo)}
    sources["oldie"] = source(old, last_success_hours=24 * 5)
    objects = {
        "acme_h100": offer(acme, sources["acme"], h100, "acme.h100x8", "2.50", count=8, spot="1.10",
                           availability="available", available_count=3),
        "acme_l4": offer(acme, sources["acme"], l4, "acme.l4", "0.70"),
        "dear_h100": offer(dear, sources["dearco"], h100, "dear.h100", "4.20"),
        "metal_h100": offer(byo, sources["metal"], h100, "metal.h100", "1.90"),
        "metal_a100": offer(byo, sources["metal"], a100, "metal.a100", "1.20"),
        "old_h100": offer(old, sources["oldie"], h100, "old.h100", "2.10", seen_hours=24 * 5),
    }
    objects.update(h100=h100, a100=a100, l4=l4, acme=acme, dear=dear, byo=byo, old=old)
    # The instance-type layer, then every offer's derived answers (as an ingest stores them).
    from tests.api.conftest import instance_facts

    instance_facts(acme, {"acme.h100x8": {"managed_node": "yes", "fabric": "infiniband"},
                          "acme.l4": {"managed_node": "yes", "fabric": "none"}})
    instance_facts(dear, {"dear.*": {"managed_node": "yes"}})
    from providers.kubernetes_profiles import offer_kubernetes_refresh

    offer_kubernetes_refresh()  # the providers without instance facts too
    return objects


def rates(day=date(2026, 11, 27)):
    """ECB-style rates: 1 EUR = 1.25 USD = 9.00 CNY (round numbers so conversions are easy to check)."""
    for currency, per_eur in (("USD", "1.25"), ("CNY", "9.00")):
        ExchangeRate.objects.create(currency=currency, date=day, per_eur=Decimal(per_eur),
                                    source_url="https://www.ecb.europa.eu/")


def answer_list(client, row: str) -> str:
    """The answers a row's disclosure fetches when opened (htmx), as the browser would ask for them."""
    [url] = re.findall(r'<details class="k8s" hx-get="([^"]+)"', row)
    response = client.get(url, HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    return response.content.decode()


def shown(html: str) -> str:
    """The page's text as a reader sees it, without its tags: dates are <time> elements, data text in a Chinese page
    carries lang="en" marks, regions translate="no"; assertions on wording read through them."""
    return re.sub(r"<[^>]+>", "", html)
