"""AWS bulk price list: the recorded CSV head replayed by exact URL, GPU rows and failures from small builders."""

import csv
import io
from decimal import Decimal

import httpx
import pytest

from scrapers import aws
from scrapers.base import SchemaScrapeError, TransientScrapeError
from scrapers.http import RecordedTransport, build_client

RECORDED_LINES = (aws.RECORDED / "ec2_index_head.csv").read_text().splitlines(keepends=True)
PREAMBLE, HEADER = "".join(RECORDED_LINES[:5]), RECORDED_LINES[5]
COLUMNS = next(csv.reader([HEADER]))


def row(instance="p5.48xlarge", region="us-east-1", price="55.04", gpu="8", term="OnDemand", os="Linux",
        tenancy="Shared", capacity="Used", software="NA", unit="Hrs", family="Compute Instance", **extra):
    # Every column of the real 91-column header; blank where the test does not care.
    values = dict.fromkeys(COLUMNS, "")
    values.update({"TermType": term, "Instance Type": instance, "Region Code": region, "PricePerUnit": price,
                   "Currency": "USD", "Unit": unit, "Tenancy": tenancy, "Operating System": os,
                   "CapacityStatus": capacity, "Pre Installed S/W": software, "GPU": gpu, "vCPU": "192",
                   "Memory": "2048 GiB", "Product Family": family, "MarketOption": "OnDemand"})
    values.update(extra)
    out = io.StringIO()
    csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n").writerow([values[name] for name in COLUMNS])
    return out.getvalue()


def client_for(handler):
    def route(request: httpx.Request) -> httpx.Response:
        assert str(request.url) == aws.EC2_CSV_URL, f"unexpected request {request.url}"
        return handler(request)

    return aws.AwsEc2PriceListClient(build_client(transport=httpx.MockTransport(route)))


def serve(body: str, status: int = 200, headers=None):
    return lambda request: httpx.Response(status, text=body, headers=headers or {})


def test_recorded_head_is_read_and_its_reserved_cpu_rows_are_not_offers():
    client = aws.AwsEc2PriceListClient(build_client(transport=RecordedTransport(aws.AwsEc2PriceListClient.recorded())))
    result = client.fetch()
    assert result.offers == [] and result.rejected == []


def test_only_on_demand_linux_shared_gpu_rows_become_offers():
    body = PREAMBLE + HEADER + "".join([
        row(), row("g6e.xlarge", price="1.861", gpu="1"), row("m5.large", price="0.096", gpu=""),
        row(term="Reserved"), row(os="Windows"), row(tenancy="Dedicated"), row(capacity="UnusedCapacityReservation"),
        row(software="SQL Web"), row(family="Compute Instance (bare metal)"),
    ])
    offers = {o.instance_type: o for o in client_for(serve(body)).fetch().offers}
    assert set(offers) == {"p5.48xlarge", "g6e.xlarge"}
    p5 = offers["p5.48xlarge"]
    assert (p5.gpu_name, p5.gpu_count, p5.gpu_memory_gb) == ("H100", 8, 80)
    assert (p5.price_hour, p5.vcpus, p5.ram_gb, p5.spot_price_hour) == (Decimal("55.04"), 192, 2048, None)


def test_every_family_resolves_to_a_catalog_gpu_with_its_memory():
    from scrapers.normalize import default_gpu_resolver

    for family, spec in aws.FAMILIES.items():
        assert default_gpu_resolver().resolve(spec.gpu_name, Decimal(spec.gpu_memory_gb)), family


@pytest.mark.parametrize("price, gpu", [("0.0000000000", "8"), ("-1", "8"), ("n/a", "8"), ("55", "0"), ("55", "")])
def test_absurd_rows_are_rejected_with_a_reason(price, gpu):
    body = PREAMBLE + HEADER + row(price=price, gpu=gpu) + row("g5.xlarge", gpu="1", price="1.006")
    result = client_for(serve(body)).fetch()
    assert [o.instance_type for o in result.offers] == ["g5.xlarge"]
    assert len(result.rejected) == 1 and "p5.48xlarge" in result.rejected[0]


def test_renamed_column_is_named():
    body = PREAMBLE + HEADER.replace('"PricePerUnit"', '"Price"') + row()
    with pytest.raises(SchemaScrapeError, match="PricePerUnit"):
        client_for(serve(body)).fetch()


@pytest.mark.parametrize("body", ["", "<html>maintenance</html>", PREAMBLE + HEADER, HEADER + row()])
def test_empty_html_or_preamble_less_file_raises(body):
    with pytest.raises(SchemaScrapeError):
        client_for(serve(body)).fetch()


def test_file_cut_off_mid_row_raises_instead_of_returning_part_of_it():
    body = PREAMBLE + HEADER + row() + row("g6.xlarge", gpu="1")[:120]
    with pytest.raises(SchemaScrapeError, match="truncated"):
        client_for(serve(body)).fetch()


def test_connection_dropped_mid_stream_is_transient():
    class Dropping(httpx.SyncByteStream):
        def __iter__(self):
            yield (PREAMBLE + HEADER + row()).encode()
            raise httpx.ReadError("connection reset")

    with pytest.raises(TransientScrapeError):
        client_for(lambda request: httpx.Response(200, stream=Dropping())).fetch()


def test_the_file_is_consumed_as_a_stream():
    chunks = []

    class Counting(httpx.SyncByteStream):
        def __iter__(self):
            for line in [PREAMBLE, HEADER, *([row()] * 50)]:
                chunks.append(line)
                yield line.encode()

    offers = client_for(lambda request: httpx.Response(200, stream=Counting())).fetch().offers
    assert len(chunks) == 52 and len(offers) == 1  # 50 identical rows: one offer per (type, region)






# --- EKS (documented shape, kubernetes-apis.md section 8; no real recording exists yet) -------------------------

EKS_FILE = "https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/AmazonEKS/20261101/us-east-1/index.json"


def eks_product(sku, usagetype, price):
    product = {"sku": sku, "productFamily": "Compute",
               "attributes": {"usagetype": usagetype, "regionCode": "us-east-1", "operation": "CreateOperation"}}
    term = {f"{sku}.T": {"priceDimensions": {f"{sku}.T.R": {"unit": "Hrs", "pricePerUnit": {"USD": price}}}}}
    return product, term


def eks_offer(*products):
    return {"formatVersion": "v1.0", "offerCode": "AmazonEKS",
            "products": {p["sku"]: p for p, _ in products},
            "terms": {"OnDemand": {p["sku"]: t for p, t in products}}}


def eks_client(offer):
    path = "/offers/v1.0/aws/AmazonEKS/20261101/us-east-1/index.json"
    index = {"regions": {"us-east-1": {"currentVersionUrl": path}}}
    routes = {aws.EKS_REGION_INDEX_URL: index, EKS_FILE: offer}

    def route(request):
        assert str(request.url) in routes, f"unexpected request {request.url}"
        return httpx.Response(200, json=routes[str(request.url)])

    return aws.AwsEksPriceListClient(build_client(transport=httpx.MockTransport(route)))


def test_eks_fee_and_extended_support_are_read_from_the_offer_file():
    result = eks_client(eks_offer(eks_product("A", "USE1-AmazonEKS-Hours:perCluster", "0.1000000000"),
                                  eks_product("B", "USE1-AmazonEKS-Hours:extendedSupport", "0.5000000000"))).fetch()
    (fee,) = result.capabilities
    assert (fee.value, fee.amount, fee.source_url) == ("paid", Decimal("0.1"), EKS_FILE)
    assert result.kubernetes_facts["eks_control_plane"]["extended_support_usd_hour"] == "0.5"
    assert result.offers == []


@pytest.mark.parametrize("offer", [
    {"products": {}},
    eks_offer(eks_product("B", "USE1-AmazonEKS-Hours:extendedSupport", "0.5")),
    {"products": eks_offer(eks_product("A", "USE1-AmazonEKS-Hours:perCluster", "0.1"))["products"], "terms": {}},
])
def test_eks_file_without_the_fee_raises(offer):
    with pytest.raises(SchemaScrapeError):
        eks_client(offer).fetch()


def reserved(lease, option="No Upfront", offering="standard", price="30.0", **kwargs):
    return row(term="Reserved", price=price, LeaseContractLength=lease, PurchaseOption=option,
               OfferingClass=offering, **kwargs)


def test_the_recorded_reserved_rows_state_term_purchase_option_and_class_as_the_parser_reads_them():
    records = list(csv.DictReader(RECORDED_LINES[5:]))
    assert [aws.reserved_term(record) for record in records] == [("3y", "Partial Upfront", "standard")] * 2
    assert [record["Unit"] for record in records] == ["Hrs", "Quantity"]  # the hourly rate, then the upfront fee


def test_standard_no_upfront_reserved_rows_give_the_machines_1_and_3_year_prices_dated_by_the_file():
    body = PREAMBLE + HEADER + "".join([
        reserved("3yr", price="21.5"),  # before the on-demand row: order does not matter
        row(),
        reserved("1yr", price="34.6"),
        reserved("1yr", option="Partial Upfront", price="17.0"), reserved("1yr", offering="convertible", price="40"),
        reserved("1yr", price="1.0", os="Windows"), reserved("1yr", price="2.0", instance="m5.large", gpu=""),
        row("g6e.xlarge", price="1.861", gpu="1"),
    ])
    result = client_for(serve(body)).fetch()
    offers = {o.instance_type: o for o in result.offers}
    p5 = offers["p5.48xlarge"]
    assert (p5.commit_1y_price_hour, p5.commit_3y_price_hour) == (Decimal("34.6"), Decimal("21.5"))
    assert p5.commitment_as_of.isoformat() == "2025-09-12"  # the real preamble's Publication Date
    assert p5.commitment_source_url == aws.EC2_CSV_URL
    g6e = offers["g6e.xlarge"]
    assert (g6e.commit_1y_price_hour, g6e.commit_3y_price_hour, g6e.commitment_as_of) == (None, None, None)
    assert result.rejected == []


def test_a_second_different_reserved_price_for_one_machine_and_term_is_refused_with_the_reason():
    body = PREAMBLE + HEADER + row() + reserved("1yr", price="34.6") + reserved("1yr", price="99")
    result = client_for(serve(body)).fetch()
    assert result.offers[0].commit_1y_price_hour == Decimal("34.6")
    assert result.rejected == ["p5.48xlarge in us-east-1: second 1y reserved price 99 (kept 34.6)"]
