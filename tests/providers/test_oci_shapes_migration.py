"""Migration 0033: the OCI price list's per-GPU rows, stored as one-GPU machines before, are marked inactive, so the
client's first run that stores the shapes instead is not refused by the shrink guard for leaving them all unseen."""

from importlib import import_module

import pytest
from django.apps import apps
from django.db import transaction
from django.utils import timezone

from providers import facts_sync, ingest
from providers.ingest import ShrinkRefusedError
from providers.models import Offer, ScrapeRun
from scrapers import registry
from tests.factories import DataSourceFactory, result, scraped

pytestmark = pytest.mark.django_db
migration = import_module("providers.migrations.0033_oci_price_list_rows_as_shapes")
PER_GPU = ("Oracle Cloud Infrastructure - Compute - GPU - H100", "OCI - Compute - GPU - H200", "Compute - GPU - A10")


def sync(source, res):
    run = ScrapeRun.objects.create(source=source, started_at=timezone.now())
    with transaction.atomic():
        return ingest.offers_sync(source=source, run=run, result=res, now=run.started_at)


@pytest.fixture
def oci():
    facts_sync.gpu_catalog_sync()
    source = DataSourceFactory(slug="oci", provider__slug="oci")
    # What the client stored before: each part as a one-GPU machine, region "global".
    sync(source, result(*(scraped(name, region="global", gpu_name=name.rsplit(" - ", 1)[1], gpu_count="1",
                                  price="10") for name in PER_GPU)))
    return source


def test_without_the_migration_the_shapes_run_is_refused_as_a_shrink(oci):
    with pytest.raises(ShrinkRefusedError):
        sync(oci, registry.make_client("oci", offline=True).fetch())


def test_the_per_gpu_rows_are_deactivated_and_the_shapes_run_then_stores_the_shapes(oci):
    other = DataSourceFactory(slug="skypilot-oci", provider=oci.provider)
    sync(other, result(scraped("Compute - GPU - A10 lookalike", region="global", gpu_name="A10", price="2")))
    migration.forwards(apps, None)
    assert not Offer.objects.filter(source=oci, is_active=True).exists()
    assert Offer.objects.get(source=other).is_active  # another source's row is left alone
    counts = sync(oci, registry.make_client("oci", offline=True).fetch())
    assert counts.created == 13
    active = set(Offer.objects.filter(source=oci, is_active=True).values_list("instance_type", "gpu_count"))
    assert ("BM.GPU.H100.8", 8) in active and not any("Compute" in name for name, _count in active)
    assert Offer.objects.filter(source=oci, instance_type__in=PER_GPU, is_active=False).count() == 3  # kept
