"""factory_boy factories and small builders for edge cases (instead of hand-edited recordings)."""

from decimal import Decimal

import factory

from providers.models import DataSource, Provider
from scrapers.base import ScrapedOffer, ScrapeResult, SourceInfo


class ProviderFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Provider
        django_get_or_create = ("slug",)

    slug = factory.Sequence(lambda n: f"provider-{n}")
    name = factory.LazyAttribute(lambda o: o.slug.title())
    website = "https://example.org/"
    kind = "gpu_cloud"
    headquarters = "US"


class DataSourceFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = DataSource
        django_get_or_create = ("slug",)

    slug = factory.Sequence(lambda n: f"source-{n}")
    name = factory.LazyAttribute(lambda o: f"Source {o.slug}")
    kind = "api"
    provider = factory.SubFactory(ProviderFactory)
    url = "https://example.org/api"


def scraped(instance_type="gpu_1x_h100", region="us-east-1", gpu_name="H100", gpu_count="1", price="2.49",
            spot=None, currency="USD", availability="unknown", **extra) -> ScrapedOffer:
    return ScrapedOffer(
        instance_type=instance_type,
        region=region,
        gpu_name=gpu_name,
        gpu_count=Decimal(gpu_count),
        currency=currency,
        price_hour=Decimal(price) if price is not None else None,
        spot_price_hour=Decimal(spot) if spot is not None else None,
        availability=availability,
        **extra,
    )


def result(*offers: ScrapedOffer, rejected=()) -> ScrapeResult:
    return ScrapeResult(offers=list(offers), rejected=list(rejected))


class ScriptedSource:
    """A source client whose fetch() answers what the test put in `response` (a ScrapeResult, or an exception to
    raise): the whole source_scrape path without HTTP. Subclass it with an `info` and register it with
    monkeypatch.setitem(registry.SOURCES, slug, cls)."""

    info: SourceInfo
    response: ScrapeResult | Exception

    def __init__(self, http, api_key=None):
        pass

    @classmethod
    def recorded(cls):
        return {}

    def fetch(self) -> ScrapeResult:
        if isinstance(self.response, Exception):
            raise self.response
        return self.response
