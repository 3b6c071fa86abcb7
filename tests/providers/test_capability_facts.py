"""Kubernetes facts from provider APIs: a valid capability fact replaces the curated cell with its provenance and
records a change only when the answer changed; an invalid one is refused and counted; free-form facts are stored
per source; all of it in the run's transaction."""

from datetime import date, timedelta
from decimal import Decimal

import pytest
from django.db import transaction
from django.utils import timezone

from providers import facts_sync, ingest, runs
from providers.curated import CapabilityRecord, ProviderRecord
from providers.models import Capability, CapabilityChange, KubernetesFact, RunStatus, ScrapeRun
from scrapers import registry
from scrapers.base import ScrapedCapability, ScrapeResult, SourceInfo
from tests.factories import DataSourceFactory, ScriptedSource, scraped

pytestmark = pytest.mark.django_db

API_URL = "https://api.example-gpu.test/v1/kubernetes/pricing"
CURATED_URL = "https://docs.example-gpu.test/kubernetes/pricing"


@pytest.fixture
def source():
    source = DataSourceFactory(slug="example-api", provider__slug="example-gpu", url=API_URL)
    Capability.objects.create(provider=source.provider, key="control_plane_fee", value="free",
                              source_url=CURATED_URL, verified_on=date(2026, 1, 5), confidence="documented")
    return source


def apply(source, *facts, kubernetes_facts=None, at=None):
    counts = ingest.SyncCounts()
    result = ScrapeResult(offers=[], capabilities=list(facts), kubernetes_facts=kubernetes_facts or {})
    with transaction.atomic():
        facts_sync.capability_facts_sync(source=source, result=result, fetched_at=at or timezone.now(), counts=counts)
    return counts


def paid(amount="0.10", label="Standard tier"):
    return ScrapedCapability(key="control_plane_fee", value="paid", source_url=API_URL, label=label,
                             amount=Decimal(amount), currency="USD")


def test_api_fact_replaces_curated_value_with_provenance_and_records_the_change(source):
    at = timezone.now()
    counts = apply(source, paid(), at=at)
    cell = Capability.objects.get(provider=source.provider, key="control_plane_fee")
    assert (cell.value, cell.amount, cell.currency, cell.label) == ("paid", Decimal("0.1"), "USD", "Standard tier")
    assert (cell.origin, cell.source_url, cell.confidence) == ("provider_api", API_URL, "documented")
    assert cell.fetched_at == at and cell.verified_on == at.date()
    change = CapabilityChange.objects.get(provider=source.provider, key="control_plane_fee")
    assert (change.old_value, change.new_value, change.origin, change.source_url) == (
        "free", "paid", "provider_api", API_URL)
    assert counts.capabilities_changed == 1


def test_same_fact_again_refreshes_dates_without_a_change_and_a_new_amount_is_a_change(source):
    apply(source, paid(), at=timezone.now() - timedelta(days=2))
    later = timezone.now()
    counts = apply(source, paid(), at=later)
    assert counts.capabilities_changed == 0
    assert CapabilityChange.objects.filter(provider=source.provider).count() == 1
    assert Capability.objects.get(provider=source.provider, key="control_plane_fee").fetched_at == later
    apply(source, paid(amount="0.12"))
    assert CapabilityChange.objects.filter(provider=source.provider).count() == 2


def test_curated_reload_keeps_the_provider_api_value(source):
    apply(source, paid())
    record = ProviderRecord(
        slug="example-gpu", name="Example GPU", name_zh="", website="https://example.org/", kind="gpu_cloud",
        headquarters="US",
        capabilities={"control_plane_fee": CapabilityRecord(
            key="control_plane_fee", value="free", source_url=CURATED_URL, verified_on=date(2026, 1, 5),
            confidence="documented")},
    )
    facts_sync.providers_sync(records=[record])
    cell = Capability.objects.get(provider=source.provider, key="control_plane_fee")
    assert (cell.value, cell.origin) == ("paid", "provider_api")


@pytest.mark.parametrize(
    ("fact", "reason"),
    [
        (ScrapedCapability(key="gpu_count_max", value="8", source_url=API_URL), "not a known question"),
        (ScrapedCapability(key="mig", value="maybe", source_url=API_URL), "must be one of"),
        (ScrapedCapability(key="mig", value="unknown", source_url=API_URL), "must be one of"),
        (ScrapedCapability(key="mig", value="yes", source_url=""), "source_url"),
        (ScrapedCapability(key="mig", value="yes", source_url="ftp://example.org/"), "source_url"),
        (ScrapedCapability(key="control_plane_fee", value="paid", source_url=API_URL), "amount"),
        (ScrapedCapability(key="control_plane_fee", value="paid", source_url=API_URL, amount=Decimal("-1"),
                           currency="USD"), "amount"),
        (ScrapedCapability(key="control_plane_fee", value="paid", source_url=API_URL, amount=Decimal("0.1")),
         "currency"),
    ],
)
def test_invalid_capability_fact_is_refused_counted_and_never_stored(source, fact, reason):
    before = list(Capability.objects.values())
    counts = apply(source, fact)
    assert counts.capabilities_rejected == 1 and counts.capabilities_changed == 0
    assert reason in counts.rejections[0]
    assert list(Capability.objects.values()) == before
    assert not CapabilityChange.objects.exists()


def test_kubernetes_facts_are_stored_per_source_and_upserted(source):
    first = timezone.now() - timedelta(hours=1)
    counts = apply(source, kubernetes_facts={"kubernetes_versions": ["1.31", "1.32"], "regions": {"us": 2}},
                   at=first)
    assert counts.facts_stored == 2
    later = timezone.now()
    apply(source, kubernetes_facts={"kubernetes_versions": ["1.32", "1.33"]}, at=later)
    versions = KubernetesFact.objects.get(source=source, name="kubernetes_versions")
    assert versions.value == ["1.32", "1.33"] and versions.fetched_at == later
    assert versions.source_url == API_URL and versions.display_value == "1.32, 1.33"
    # A fact the API no longer reports keeps its value and its older date, so its age shows.
    assert KubernetesFact.objects.get(source=source, name="regions").fetched_at == first


def test_kubernetes_fact_that_is_not_plain_json_is_refused(source):
    counts = apply(source, kubernetes_facts={"fee": Decimal("0.1"), "": "x", "versions": ["1.33"]})
    assert counts.capabilities_rejected == 2 and counts.facts_stored == 1
    assert list(KubernetesFact.objects.values_list("name", flat=True)) == ["versions"]


class FakeApiClient(ScriptedSource):
    info = SourceInfo(slug="example-api", provider="example-gpu", name="Example API", kind="api", url=API_URL)


def test_source_scrape_stores_facts_and_counts_them_on_the_run(source, monkeypatch):
    monkeypatch.setitem(registry.SOURCES, "example-api", FakeApiClient)
    FakeApiClient.response = ScrapeResult(
        offers=[scraped("a"), scraped("b")],
        capabilities=[paid(), ScrapedCapability(key="mig", value="sometimes", source_url=API_URL)],
        kubernetes_facts={"kubernetes_versions": ["1.33"]},
    )
    run = runs.source_scrape(slug="example-api")
    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED
    assert (run.created, run.capabilities_changed, run.capabilities_rejected, run.facts_stored) == (2, 1, 1, 1)
    assert any("sometimes" in reason for reason in run.rejections)


def test_failed_run_stores_no_capability_change(source, monkeypatch):
    monkeypatch.setitem(registry.SOURCES, "example-api", FakeApiClient)
    FakeApiClient.response = ScrapeResult(offers=[scraped(f"i{n}") for n in range(4)])
    runs.source_scrape(slug="example-api")
    # Three of four offers missing: refused as a shrunken response, and the facts it carried with it too.
    FakeApiClient.response = ScrapeResult(offers=[scraped("i0")], capabilities=[paid()],
                                          kubernetes_facts={"kubernetes_versions": ["1.33"]})
    run = runs.source_scrape(slug="example-api")
    assert run.status == RunStatus.FAILED and "would deactivate 3 of 4" in run.error
    assert Capability.objects.get(provider=source.provider, key="control_plane_fee").value == "free"
    assert not CapabilityChange.objects.exists() and not KubernetesFact.objects.exists()
    assert ScrapeRun.objects.get(pk=run.pk).capabilities_changed == 0


def test_an_api_fact_drops_the_curated_translation_it_replaces(source):
    Capability.objects.filter(provider=source.provider).update(label="Free tier", label_zh="免费档",
                                                               detail="No fee.", detail_zh="不收费。")
    apply(source, paid())
    cell = Capability.objects.get(provider=source.provider, key="control_plane_fee")
    assert (cell.label, cell.label_zh, cell.detail_zh) == ("Standard tier", "", "")
