"""Google Cloud GPU and TPU prices from two public files (no Google key needed).

- Karpenter for GCP's initial price table (cloudpilot-ai/karpenter-provider-gcp, Apache-2.0,
  pkg/providers/pricing/initial-prices.json): `{"prices": {region: {"on_demand": {machine type: USD/h},
  "spot": {...}}}}` for 43 regions, data refreshed on 2026-08-03 (commit 373e2baa). We keep the
  accelerator-optimised machine types, whose GPUs come with the machine: Google's machine-type pages
  (`MACHINE_DOCS`) give each type's GPU model and count (A2 Standard = A100 40GB, A2 Ultra = A100 80GB, A3 High and
  A3 Mega = H100 80GB, G2 = L4 by size, G4 = RTX PRO 6000 by size; Google's GPU machine types page (`GPU_DOCS`)
  names the A3 High and A3 Mega GPUs "NVIDIA H100 SXM GPUs", so those offers carry form factor sxm, while the other
  series' form factor is not stated there and stays unset). A type whose GPU count the table below does not
  state (the smaller g4-standard sizes) is refused with that reason rather than guessed. N1 machines with attached
  GPUs are not in the file.
- gpuhunt's TPU table (dstackai/gpuhunt, MPL-2.0, src/gpuhunt/resources/tpu_pricing.json): per TPU version and
  region, on-demand and spot USD per chip-hour; last changed 2024-12-23. Each row is an offer of one chip.
- Google Cloud pricing of Cyclenerd/google-cloud-pricing-cost-calculator (Apache-2.0, pricing.yml, generated from
  Google's Cloud Billing Catalog SKUs): `compute.instance.<machine type>.cost.<region>` with `month_1y` and
  `month_3y`, the price of a month (730 hours) under a 1- and 3-year resource-based committed use discount (the
  machine's vCPU, memory and GPU commitment SKUs, and its bundled local SSD). Divided by 730 they are the offers'
  commitment prices per hour, dated by the file's own `about.timestamp`. The file leaves A2 Ultra out ("no public
  committed use discounts": its generator) and writes the on-demand month where it finds no commitment SKU; such a
  value is not below the on-demand price and the ingestion service leaves it out (providers/offer_normalise.py).
  The same file's `cpu` and `ram` give each machine type's vCPUs and memory (GB).

The bundled snapshot replays the files at the commits below (pricing.yml as an excerpt: its GPU machine types);
a live run fetches the same paths at the same commits.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime
from decimal import Decimal

import yaml

from .base import ProviderClient, SchemaScrapeError, ScrapedOffer, ScrapeResult, SourceInfo
from .http import get
from .normalize import positive, to_decimal
from .upstream import UpstreamFile

RECORDED = "gcp-catalog"
PRICES = UpstreamFile("cloudpilot-ai/karpenter-provider-gcp", "417f047b117521aba6d3ab120dac538a92161bf4",
                      "pkg/providers/pricing/initial-prices.json", "initial-prices.json")
PRICES_AS_OF = datetime(2026, 8, 3, tzinfo=UTC)  # the commit that refreshed the data (373e2baa)
TPUS = UpstreamFile("dstackai/gpuhunt", "35841515de3792fe6be73b0422ac8901b6b929c8",
                    "src/gpuhunt/resources/tpu_pricing.json", "tpu_pricing.json")
TPUS_AS_OF = datetime(2024, 12, 23, tzinfo=UTC)  # the file's last change in gpuhunt
COMMITMENTS = UpstreamFile("Cyclenerd/google-cloud-pricing-cost-calculator", "fd66b26ff84fee5cdd94f341ea89206e76c06b99",
                           "pricing.yml", "pricing.yml")
HOURS_A_MONTH = Decimal(730)  # the generator's default, which the file's own hour and month columns show
MACHINE_DOCS = "https://cloud.google.com/compute/docs/accelerator-optimized-machines"
GPU_DOCS = "https://cloud.google.com/compute/docs/gpus"  # "A3 High, A3 Edge | NVIDIA H100 SXM GPUs", "A3 Mega | ..."

# (pattern, GPU name for gpus.toml, memory per GPU in GB, GPU count: None = the number in the name, or size -> count)
MACHINE_GPUS: list[tuple[re.Pattern, str, int, dict[int, int] | None]] = [
    (re.compile(r"^a2-highgpu-(\d+)g$"), "A100", 40, None),
    (re.compile(r"^a2-megagpu-(\d+)g$"), "A100", 40, None),
    (re.compile(r"^a2-ultragpu-(\d+)g$"), "A100-80GB", 80, None),
    (re.compile(r"^a3-highgpu-(\d+)g$"), "H100", 80, None),
    (re.compile(r"^a3-megagpu-(\d+)g$"), "H100", 80, None),
    (re.compile(r"^g2-standard-(\d+)$"), "L4", 24, {4: 1, 8: 1, 12: 1, 16: 1, 32: 1, 24: 2, 48: 4, 96: 8}),
    (re.compile(r"^g4-standard-(\d+)$"), "RTXPRO6000S", 96, {48: 1, 96: 2, 192: 4, 384: 8}),
]
# Machine series whose GPU form factor Google's GPU machine types page (GPU_DOCS) states; the rest stay unset.
SERIES_FORM_FACTORS = {"a3-highgpu": "sxm", "a3-megagpu": "sxm"}


def machine_form_factor(machine_type: str) -> str:
    """'sxm' for the series Google's GPU page calls SXM, '' where it does not say."""
    return SERIES_FORM_FACTORS.get(machine_type.rsplit("-", 1)[0], "")


def machine_gpus(machine_type: str) -> tuple[str, int, int] | None:
    """(GPU name, memory per GPU, count) of an accelerator-optimised machine type; None for other types. Raises
    ValueError for a type of a known series whose count is not stated."""
    for pattern, name, memory, sizes in MACHINE_GPUS:
        match = pattern.match(machine_type)
        if not match:
            continue
        number = int(match.group(1))
        count = number if sizes is None else sizes.get(number)
        if not count:
            raise ValueError(f"GPU count of {machine_type} not stated in our machine-type table ({MACHINE_DOCS})")
        return name, memory, count
    return None


class GcpCatalogClient(ProviderClient):
    info = SourceInfo(slug="gcp-catalog", provider="gcp",
                      name="Google Cloud: Karpenter-for-GCP price table, gpuhunt TPU prices, commitment prices",
                      kind="catalog", url=f"https://github.com/{PRICES.repo}/blob/{PRICES.commit}/{PRICES.path}",
                      license="Apache-2.0 (karpenter-provider-gcp, google-cloud-pricing-cost-calculator); "
                              "MPL-2.0 (gpuhunt)",
                      revision=PRICES.commit)

    recordings = {file.raw_url: file.recorded(RECORDED) for file in (PRICES, TPUS, COMMITMENTS)}

    def _json(self, file: UpstreamFile):
        response = get(self.http, file.raw_url)
        try:
            return response.json()
        except ValueError as exc:
            raise SchemaScrapeError(f"{file.recorded_name} is not JSON ({len(response.content)} bytes)") from exc

    def fetch(self) -> ScrapeResult:
        result = ScrapeResult(offers=[])
        response = get(self.http, COMMITMENTS.raw_url)
        commitments = parse_commitments(response.text)
        parse_machine_prices(self._json(PRICES), result, commitments)
        parse_tpu_prices(self._json(TPUS), result)
        if not result.offers:
            raise SchemaScrapeError("no GPU machine type or TPU priced")
        return result


def parse_machine_prices(data: object, result: ScrapeResult, commitments: Commitments | None = None) -> None:
    regions = data.get("prices") if isinstance(data, dict) else None
    if not isinstance(regions, dict) or not regions:
        raise SchemaScrapeError("initial-prices.json: no 'prices' object of regions (renamed or truncated?)")
    refused: set[str] = set()
    for region, tables in sorted(regions.items()):
        if not isinstance(tables, dict) or not isinstance(tables.get("on_demand"), dict):
            raise SchemaScrapeError(f"initial-prices.json: region {region} has no 'on_demand' table")
        spot = tables.get("spot") if isinstance(tables.get("spot"), dict) else {}
        for machine_type in sorted(set(tables["on_demand"]) | set(spot)):
            try:
                gpus = machine_gpus(machine_type)
                if gpus is None:
                    continue
                price = to_decimal(tables["on_demand"].get(machine_type))
                spot_price = to_decimal(spot.get(machine_type))
            except ValueError as exc:
                if machine_type not in refused:  # one reason per type, not one per region
                    refused.add(machine_type)
                    result.rejected.append(f"{machine_type}: {exc}")
                continue
            if (price is None or price <= 0) and (spot_price is None or spot_price <= 0):
                result.rejected.append(f"{machine_type} in {region}: no positive price")
                continue
            name, memory, count = gpus
            one_year, three_years = (commitments.prices.get((machine_type, region), (None, None)) if commitments
                                     else (None, None))
            vcpus, ram = commitments.sizes.get(machine_type, (None, None)) if commitments else (None, None)
            result.offers.append(ScrapedOffer(
                instance_type=machine_type, region=region, gpu_name=name, gpu_count=Decimal(count),
                gpu_memory_gb=Decimal(memory), form_factor=machine_form_factor(machine_type), currency="USD",
                price_hour=_round(price), spot_price_hour=_round(spot_price), vcpus=vcpus, ram_gb=ram,
                price_as_of=PRICES_AS_OF, price_source_url=PRICES.blob_url,
                commit_1y_price_hour=one_year, commit_3y_price_hour=three_years,
                commitment_as_of=commitments.as_of if commitments and (one_year or three_years) else None,
                commitment_source_url=COMMITMENTS.blob_url if commitments and (one_year or three_years) else "",
            ))


@dataclass(frozen=True)
class Commitments:
    as_of: date
    # (machine type, region) -> (1-year, 3-year) USD per hour; None where the file states no such price
    prices: dict[tuple[str, str], tuple[Decimal | None, Decimal | None]]
    # machine type -> (vCPUs, memory in GB), as the file states them
    sizes: dict[str, tuple[Decimal | None, Decimal | None]]


def parse_commitments(text: str) -> Commitments:
    """The 1- and 3-year commitment prices per hour of the accelerator-optimised machine types in pricing.yml, and
    each type's vCPUs and memory."""
    try:
        data = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as exc:
        raise SchemaScrapeError(f"pricing.yml is not YAML ({len(text)} characters)") from exc
    try:
        stamp = int(data["about"]["timestamp"])
        machines = data["compute"]["instance"]
    except (TypeError, KeyError, ValueError) as exc:
        raise SchemaScrapeError("pricing.yml: no about.timestamp or compute.instance (renamed or truncated?)") from exc
    if not isinstance(machines, dict):
        raise SchemaScrapeError("pricing.yml: compute.instance is not a mapping of machine types")
    prices: dict[tuple[str, str], tuple[Decimal | None, Decimal | None]] = {}
    sizes: dict[str, tuple[Decimal | None, Decimal | None]] = {}
    for machine_type, machine in machines.items():
        try:
            if machine_gpus(machine_type) is None:
                continue
        except ValueError:
            continue  # a size our table does not state the GPUs of: its offer is refused anyway
        regions = machine.get("cost") if isinstance(machine, dict) else None
        if not isinstance(regions, dict):
            raise SchemaScrapeError(f"pricing.yml: {machine_type} has no cost per region")
        try:
            sizes[machine_type] = (to_decimal(machine.get("cpu")), to_decimal(machine.get("ram")))
        except ValueError as exc:
            raise SchemaScrapeError(f"pricing.yml: {machine_type}: {exc}") from exc
        for region, cost in regions.items():
            if not isinstance(cost, dict):
                raise SchemaScrapeError(f"pricing.yml: {machine_type} in {region} is not a mapping of prices")
            try:
                hour, month, one_year, three_years = (to_decimal(cost.get(key)) for key in (
                    "hour", "month", "month_1y", "month_3y"))
            except ValueError as exc:
                raise SchemaScrapeError(f"pricing.yml: {machine_type} in {region}: {exc}") from exc
            # The month is 730 hours of the hourly price: if not, the columns mean something else now.
            if hour is not None and month is not None and abs(hour * HOURS_A_MONTH - month) > Decimal("0.05"):
                raise SchemaScrapeError(f"pricing.yml: {machine_type} in {region}: month {month} is not 730 hours "
                                        f"of {hour}")
            one_year, three_years = (_round(value / HOURS_A_MONTH) if value else None
                                     for value in (one_year, three_years))
            if one_year or three_years:
                prices[(machine_type, region)] = (one_year, three_years)
    return Commitments(as_of=datetime.fromtimestamp(stamp, tz=UTC).date(), prices=prices, sizes=sizes)


def parse_tpu_prices(data: object, result: ScrapeResult) -> None:
    if not isinstance(data, dict) or not data:
        raise SchemaScrapeError("tpu_pricing.json: not an object of TPU versions")
    for version, regions in sorted(data.items()):
        if not isinstance(regions, dict):
            raise SchemaScrapeError(f"tpu_pricing.json: {version} is not an object of regions")
        # "TPU v6e", "TPU v3 device", "TPU v4 pod": the version names the chip, the suffix how it is sold.
        words = version.removeprefix("TPU ").strip().lower().split()
        if not words:
            raise SchemaScrapeError(f"tpu_pricing.json: unreadable TPU version {version!r}")
        slug, kind = "tpu-" + words[0], " ".join(words[1:])
        for region, cell in sorted(regions.items()):
            if not isinstance(cell, dict) or "On Demand (USD)" not in cell:
                raise SchemaScrapeError(f"tpu_pricing.json: {version} in {region} has no 'On Demand (USD)'")
            try:
                price = positive(cell.get("On Demand (USD)"), "on-demand price")
                spot = to_decimal(cell.get("Spot (USD)"))
            except ValueError as exc:
                result.rejected.append(f"{version} in {region}: {exc}")
                continue
            result.offers.append(ScrapedOffer(
                instance_type=f"{slug}{' ' + kind if kind else ''} (per chip)", region=region, gpu_name=slug,
                gpu_count=Decimal(1),
                currency="USD", price_hour=price, spot_price_hour=spot if spot and spot > 0 else None,
                price_as_of=TPUS_AS_OF, price_source_url=TPUS.blob_url,
            ))


def _round(value: Decimal | None) -> Decimal | None:
    # The file holds float artefacts (88.4899999025753); five decimals is the Offer column's precision.
    return None if value is None or value <= 0 else value.quantize(Decimal("0.00001"))


CLIENTS = {GcpCatalogClient.info.slug: GcpCatalogClient}
