"""A small world of providers, capabilities, GPUs and offers for the API tests, built in code (no recordings), and
an API client with the rate limit switched off (the throttling tests switch it back on)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal

import pytest
from django.core.cache import cache
from django.utils import timezone
from rest_framework.test import APIClient

from providers.models import Capability, GpuModel, Offer, RunStatus, ScrapeRun
from tests.factories import DataSourceFactory, ProviderFactory


@pytest.fixture(autouse=True)
def _no_rate_limit(settings, monkeypatch):
    settings.API_ANON_RATE = None
    cache.clear()
    # Rate windows are fixed (providers.limits.window_hit): hold their clock 30 s into a minute (and an hour), so
    # a test's requests never straddle the end of a window and count twice the limit.
    monkeypatch.setattr("providers.limits._now", lambda: 1_800_000_030.0)


@pytest.fixture
def api():
    return APIClient()


def gpu(slug, name, vendor, family, memory_gb, mig=()):
    return GpuModel.objects.create(
        slug=slug, name=name, vendor=vendor, family=family, architecture="test", memory_gb=Decimal(memory_gb),
        form_factor="SXM", mig_profiles=list(mig), mig_source_url="https://example.org/mig" if mig else "",
        source_url="https://example.org/gpu", verified_on=date(2026, 1, 1),
    )


def capabilities(provider, **answers):
    """`mig="yes"` or `mps=("yes", "inferred")`; control_plane_fee may be ("paid", "documented", amount, currency)."""
    for key, answer in answers.items():
        value, confidence, *fee = answer if isinstance(answer, tuple) else (answer, "documented")
        Capability.objects.create(
            provider=provider, key=key, value=value, label=f"{key} label", source_url=f"https://example.org/{key}",
            verified_on=date(2026, 1, 2), confidence=confidence,
            amount=Decimal(fee[0]) if fee else None, currency=fee[1] if fee else "",
        )


def offer(name, provider, source, gpu_model, *, count="1", memory=None, price=None, spot=None, availability="unknown",
          country="", continent="", region="r1", seen_hours_ago=0, active=True, share_7d=None, form_factor="",
          region_confirmed=True, commit_1y=None, commit_3y=None):
    now = timezone.now()
    count = Decimal(count)
    price_usd = Decimal(price) if price is not None else None
    spot_usd = Decimal(spot) if spot is not None else None
    return Offer.objects.create(
        provider=provider, source=source, instance_type=name, region=region, country=country, continent=continent,
        region_confirmed=region_confirmed, gpu=gpu_model, gpu_name=gpu_model.family if gpu_model else "Z9",
        gpu_count=count,
        gpu_memory_gb=Decimal(memory) if memory is not None else (gpu_model.memory_gb if gpu_model else None),
        currency="USD", price_hour=price_usd, spot_price_hour=spot_usd, price_hour_usd=price_usd,
        spot_price_hour_usd=spot_usd,
        price_per_gpu_hour_usd=price_usd / count if price_usd is not None else None,
        spot_price_per_gpu_hour_usd=spot_usd / count if spot_usd is not None else None,
        availability=availability, first_seen=now - timedelta(days=10),
        last_seen=now - timedelta(hours=seen_hours_ago), is_active=active, form_factor=form_factor,
        in_stock_share_7d=Decimal(share_7d) if share_7d is not None else None,
        availability_checked_at=now - timedelta(minutes=12) if share_7d is not None else None,
        **{f"commit_{term}_price{unit}_hour_usd": None if value is None else Decimal(value) / divisor
           for term, value in (("1y", commit_1y), ("3y", commit_3y))
           for unit, divisor in (("", 1), ("_per_gpu", count))},
    )


def succeeded(source, hours_ago=1):
    """A successful run, recorded as runs.source_scrape records one (run row and the source's last success)."""
    started = timezone.now() - timedelta(hours=hours_ago)
    source.last_success_at = started
    source.save(update_fields=["last_success_at"])
    return ScrapeRun.objects.create(source=source, started_at=started, finished_at=started,
                                    status=RunStatus.SUCCEEDED, created=1)


@dataclass
class World:
    offers: dict[str, Offer]
    sources: dict

    def ids(self, *names: str) -> set[int]:
        return {self.offers[name].id for name in names}


@pytest.fixture
def world(db) -> World:
    """Three providers that answer the Kubernetes questions differently, three GPUs, six offers (one inactive)."""
    alpha = ProviderFactory(slug="alpha", name="Alpha Cloud", kind="hyperscaler")
    beta = ProviderFactory(slug="beta", name="Beta GPUs", kind="gpu_cloud")
    gamma = ProviderFactory(slug="gamma", name="Gamma Market", kind="marketplace")
    capabilities(alpha, offering="managed", control_plane_fee=("paid", "documented", "0.10", "USD"),
                 gpu_operator="preinstalled", mig="yes", mps="no", time_slicing="yes", vendor_sharing="no",
                 infiniband="yes", node_autoscaling="yes", scale_to_zero="yes", spot_nodes="yes", rwx_storage="yes",
                 gang_scheduling="yes", nvidia="yes")
    capabilities(beta, offering="byo", control_plane_fee="n/a", gpu_operator="user_installs",
                 mps=("yes", "inferred"), time_slicing="no", vendor_sharing="n/a", roce="yes", node_autoscaling="no",
                 scale_to_zero="no", spot_nodes="no", rwx_storage="no", gang_scheduling="no")
    capabilities(gamma, offering="managed", control_plane_fee="free", gpu_operator="add_on", mig="unknown")
    h100 = gpu("h100-sxm", "NVIDIA H100 SXM 80GB", "nvidia", "H100", "80", mig=["1g.10gb", "7g.80gb"])
    l4 = gpu("l4", "NVIDIA L4 24GB", "nvidia", "L4", "24")
    mi300x = gpu("mi300x", "AMD Instinct MI300X", "amd", "MI300", "192")
    sources = {
        "alpha": DataSourceFactory(slug="alpha-api", provider=alpha, kind="api"),
        "beta": DataSourceFactory(slug="beta-catalog", provider=beta, kind="catalog", revision="abc123"),
        "gamma": DataSourceFactory(slug="gamma-api", provider=gamma, kind="api"),
    }
    for source in sources.values():
        succeeded(source)
    offers = {
        "alpha-h100x8": offer("alpha-h100x8", alpha, sources["alpha"], h100, count="8", price="80", spot="30",
                              availability="available", country="US", continent="NA", region="us-east-1",
                              share_7d="0.95", form_factor="sxm", commit_1y="56", commit_3y="36"),
        "alpha-l4": offer("alpha-l4", alpha, sources["alpha"], l4, price="0.8", availability="unavailable",
                          country="DE", continent="EU", region="eu-central-1", share_7d="0.1", commit_3y="0.4"),
        "beta-h100": offer("beta-h100", beta, sources["beta"], h100, price="2.5", availability="limited",
                           country="JP", continent="AS", region="tokyo", seen_hours_ago=2, share_7d="0.5"),
        "beta-mi300x8": offer("beta-mi300x8", beta, sources["beta"], mi300x, count="8", price="24",
                              country="US", continent="NA", region="us-west", seen_hours_ago=100),
        "gamma-unknown-gpu": offer("gamma-unknown-gpu", gamma, sources["gamma"], None, count="2",
                                   availability="available", country="FR", continent="EU", region="paris"),
        "gamma-gone": offer("gamma-gone", gamma, sources["gamma"], l4, price="0.5", country="FR", continent="EU",
                            region="paris", active=False),
    }
    # The instance-type layer: which machines can be managed nodes and which fabric each has (beta rents BYO
    # machines: no managed-node facts needed). Then every offer's answers are derived, as an ingest would.
    instance_facts(alpha, {"alpha-h100x8": {"managed_node": "yes", "fabric": "infiniband"},
                           "alpha-l4": {"managed_node": "yes", "fabric": "none"}})
    instance_facts(beta, {"beta-*": {"fabric": "roce"}})
    instance_facts(gamma, {"gamma-*": {"managed_node": "yes"}})
    return World(offers=offers, sources=sources)


def instance_facts(provider, facts: dict[str, dict[str, str]]):
    """{pattern: {key: value}} stored as documented curated instance facts; recomputes the provider's answers."""
    from providers.facts_sync import instance_facts_sync
    from providers.kubernetes import Fact

    records = [Fact(pattern=pattern, key=key, value=value, source_url=f"https://example.org/{pattern}",
                                  verified_on=date(2026, 1, 3), confidence="documented")
               for pattern, cells in facts.items() for key, value in cells.items()]
    instance_facts_sync(provider_slug=provider.slug, origin="curated", facts=records)


def result_ids(response) -> list[int]:
    assert response.status_code == 200, response.content
    return [row["id"] for row in response.json()["results"]]
