"""Region basis (issue #37): an offer's region is the provider's word (its API, a regional price list, its page) or
only a third-party catalog's copy. Country, continent and region filters keep confirmed regions and count the
catalog-only offers they leave out, like unknown answers; unknown=include brings them back, marked."""

import pytest
from django.db import transaction
from django.utils import timezone, translation

from providers import facts_sync, ingest
from providers.models import Offer, ScrapeRun
from tests.api.conftest import gpu, offer
from tests.factories import DataSourceFactory, ProviderFactory, result, scraped

pytestmark = pytest.mark.django_db


@pytest.fixture
def places():
    h100 = gpu("h100", "NVIDIA H100 80GB SXM", "nvidia", "H100", 80)
    api_source = DataSourceFactory(slug="own-api", kind="api", provider=ProviderFactory(slug="own", name="Own"))
    copy_source = DataSourceFactory(slug="a-catalog", kind="catalog", provider=ProviderFactory(slug="copied",
                                                                                               name="Copied"))
    return {
        "own": offer("own-8x", api_source.provider, api_source, h100, price="16", country="DE", continent="EU",
                     region="eu-central-1"),
        "copied": offer("copy-8x", copy_source.provider, copy_source, h100, price="8", country="DE", continent="EU",
                        region="eu-frankfurt-1", region_confirmed=False),
        "copied-us": offer("copy-us", copy_source.provider, copy_source, h100, price="8", country="US",
                           continent="NA", region="us-ashburn-1", region_confirmed=False),
    }


@pytest.mark.parametrize("query", ["country=DE", "continent=EU", "region=EU-FRANKFURT-1&country=DE"])
def test_a_place_filter_keeps_confirmed_regions_and_counts_catalog_copies(api, places, query):
    body = api.get(f"/api/v1/offers/?{query}").json()
    assert "copy-8x" not in {row["instance_type"] for row in body["results"]}
    assert body["left_out_for_unknown"]["by_provider"] == {"copied": 1}
    included = api.get(f"/api/v1/offers/?{query}&unknown=include").json()["results"]
    copied = next(row for row in included if row["instance_type"] == "copy-8x")
    assert copied["region_confirmed"] is False
    assert "copy-us" not in {row["instance_type"] for row in included}


def test_the_offers_page_says_how_many_it_left_out_and_marks_them_when_shown(client, places):
    with translation.override("en"):
        page = client.get("/?country=DE").content.decode()
        assert "own-8x" in page and "copy-8x" not in page
        assert "1 offer from Copied is hidden because whether they are sold in the country you asked for" in page
        shown = client.get("/?country=DE&unknown=include").content.decode()
    assert "copy-8x" in shown and "region per a catalog" in shown


def test_ingestion_confirms_regions_by_the_kind_of_source():
    facts_sync.gpu_catalog_sync()
    api_source = DataSourceFactory(slug="lambda-own", kind="api", provider__slug="lambda")
    catalog = DataSourceFactory(slug="skypilot-lambda-copy", kind="catalog", provider=api_source.provider)
    regional = DataSourceFactory(slug="aws-catalog", kind="catalog", provider__slug="aws")
    now = timezone.now()
    for source, row in ((api_source, scraped("gpu_8x", region="us-east-1")),
                        (catalog, scraped("gpu_1x", region="us-west-1")),
                        (regional, scraped("p5.48xlarge", region="eu-north-1", gpu_count="8", price="55.04"))):
        run = ScrapeRun.objects.create(source=source, started_at=now)
        with transaction.atomic():
            ingest.offers_sync(source=source, run=run, result=result(row), now=now)
    confirmed = dict(Offer.objects.values_list("source__slug", "region_confirmed"))
    # the provider's own API; a regional price list (region_basis.toml); a catalog that copies prices everywhere
    assert confirmed == {"lambda-own": True, "aws-catalog": True, "skypilot-lambda-copy": False}
