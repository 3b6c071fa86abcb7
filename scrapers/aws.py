"""AWS EC2 GPU on-demand prices from the public bulk price list (no key), and the EKS control-plane fee.

EC2: https://docs.aws.amazon.com/awsaccountbilling/latest/aboutv2/using-the-aws-price-list-bulk-api.html
(`GET https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/AmazonEC2/current/index.csv`, no auth, no
pagination). The file is several GB, so it is streamed: httpx yields lines, `csv` reads them one at a time, and only
the rows we keep are held. Layout (provider-apis.md section 2, as gpuhunt and SkyPilot read it): 5 preamble lines
(FormatVersion, Disclaimer, Publication Date, Version, OfferCode), the header on line 6, every field quoted. We keep
a row when TermType=OnDemand, Product Family=Compute Instance, Tenancy=Shared, Operating System=Linux,
CapacityStatus=Used (the others are reservation bookkeeping), Unit=Hrs, no pre-installed software, and the instance
family is one of the GPU families in `FAMILIES`. The same machine's TermType=Reserved rows with
OfferingClass=standard, PurchaseOption=No Upfront and LeaseContractLength 1yr or 3yr (Unit=Hrs: the hourly rate, no
upfront fee) give its 1- and 3-year commitment prices, dated by the file's Publication Date; other purchase options
(partial or all upfront, whose fee is a second "Quantity" row) and convertible reservations are not read.

The price list states the GPU count ("GPU") but not reliably the model or memory ("GPU Memory" is often "NA"); the
model and per-GPU memory come from the curated `FAMILIES` table, each row citing AWS's instance-type page. Spot
prices are not in the price list (they need the signed EC2 API) and stay unknown.

EKS: the AmazonEKS offer file (kubernetes-apis.md section 8) holds the standard control-plane fee as usagetype
`<prefix>-AmazonEKS-Hours:perCluster` and extended support as `...:extendedSupport`. `AwsEksPriceListClient` reads
the us-east-1 file; it is not registered yet because no real recording of that file exists to replay (see
recorded/aws/README.md for the command that records one).
"""

from __future__ import annotations

import csv
import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path

import httpx

from .base import (
    ProviderClient,
    SchemaScrapeError,
    ScrapedCapability,
    ScrapedOffer,
    ScrapeResult,
    SourceInfo,
)
from .http import get, lines_whole, stream_text
from .normalize import positive, to_decimal

logger = logging.getLogger(__name__)

RECORDED = Path(__file__).resolve().parent / "recorded" / "aws"
HOST = "https://pricing.us-east-1.amazonaws.com"
EC2_CSV_URL = f"{HOST}/offers/v1.0/aws/AmazonEC2/current/index.csv"
DOCS_URL = "https://docs.aws.amazon.com/awsaccountbilling/latest/aboutv2/using-the-aws-price-list-bulk-api.html"
EKS_REGION_INDEX_URL = f"{HOST}/offers/v1.0/aws/AmazonEKS/current/region_index.json"
EKS_REGION = "us-east-1"
PREAMBLE_LINES = 5
REQUIRED_COLUMNS = (
    "TermType", "Product Family", "Instance Type", "Region Code", "PricePerUnit", "Currency", "Unit", "Tenancy",
    "Operating System", "CapacityStatus", "Pre Installed S/W", "GPU", "vCPU", "Memory",
)


@dataclass(frozen=True, slots=True)
class Family:
    gpu_name: str  # AWS's own GPU name (DescribeInstanceTypes GpuInfo.Gpus[].Name), resolved through gpus.toml
    gpu_memory_gb: int  # per GPU
    source_url: str


_TYPES = "https://aws.amazon.com/ec2/instance-types/"
# Instance family (the part of the type before the dot) -> GPU. Only NVIDIA GPU families the catalog knows;
# left out on purpose: g4ad (AMD Radeon Pro V520) and g5g (T4G) are not in gpus.toml, p6e-gb200 is sold as
# UltraServers, and inf/trn/dl are not GPUs.
FAMILIES: dict[str, Family] = {
    "p3": Family("V100", 16, f"{_TYPES}p3/"),
    "p3dn": Family("V100", 32, f"{_TYPES}p3/"),
    "p4d": Family("A100", 40, f"{_TYPES}p4/"),
    "p4de": Family("A100", 80, f"{_TYPES}p4/"),
    "p5": Family("H100", 80, f"{_TYPES}p5/"),
    "p5e": Family("H200", 141, f"{_TYPES}p5/"),
    "p5en": Family("H200", 141, f"{_TYPES}p5/"),
    "p6-b200": Family("B200", 180, f"{_TYPES}p6/"),
    "g4dn": Family("T4", 16, f"{_TYPES}g4/"),
    "g5": Family("A10G", 24, f"{_TYPES}g5/"),
    "g6": Family("L4", 24, f"{_TYPES}g6/"),
    "gr6": Family("L4", 24, f"{_TYPES}g6/"),
    "g6e": Family("L40S", 48, f"{_TYPES}g6e/"),
}


class AwsEc2PriceListClient(ProviderClient):
    info = SourceInfo(slug="aws", provider="aws", name="AWS Price List (bulk, EC2)", kind="api", url=DOCS_URL)
    # Registered for live runs; its recording is a real but partial sample (the header and two non-GPU rows,
    # recorded/aws/README.md), so replaying it yields no offer and the bundled snapshot uses aws-catalog.
    recording_has_no_offers = True

    recordings = {EC2_CSV_URL: RECORDED / "ec2_index_head.csv"}

    def fetch(self) -> ScrapeResult:
        result = ScrapeResult(offers=[])
        with stream_lines(self.http, EC2_CSV_URL) as lines:
            try:
                result.offers = parse_ec2_csv(lines, result)
            except csv.Error as exc:
                raise SchemaScrapeError(f"EC2 price list is not CSV ({exc})") from exc
        if not result.offers:
            logger.warning("aws: the EC2 price list has no on-demand Linux row for a GPU family")
        return result


@contextmanager
def stream_lines(http: httpx.Client, url: str) -> Iterator[Iterator[str]]:
    """Lines of `url` as they arrive (scrapers.http.stream_text); a timeout, a dropped connection or a file that
    ends mid-line fails the whole read."""
    with stream_text(http, url) as chunks:
        yield lines_whole(chunks, "EC2 price list")


def parse_ec2_csv(lines: Iterator[str], result: ScrapeResult) -> list[ScrapedOffer]:
    """GPU offers from the bulk CSV's lines; rows with absurd values go to `result.rejected`."""
    preamble = [next(lines, None) for _ in range(PREAMBLE_LINES)]
    if preamble[0] is None or not preamble[0].startswith('"FormatVersion"'):
        raise SchemaScrapeError(f"EC2 price list does not start with the FormatVersion preamble: {preamble[0]!r:.80}")
    logger.info("aws: EC2 price list %s", "; ".join((line or "").strip() for line in preamble[2:4]))
    reader = csv.DictReader(lines)
    missing = [name for name in REQUIRED_COLUMNS if name not in (reader.fieldnames or [])]
    if missing:
        raise SchemaScrapeError(f"EC2 price list: columns missing or renamed: {', '.join(missing)}")
    offers: dict[tuple[str, str], ScrapedOffer] = {}
    reserved: dict[tuple[str, str, str], Decimal] = {}
    rows = 0
    for row in reader:
        rows += 1
        if None in row or None in row.values():
            # A short or long row: the download was cut off or the layout changed; never keep a partial file.
            raise SchemaScrapeError(f"EC2 price list: row {rows} has {len(row)} fields, header has "
                                    f"{len(reader.fieldnames or [])} (truncated?)")
        term = _reserved_term(row)
        if term is not None:
            _keep_reserved(row, term, reserved, result)
            continue
        if not _wanted(row):
            continue
        family = FAMILIES[row["Instance Type"].split(".", 1)[0]]
        where = f"{row['Instance Type']} in {row['Region Code']}"
        try:
            offer = _offer(row, family)
        except ValueError as exc:
            result.rejected.append(f"{where}: {exc}")
            continue
        key = (offer.instance_type, offer.region)
        if key in offers and offers[key].price_hour != offer.price_hour:
            result.rejected.append(f"{where}: second on-demand price {offer.price_hour} "
                                   f"(kept {offers[key].price_hour})")
            continue
        offers[key] = offer
    if rows == 0:
        raise SchemaScrapeError("EC2 price list: header but no rows")
    logger.info("aws: %s price rows read, %s GPU offers kept, %s reserved prices", rows, len(offers), len(reserved))
    published = _publication_date(preamble[2])
    return [_with_reserved(offer, reserved, published) for offer in offers.values()]


RESERVED_TERMS = {"1yr": "1y", "3yr": "3y"}


def _machine_row(row: dict[str, str]) -> bool:
    """A Linux, shared-tenancy GPU instance row without pre-installed software, of any term."""
    return (
        row["Product Family"] == "Compute Instance"
        and row["Tenancy"] == "Shared"
        and row["Operating System"] == "Linux"
        and row["Pre Installed S/W"] in ("", "NA")
        and row["Instance Type"].split(".", 1)[0] in FAMILIES
    )


def reserved_term(row: dict[str, str]) -> tuple[str, str, str] | None:
    """(term, purchase option, offering class) of a Reserved row: ("3y", "Partial Upfront", "standard")."""
    if row["TermType"] != "Reserved":
        return None
    term = RESERVED_TERMS.get(row.get("LeaseContractLength", ""))
    return None if term is None else (term, row.get("PurchaseOption", ""), row.get("OfferingClass", ""))


def _reserved_term(row: dict[str, str]) -> str | None:
    """The term ("1y", "3y") of a standard, no-upfront, hourly Reserved row of a GPU machine we list, else None."""
    found = reserved_term(row)
    if found is None or found[1:] != ("No Upfront", "standard") or row["Unit"] != "Hrs" or not _machine_row(row):
        return None
    return found[0]


def _keep_reserved(row: dict[str, str], term: str, reserved: dict, result: ScrapeResult) -> None:
    where = f"{row['Instance Type']} in {row['Region Code']}"
    try:
        price = positive(row["PricePerUnit"], f"{term} reserved price")
    except ValueError as exc:
        result.rejected.append(f"{where}: {exc}")
        return
    key = (row["Instance Type"], row["Region Code"], term)
    if key in reserved and reserved[key] != price:
        result.rejected.append(f"{where}: second {term} reserved price {price} (kept {reserved[key]})")
        return
    reserved[key] = price


def _publication_date(line: str | None) -> date | None:
    # '"Publication Date","2025-09-12T22:53:08Z"'
    try:
        text = next(csv.reader([line or ""]))[1]
        return datetime.fromisoformat(text.replace("Z", "+00:00")).date()
    except (IndexError, ValueError, StopIteration):
        return None


def _with_reserved(offer: ScrapedOffer, reserved: dict, published: date | None) -> ScrapedOffer:
    one_year = reserved.get((offer.instance_type, offer.region, "1y"))
    three_years = reserved.get((offer.instance_type, offer.region, "3y"))
    if one_year is None and three_years is None:
        return offer
    return replace(offer, commit_1y_price_hour=one_year, commit_3y_price_hour=three_years, commitment_as_of=published,
                   commitment_source_url=EC2_CSV_URL)


def _wanted(row: dict[str, str]) -> bool:
    return (
        row["TermType"] == "OnDemand"
        and row["CapacityStatus"] == "Used"
        and row["Unit"] == "Hrs"
        and row.get("MarketOption", "OnDemand") in ("", "OnDemand")
        and _machine_row(row)
    )


def _offer(row: dict[str, str], family: Family) -> ScrapedOffer:
    price = positive(row["PricePerUnit"], "on-demand price")
    count = positive(row["GPU"], "GPU count")
    if not row["Region Code"]:
        raise ValueError("no region code")
    return ScrapedOffer(
        instance_type=row["Instance Type"],
        region=row["Region Code"],
        gpu_name=family.gpu_name,
        gpu_count=count,
        gpu_memory_gb=Decimal(family.gpu_memory_gb),
        vcpus=to_decimal(row["vCPU"]),
        ram_gb=to_decimal(row["Memory"].replace("GiB", "").replace(",", "")),
        currency=row["Currency"] or "USD",
        price_hour=price,
    )


# --- EKS -----------------------------------------------------------------------------------------------------


class AwsEksPriceListClient(ProviderClient):
    """The EKS control-plane fee (us-east-1) from the AmazonEKS bulk offer file. Produces facts, no offers."""

    info = SourceInfo(slug="aws-eks", provider="aws", name="AWS Price List (bulk, EKS)", kind="api", url=DOCS_URL)

    @classmethod
    def recorded(cls) -> dict[str, Path]:
        return {}  # no real recording of the AmazonEKS files yet: see recorded/aws/README.md

    def fetch(self) -> ScrapeResult:
        index = _json(self.http, EKS_REGION_INDEX_URL)
        try:
            path = index["regions"][EKS_REGION]["currentVersionUrl"]
        except (KeyError, TypeError) as exc:
            raise SchemaScrapeError(f"{EKS_REGION_INDEX_URL}: no regions.{EKS_REGION}.currentVersionUrl") from exc
        url = str(httpx.URL(HOST).join(path))
        capability, facts = parse_eks_offer(_json(self.http, url), url)
        result = ScrapeResult(offers=[], capabilities=[capability], kubernetes_facts=facts)
        return result


def _json(http: httpx.Client, url: str):
    response = get(http, url)
    try:
        return json.loads(response.content, parse_float=Decimal)
    except ValueError as exc:
        raise SchemaScrapeError(f"{url} did not return JSON ({len(response.content)} bytes)") from exc


def _on_demand_usd(offer: dict, sku: str, url: str) -> Decimal:
    try:
        terms = offer["terms"]["OnDemand"][sku]
        dimensions = [dim for term in terms.values() for dim in term["priceDimensions"].values()]
        prices = {to_decimal(dim["pricePerUnit"]["USD"]) for dim in dimensions}
    except (KeyError, TypeError, AttributeError) as exc:
        raise SchemaScrapeError(f"{url}: SKU {sku} has no OnDemand USD price ({exc!r})") from exc
    except ValueError as exc:
        raise SchemaScrapeError(f"{url}: SKU {sku}: {exc}") from exc
    if len(prices) != 1 or None in prices:
        raise SchemaScrapeError(f"{url}: SKU {sku} has {len(prices)} different OnDemand prices")
    price = prices.pop()
    # The bulk files write "0.1000000000": keep the value, drop the padding ("0.1", never "1E-1").
    return Decimal(format(price.normalize(), "f"))  # type: ignore[union-attr]


def parse_eks_offer(offer: dict, url: str) -> tuple[ScrapedCapability, dict[str, object]]:
    """Standard control-plane fee (`...AmazonEKS-Hours:perCluster`) and the extended-support fee as a fact."""
    products = offer.get("products") if isinstance(offer, dict) else None
    if not isinstance(products, dict) or not products:
        raise SchemaScrapeError(f"{url}: no 'products'")
    found: dict[str, Decimal] = {}
    for sku, product in products.items():
        attributes = (product or {}).get("attributes") or {}
        usage = str(attributes.get("usagetype", ""))
        for suffix in ("AmazonEKS-Hours:perCluster", "AmazonEKS-Hours:extendedSupport"):
            if usage.endswith(suffix) and attributes.get("regionCode", EKS_REGION) == EKS_REGION:
                price = _on_demand_usd(offer, sku, url)
                if suffix in found and found[suffix] != price:
                    raise SchemaScrapeError(f"{url}: two prices for {suffix}: {found[suffix]} and {price}")
                found[suffix] = price
    standard = found.get("AmazonEKS-Hours:perCluster")
    if standard is None:
        raise SchemaScrapeError(f"{url}: no product with usagetype ending 'AmazonEKS-Hours:perCluster'")
    if standard < 0:
        raise SchemaScrapeError(f"{url}: negative control-plane price {standard}")
    facts: dict[str, object] = {"eks_control_plane": {"region": EKS_REGION, "standard_usd_hour": str(standard)}}
    extended = found.get("AmazonEKS-Hours:extendedSupport")
    if extended is not None:
        facts["eks_control_plane"]["extended_support_usd_hour"] = str(extended)  # type: ignore[index]
    capability = ScrapedCapability(
        key="control_plane_fee",
        value="paid" if standard > 0 else "free",
        amount=standard,
        currency="USD",
        label=f"{standard} USD per cluster-hour",
        detail=f"AmazonEKS price list, {EKS_REGION}: standard support {standard} USD per cluster-hour"
               + (f"; extended support adds {extended}" if extended is not None else "") + ".",
        source_url=url,
    )
    return capability, facts


CLIENTS = {"aws": AwsEc2PriceListClient}
