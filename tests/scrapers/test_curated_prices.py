"""Curated price tables: the bundled files are valid and sourced, and every broken row is refused by name."""

import tomllib
from datetime import date
from decimal import Decimal

import httpx
import pytest

from providers.curated import PROVIDERS_DIR
from scrapers import curated_prices, registry
from scrapers.base import SchemaScrapeError
from scrapers.http import build_client
from scrapers.normalize import default_gpu_resolver

TODAY = date(2026, 11, 29)
FILES = sorted(curated_prices.PRICES_DIR.glob("*.toml"))


def table(**top):
    """A minimal valid file as a dict; keyword arguments replace top-level fields, rows=[...] the rows."""
    rows = top.pop("rows", None) or [row()]
    data = {"provider": "baidu", "source_url": "https://cloud.baidu.com/doc/BML/s/0khemrtv0",
            "verified_on": date(2026, 11, 29), "currency": "CNY", **top, "offer": rows}
    return {key: value for key, value in data.items() if value is not None}


def row(**fields):
    base = {"instance_type": "gpu-v100", "region": "bj", "gpu_name": "V100", "gpu_count": 1, "price_hour": "11.10"}
    return {key: value for key, value in {**base, **fields}.items() if value is not None}


def parse(data):
    return curated_prices.parse_price_file(data, origin="baidu.toml", today=TODAY)


# --- the bundled files ----------------------------------------------------------------------------------------


def test_every_price_file_has_a_registered_source_and_back():
    assert {f"curated-{path.stem}" for path in FILES} == set(curated_prices.CLIENTS)
    for slug, client in curated_prices.CLIENTS.items():
        assert registry.SOURCES[slug] is client
        assert client.info.kind == "curated" and client.info.provider == client.path().stem


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_bundled_file_is_valid_sourced_and_names_a_known_provider(path):
    offers = curated_prices.load_price_file(path)
    assert offers
    with path.open("rb") as handle:
        data = tomllib.load(handle)
    client = curated_prices.CLIENTS[f"curated-{path.stem}"]
    assert client.info.url == data["source_url"], "the source's URL must be the page the prices were read on"
    assert (PROVIDERS_DIR / f"{path.stem}.toml").is_file(), "prices for a provider we do not describe"
    assert data["verified_on"] <= date.today()


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_bundled_rows_name_gpus_the_catalog_knows(path):
    resolver = default_gpu_resolver()
    for offer in curated_prices.load_price_file(path):
        memory = offer.gpu_memory_gb  # a slice states its own memory; the GPU is named by a whole one's
        memory = memory / offer.gpu_fraction if memory is not None and offer.gpu_fraction else memory
        assert resolver.resolve(offer.gpu_name, memory), f"{path.name}: {offer.gpu_name!r} unknown"


def test_baidu_row_is_what_the_page_says():
    (offer,) = registry.make_client("curated-baidu", offline=True).fetch().offers
    assert (offer.price_hour, offer.currency, offer.gpu_count) == (Decimal("11.10"), "CNY", 1)
    assert (offer.vcpus, offer.ram_gb, offer.region) == (12, 50, "bj")


def test_tencent_rows_are_what_its_pricing_page_says_dated_by_the_page_commit():
    client = registry.make_client("curated-tencent", offline=True)
    offers = {offer.instance_type: offer for offer in client.fetch().offers}
    assert len(offers) == 21  # every row of the page
    t4 = offers["GN7.2XLARGE32"]  # "| GN7.2XLARGE32 | 1 | 16 GB | 8 | 32 | 1.26 USD/hr |"
    assert (t4.price_hour, t4.currency, t4.gpu_name, t4.gpu_count, t4.vcpus, t4.ram_gb) == (
        Decimal("1.26"), "USD", "T4", 1, 8, 32)
    v100 = offers["GN10Xp.20XLARGE320"]  # "| GN10Xp.20XLARGE320 | 8 | 256 GB | 80 cores | 320 GB | 13.78 USD/hr |"
    assert (v100.price_hour, v100.gpu_count, v100.gpu_memory_gb) == (Decimal("13.78"), 8, 32)
    assert {offer.region for offer in offers.values()} == {"ap-guangzhou"}
    assert {offer.price_as_of.date().isoformat() for offer in offers.values()} == {"2023-06-30"}
    quarter = offers["GN7.LARGE20"]  # "| GN7.LARGE20 | 1/4 vGPU | 4 GB | 4 | 20 | 0.49 USD/hr |": a quarter of a T4
    assert (quarter.gpu_fraction, quarter.gpu_count, quarter.gpu_memory_gb, quarter.price_hour) == (
        Decimal("0.25"), Decimal("0.25"), 4, Decimal("0.49"))


def test_fetch_makes_no_request_even_online():
    def refuse(request):
        raise AssertionError(f"curated source made a request to {request.url}")

    client = registry.make_client("curated-alibaba", transport=httpx.MockTransport(refuse))
    (offer,) = client.fetch().offers
    assert offer.price_hour == Decimal("12") and offer.currency == "CNY" and offer.vcpus is None


# --- validation -------------------------------------------------------------------------------------------------


def test_valid_table_becomes_offers_with_decimal_prices():
    (offer,) = parse(table(rows=[row(spot_price_hour=4.5, vcpus=12, ram_gb=50, gpu_memory_gb=16)]))
    assert offer.price_hour == Decimal("11.10") and offer.spot_price_hour == Decimal("4.5")
    assert (offer.vcpus, offer.ram_gb, offer.gpu_memory_gb) == (Decimal(12), Decimal(50), Decimal(16))


def test_row_may_carry_its_own_source_date_and_currency():
    data = table(source_url=None, verified_on=None, currency=None, rows=[
        row(source_url="https://example.org/p", verified_on=date(2026, 11, 1), currency="USD")])
    (offer,) = parse(data)
    assert offer.currency == "USD"


@pytest.mark.parametrize("data, message", [
    (table(source_url=None), r"row 1 \(gpu-v100\): no source_url"),
    (table(source_url="cloud.baidu.com/doc"), "no source_url"),
    (table(verified_on=None), r"row 1 \(gpu-v100\): no verified_on"),
    (table(verified_on="2026-11-29"), "no verified_on date"),
    (table(verified_on=date(2026, 12, 1)), "in the future"),
    (table(rows=[row(), row(instance_type="second", price_hour=0)]),
     r"row 2 \(second\): price_hour must be a price > 0"),
    (table(rows=[row(price_hour="-3")]), "price_hour must be a price > 0"),
    (table(rows=[row(price_hour=None)]), "price_hour must be a price > 0"),
    (table(rows=[row(price_hour="11,10")]), "price_hour '11,10' is not a number"),
    (table(rows=[row(price_hour=True)]), "is not a number"),
    (table(rows=[row(spot_price_hour=0)]), "spot_price_hour must be > 0"),
    (table(currency="RMB"), "currency 'RMB' is not one of"),
    (table(currency=None), "currency None is not one of"),
    (table(rows=[row(currency="JPY")]), "currency 'JPY'"),
    (table(rows=[row(gpu_count=0)]), "gpu_count must be a number > 0"),
    (table(rows=[row(gpu_count="0.25", gpu_fraction="1.5")]), "gpu_fraction must be a share of one GPU"),
    (table(rows=[row(gpu_count=1, gpu_fraction="0.25")]), "and equal gpu_count"),
    (table(rows=[row(vcpus=-1)]), "vcpus must be > 0"),
    (table(rows=[row(gpu_name="")]), "'gpu_name' is required"),
    (table(rows=[row(region=None)]), "'region' is required"),
    (table(rows=[row(), row()]), "duplicate instance_type and region"),
    (table(rows=[row(price="11.10")]), r"unknown fields \['price'\]"),
    (table(provider="Baidu Cloud"), "'provider' must be the provider's slug"),
    ({"provider": "baidu", "source_url": "https://x.org/", "verified_on": TODAY}, r"no \[\[offer\]\] rows"),
    (table(extra="x"), r"unknown top-level fields \['extra'\]"),
])
def test_broken_rows_are_refused_naming_file_row_and_problem(data, message):
    with pytest.raises(curated_prices.CuratedPriceError, match=message) as caught:
        parse(data)
    assert str(caught.value).startswith("baidu.toml: ")


def test_file_must_be_named_after_its_provider(tmp_path):
    path = tmp_path / "tencent.toml"
    path.write_text('provider = "baidu"\nsource_url = "https://x.org/"\nverified_on = 2026-11-01\ncurrency = "CNY"\n'
                    '[[offer]]\ninstance_type = "a"\nregion = "bj"\ngpu_name = "V100"\ngpu_count = 1\n'
                    'price_hour = "1"\n', encoding="utf-8")
    with pytest.raises(curated_prices.CuratedPriceError, match="tencent.toml: provider 'baidu' must match"):
        curated_prices.load_price_file(path)


def test_broken_file_fails_the_fetch_as_a_schema_error(tmp_path, monkeypatch):
    (tmp_path / "baidu.toml").write_text('provider = "baidu"\n[[offer]\n', encoding="utf-8")
    monkeypatch.setattr(curated_prices, "PRICES_DIR", tmp_path)
    client = curated_prices.CLIENTS["curated-baidu"](build_client())
    with pytest.raises(SchemaScrapeError, match="baidu.toml: not valid TOML"):
        client.fetch()


def test_missing_file_fails_the_fetch(tmp_path, monkeypatch):
    monkeypatch.setattr(curated_prices, "PRICES_DIR", tmp_path)
    with pytest.raises(SchemaScrapeError, match="baidu.toml: file missing"):
        curated_prices.CLIENTS["curated-baidu"](build_client()).fetch()


def test_a_transcribed_table_carries_the_date_it_states_or_none():
    crusoe = curated_prices.load_price_file(curated_prices.PRICES_DIR / "crusoe.toml")
    assert {offer.price_as_of.date().isoformat() for offer in crusoe} == {"2026-02-26"}
    assert not any("B200" in offer.instance_type for offer in crusoe)  # gpuhunt's own estimate, left out
    undated = curated_prices.load_price_file(curated_prices.PRICES_DIR / "ibm.toml")
    assert undated and all(offer.price_as_of is None for offer in undated)
    baidu = curated_prices.load_price_file(curated_prices.PRICES_DIR / "baidu.toml")
    assert all(offer.price_as_of.date() == date(2026, 11, 29) for offer in baidu)  # the day the page was read


def test_an_as_of_that_is_neither_a_date_nor_not_stated_is_refused():
    data = {"provider": "baidu", "source_url": "https://example.org/p", "verified_on": date(2026, 11, 1),
            "as_of": "2026", "currency": "USD", "offer": [{
                "instance_type": "x", "region": "", "gpu_name": "L4", "gpu_count": 1, "price_hour": "1"}]}
    with pytest.raises(curated_prices.CuratedPriceError, match="as_of must be"):
        curated_prices.parse_price_file(data, origin="baidu.toml", today=date(2026, 12, 1))
