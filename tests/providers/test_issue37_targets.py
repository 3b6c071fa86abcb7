"""Issue #37's targets on the bundled snapshot (loaded once for the module, flushed after). Those the data does not
reach yet are strict expected failures naming what is missing: each fails the suite the day it is met."""

from __future__ import annotations

from collections import Counter

import pytest
from django.db.models import Count

from providers import pricing
from providers.models import Offer, Provider

pytestmark = pytest.mark.django_db


def live():
    return Offer.objects.filter(is_active=True)


def test_no_offer_is_without_a_location(snapshot):
    """A country, else a continent, else "global" (WW) for a price tied to no region."""
    missing = Counter(live().filter(country="", continent="").values_list("source__slug", "region"))
    assert live().count() > 3000
    assert not missing, missing.most_common(10)


def test_no_machine_has_two_live_prices(snapshot):
    twice = live().values("provider_id", "instance_type", "region").annotate(n=Count("id")).filter(n__gt=1)
    assert not twice.exists()


def test_no_retired_type_is_live(snapshot):
    today = pricing.datetime.now(pricing.UTC).date()
    retired = [(slug, size) for slug, size in live().values_list("provider__slug", "instance_type").distinct()
               if pricing.is_retired(slug, size, today)]
    assert retired == []


def test_no_catalog_only_region_counts_as_confirmed(snapshot):
    """SkyPilot's OCI and Lambda files copy one price into every region; their regions are never confirmed."""
    copied = live().filter(source__slug__in=["skypilot-oci", "skypilot-lambda"])
    assert copied.count() > 1000 and not copied.filter(region_confirmed=True).exists()
    assert live().filter(source__kind="api").exclude(region_confirmed=True).count() == 0


def test_every_gpu_is_recognised(snapshot):
    unknown = Counter(live().filter(gpu__isnull=True).values_list("gpu_name", flat=True))
    # The one Vast.ai host reporting a 48 GB RTX 4090 (a modified card; no vendor product has that memory) stays
    # unknown on purpose: scrapers/normalize.py, GpuResolver.
    unknown.pop("RTX4090", None)
    assert not unknown, unknown.most_common()


@pytest.mark.xfail(strict=True, reason="11.2% undated (367 of 3,282): Shadeform, half of Cudo, Vast.ai, most of"
                                       " OVHcloud and others have no dated record with equal prices")
def test_at_most_5_percent_of_offers_are_undated(snapshot):
    assert live().filter(price_as_of__isnull=True).count() <= 0.05 * live().count()


def test_28_or_more_providers_are_priced(snapshot):
    """28 since Seeweb (SkyPilot's Seeweb catalog, from Seeweb's own API); the six in pricing.UNPRICED say why not."""
    priced = set(Provider.objects.filter(offers__is_active=True).values_list("slug", flat=True))
    assert len(priced) >= 28 and "seeweb" in priced
    assert not priced & set(pricing.UNPRICED)


def test_google_machines_carry_commitment_prices_wherever_googles_rows_state_them(snapshot):
    """Commitment prices for every big-cloud machine whose provider rows could be recorded (Google Cloud's, through
    Cyclenerd's pricing.yml); A2 Ultra has no public 1-year price and G4 in europe-west10 no row; the sources page
    names the clouds still missing (AWS, Azure) with the reason."""
    machines = live().filter(provider__slug="gcp").exclude(instance_type__startswith="tpu-")
    assert machines.count() >= 300
    missing_1y = machines.filter(commit_1y_price_hour_usd__isnull=True)
    assert set(missing_1y.values_list("instance_type", flat=True)) <= {
        "a2-ultragpu-1g", "a2-ultragpu-2g", "a2-ultragpu-4g", "a2-ultragpu-8g", "g4-standard-48", "g4-standard-96",
        "g4-standard-192", "g4-standard-384"}
    assert missing_1y.count() <= machines.count() * 0.10
    assert not machines.filter(commit_3y_price_hour_usd__isnull=False, commitment_as_of__isnull=True).exists()
    cheaper = machines.filter(commit_3y_price_per_gpu_hour_usd__isnull=False)
    assert all(o.commit_3y_price_per_gpu_hour_usd < o.price_per_gpu_hour_usd for o in cheaper)
    assert set(pricing.COMMITMENTS_MISSING) == {"aws", "azure"}


def test_nebius_regions_are_nebiuss_own_so_its_h100_in_europe_answers_the_buyers_question(snapshot):
    """SkyPilot's Nebius file is Nebius's API region by region (H100 in eu-north1 only): the cheapest 8x H100 with
    InfiniBand on managed Kubernetes in Europe is not hidden as "only a catalog lists it there"."""
    nebius = live().filter(source__slug="skypilot-nebius")
    assert nebius.count() > 10 and not nebius.exclude(region_confirmed=True).exists()
    h100 = nebius.filter(instance_type__startswith="gpu-h100-sxm_8gpu")
    assert set(h100.values_list("region", flat=True)) == {"eu-north1"}
