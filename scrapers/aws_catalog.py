"""AWS GPU prices from three public files that other projects regenerate from AWS's own data (no AWS key needed).

- Karpenter's generated on-demand price tables (aws/karpenter-provider-aws, Apache-2.0): one Go map literal per
  partition, `"<instance type>": <price>,` per entry, under a `"<region>": {` line and after a
  `// generated at <timestamp>` line: us-east-1 and the two GovCloud regions in USD, cn-north-1 in CNY.
- Karpenter's instance-type reference (same repository, website/.../instance-types.md): per type a `### \\`type\\``
  heading, a Labels table (`karpenter.k8s.aws/instance-gpu-name`, `-gpu-count`, `-gpu-memory` in MiB per GPU,
  `-gpu-manufacturer`, vCPUs, memory) and a Resources table (`vpc.amazonaws.com/efa`: EFA interfaces, the RDMA
  fabric). This gives every offer its GPU facts, so the count is the SKU's own; only types with a GPU label are
  offers here (Inferentia, Trainium and the Qualcomm AI 100 have accelerator labels and no GPU catalog entry).
  g6f and gr6f are fractional L4s: gpu-count 0 and the slice's memory, so their share of one GPU is that memory
  over a whole L4's (the g6 L4 rows of the same file).
- The Vantage-derived table (tsaol/aws-gpu, data/all_gpu_instances.js, "Auto-generated from instances.vantage.sh
  data", its `// Last updated:` line is its date): on-demand per region for the other regions. Its `reserved`
  column states neither the term nor the payment option, so reserved prices are left out rather than mislabelled.
- The Spot Instance Advisor feed (as vendored by alexei-led/spotinfo): per region and instance type the savings
  versus on-demand (`s`, percent) and the interruption-frequency bucket (`r`, labels in `ranges`). It is a share
  and a risk bucket of another date, not a price: offers carry it as such and no dollar spot price is derived.

Every offer carries the date its price file states (price_as_of) and that file's URL at the commit read. The bundled
snapshot replays the files at the commits below; a live run fetches the same paths at the same commits from
raw.githubusercontent.com (moving to a newer commit is a change to this module, as for SkyPilot's catalogs).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path

from .base import ProviderClient, SchemaScrapeError, ScrapedOffer, ScrapeResult, SourceInfo
from .http import get
from .normalize import mib_to_gb, positive, to_decimal
from .upstream import UpstreamFile

RECORDED = "aws-catalog"


KARPENTER = "aws/karpenter-provider-aws"
KARPENTER_COMMIT = "1d927085dd81a9df9301e613f371dac5b4d16bfe"  # 2026-08-21
PRICE_FILES = (
    # (file, currency)
    (UpstreamFile(KARPENTER, KARPENTER_COMMIT, "pkg/providers/pricing/zz_generated.pricing_aws.go",
                  "zz_generated.pricing_aws.go"), "USD"),
    (UpstreamFile(KARPENTER, KARPENTER_COMMIT, "pkg/providers/pricing/zz_generated.pricing_aws_us_gov.go",
                  "zz_generated.pricing_aws_us_gov.go"), "USD"),
    (UpstreamFile(KARPENTER, KARPENTER_COMMIT, "pkg/providers/pricing/zz_generated.pricing_aws_cn.go",
                  "zz_generated.pricing_aws_cn.go"), "CNY"),
)
INSTANCE_TYPES = UpstreamFile(KARPENTER, KARPENTER_COMMIT, "website/content/en/docs/reference/instance-types.md",
                              "instance-types.md")
VANTAGE = UpstreamFile("tsaol/aws-gpu", "77fcd9fe1d0652fd07b830e5ed030d61da87923e", "data/all_gpu_instances.js",
                       "all_gpu_instances.js")
SPOT_ADVISOR = UpstreamFile("alexei-led/spotinfo", "05e933139449b888c78795b28af8e9370429a031",
                            "internal/spot/data/spot-advisor-data.json", "spot-advisor-data.json")
# The feed states no date of its own; this is the date of the commit that last changed the file (5eedf20a).
SPOT_ADVISOR_AS_OF = date(2025, 6, 28)

GENERATED_RE = re.compile(r"//\s*generated at (\S+)")
REGION_RE = re.compile(r'^\s*"([a-z]{2}(?:-[a-z]+)+-\d)":\s*\{\s*$')
PRICE_RE = re.compile(r'"([a-z0-9][a-z0-9.-]*\.[a-z0-9-]+)":\s*([0-9]+(?:\.[0-9]+)?)')
HEADING_RE = re.compile(r"^### `([^`]+)`\s*$")
ROW_RE = re.compile(r"^\s*\|([^|]+)\|([^|]*)\|\s*$")
VANTAGE_DATE_RE = re.compile(r"//\s*Last updated:\s*(\d{4}-\d{2}-\d{2})")
GPU_LABEL = "karpenter.k8s.aws/instance-gpu-name"


@dataclass(frozen=True, slots=True)
class GpuFacts:
    """What Karpenter's reference says about one instance type's GPUs."""

    gpu_name: str
    gpu_count: int
    gpu_memory_mib: int
    manufacturer: str
    vcpus: Decimal | None
    memory_mib: Decimal | None
    efa: int | None


def sections(text: str, heading: re.Pattern, cells: Callable[[str], Iterable[tuple[str, object]]]) -> dict[str, dict]:
    """Heading -> {name: value} of the cells read from the lines below it, up to the next heading."""
    found: dict[str, dict] = {}
    current: dict | None = None
    for line in text.splitlines():
        match = heading.match(line)
        if match:
            current = found.setdefault(match.group(1), {})
        elif current is not None:
            current.update(cells(line))
    return found


def parse_instance_types(text: str) -> dict[str, GpuFacts]:
    """Instance type -> GPU facts, for the types whose labels name a GPU. Raises when no type does (renamed labels,
    a truncated or different file)."""
    by_type = sections(text, HEADING_RE, lambda line: [
        (row.group(1).strip(), row.group(2).strip()) for row in [ROW_RE.match(line)] if row])
    facts: dict[str, GpuFacts] = {}
    for instance_type, cells in by_type.items():
        if GPU_LABEL not in cells:
            continue
        try:
            facts[instance_type] = GpuFacts(
                gpu_name=cells[GPU_LABEL],
                gpu_count=int(cells["karpenter.k8s.aws/instance-gpu-count"]),
                gpu_memory_mib=int(cells["karpenter.k8s.aws/instance-gpu-memory"]),
                manufacturer=cells.get("karpenter.k8s.aws/instance-gpu-manufacturer", ""),
                vcpus=to_decimal(cells.get("karpenter.k8s.aws/instance-cpu")),
                memory_mib=to_decimal(cells.get("karpenter.k8s.aws/instance-memory")),
                efa=int(cells["vpc.amazonaws.com/efa"]) if cells.get("vpc.amazonaws.com/efa") else None,
            )
        except (KeyError, ValueError) as exc:
            raise SchemaScrapeError(f"instance-types.md: {instance_type}: GPU labels incomplete ({exc})") from exc
    if not facts:
        raise SchemaScrapeError(f"instance-types.md: no instance type with a {GPU_LABEL} label "
                                f"in {len(by_type)} sections (renamed labels or a truncated file?)")
    return facts


def parse_price_table(text: str, origin: str) -> tuple[datetime, dict[str, dict[str, Decimal]]]:
    """(generated-at time, region -> instance type -> price) of one Karpenter zz_generated file."""
    stamp = GENERATED_RE.search(text)
    if stamp is None:
        raise SchemaScrapeError(f"{origin}: no '// generated at' line")
    try:
        generated = datetime.fromisoformat(stamp.group(1).replace("Z", "+00:00")).astimezone(UTC)
    except ValueError as exc:
        raise SchemaScrapeError(f"{origin}: unreadable generated-at time {stamp.group(1)!r}") from exc
    regions = sections(text, REGION_RE, lambda line: [(kind, Decimal(price)) for kind, price in PRICE_RE.findall(line)])
    if not any(regions.values()):
        raise SchemaScrapeError(f"{origin}: no region with prices (format changed or file truncated?)")
    return generated, regions


def parse_vantage(text: str) -> tuple[date, list[dict]]:
    """(the file's 'Last updated' date, its instance list) from the `const allGPUInstances = [...]` literal."""
    stamp = VANTAGE_DATE_RE.search(text)
    if stamp is None:
        raise SchemaScrapeError("all_gpu_instances.js: no '// Last updated:' line")
    start, end = text.find("["), text.rfind("]")
    if start < 0 or end < start:
        raise SchemaScrapeError("all_gpu_instances.js: no array literal (truncated?)")
    try:
        rows = json.loads(text[start:end + 1])
    except ValueError as exc:
        raise SchemaScrapeError(f"all_gpu_instances.js: the array is not JSON ({exc})") from exc
    if not isinstance(rows, list) or not rows or not all(isinstance(row, dict) for row in rows):
        raise SchemaScrapeError("all_gpu_instances.js: the array holds no instance objects")
    for row in rows:
        if not isinstance(row.get("apiName") or row.get("name"), str) or not isinstance(row.get("pricing"), dict):
            raise SchemaScrapeError("all_gpu_instances.js: an instance has no name or pricing (renamed fields?)")
    return date.fromisoformat(stamp.group(1)), rows


@dataclass(frozen=True, slots=True)
class SpotAdvice:
    savings_pct: int
    interruption: str


def parse_spot_advisor(data: object) -> dict[tuple[str, str], SpotAdvice]:
    """(region, instance type) -> savings share and interruption bucket, Linux only."""
    if not isinstance(data, dict) or not isinstance(data.get("spot_advisor"), dict) \
            or not isinstance(data.get("ranges"), list):
        raise SchemaScrapeError("spot-advisor-data.json: no 'spot_advisor' regions or 'ranges' labels")
    labels = {item.get("index"): item.get("label") for item in data["ranges"] if isinstance(item, dict)}
    advice: dict[tuple[str, str], SpotAdvice] = {}
    for region, systems in data["spot_advisor"].items():
        for instance_type, cell in ((systems or {}).get("Linux") or {}).items():
            if not isinstance(cell, dict) or not isinstance(cell.get("s"), int) or cell.get("r") not in labels:
                continue
            advice[(region, instance_type)] = SpotAdvice(cell["s"], str(labels[cell["r"]]))
    if not advice:
        raise SchemaScrapeError("spot-advisor-data.json: no Linux savings for any instance type")
    return advice


class AwsCatalogClient(ProviderClient):
    info = SourceInfo(slug="aws-catalog", provider="aws",
                      name="AWS: Karpenter price tables, Vantage-derived regional prices, Spot Advisor", kind="catalog",
                      url=f"https://github.com/{KARPENTER}/tree/{KARPENTER_COMMIT}/pkg/providers/pricing",
                      license="Apache-2.0 (Karpenter, spotinfo); MIT stated by tsaol/aws-gpu",
                      revision=KARPENTER_COMMIT)

    @classmethod
    def files(cls) -> list[UpstreamFile]:
        return [file for file, _ in PRICE_FILES] + [INSTANCE_TYPES, VANTAGE, SPOT_ADVISOR]

    @classmethod
    def recorded(cls) -> dict[str, Path]:
        return {file.raw_url: file.recorded(RECORDED) for file in cls.files()}

    def _text(self, file: UpstreamFile) -> str:
        return get(self.http, file.raw_url).text

    def fetch(self) -> ScrapeResult:
        facts = parse_instance_types(self._text(INSTANCE_TYPES))
        try:
            spot = parse_spot_advisor(json.loads(self._text(SPOT_ADVISOR)))
        except ValueError as exc:
            raise SchemaScrapeError(f"spot-advisor-data.json is not JSON ({exc})") from exc
        whole = whole_gpu_memory(facts)
        result = ScrapeResult(offers=[])
        covered: set[str] = set()
        for file, currency in PRICE_FILES:
            generated, regions = parse_price_table(self._text(file), file.recorded_name)
            for region, prices in regions.items():
                covered.add(region)
                for instance_type, price in sorted(prices.items()):
                    if instance_type in facts:
                        self._add(result, facts, whole, spot, instance_type, region, price, currency, generated,
                                  file.blob_url)
        as_of, rows = parse_vantage(self._text(VANTAGE))
        vantage_as_of = datetime(as_of.year, as_of.month, as_of.day, tzinfo=UTC)
        for row in rows:
            instance_type = row.get("apiName") or row["name"]
            if instance_type not in facts:
                if any(isinstance(cell, dict) and cell.get("onDemand") for cell in row["pricing"].values()):
                    result.rejected.append(f"{instance_type}: not in Karpenter's instance-type reference, so no "
                                           f"GPU facts to price it by (older generation or not a GPU type)")
                continue
            for region, cell in sorted(row["pricing"].items()):
                # Karpenter's tables are newer for the regions they cover.
                if region in covered or not isinstance(cell, dict) or cell.get("onDemand") is None:
                    continue
                self._add(result, facts, whole, spot, instance_type, region, cell["onDemand"], "USD", vantage_as_of,
                          VANTAGE.blob_url)
        if not result.offers:
            raise SchemaScrapeError("no GPU instance type priced in any file")
        return result

    @staticmethod
    def _add(result, facts, whole, spot, instance_type, region, on_demand, currency, as_of, url) -> None:
        try:
            price = positive(on_demand, "on-demand price")
        except ValueError as exc:
            result.rejected.append(f"{instance_type} in {region}: {exc}")
            return
        fact = facts[instance_type]
        count, fraction = gpu_share(fact, whole)
        if count is None:
            result.rejected.append(f"{instance_type}: GPU count 0 and no whole {fact.gpu_name} to size the slice by")
            return
        advice = spot.get((region, instance_type))
        result.offers.append(ScrapedOffer(
            instance_type=instance_type,
            region=region,
            gpu_name=fact.gpu_name,
            gpu_count=count,
            gpu_memory_gb=mib_to_gb(fact.gpu_memory_mib),
            vcpus=fact.vcpus,
            ram_gb=None if fact.memory_mib is None else (fact.memory_mib / 1024).quantize(Decimal("0.01")),
            currency=currency,
            price_hour=price,
            price_as_of=as_of,
            price_source_url=url,
            gpu_fraction=fraction,
            efa_interfaces=fact.efa,
            spot_savings_pct=advice.savings_pct if advice else None,
            spot_interruption=advice.interruption if advice else "",
            spot_as_of=SPOT_ADVISOR_AS_OF if advice else None,
        ))


def whole_gpu_memory(facts: dict[str, GpuFacts]) -> dict[str, int]:
    """GPU name -> the memory (MiB) of one whole GPU of it, from the types that carry whole GPUs."""
    whole: dict[str, int] = {}
    for fact in facts.values():
        if fact.gpu_count >= 1:
            whole[fact.gpu_name] = max(whole.get(fact.gpu_name, 0), fact.gpu_memory_mib)
    return whole


def gpu_share(fact: GpuFacts, whole: dict[str, int]) -> tuple[Decimal | None, Decimal | None]:
    """(GPU count, share of one GPU or None). A type with gpu-count 0 and some GPU memory is a slice of one GPU
    (g6f, gr6f): its share is its memory over a whole GPU's, rounded to 1/10000, and that share is its count."""
    if fact.gpu_count >= 1:
        return Decimal(fact.gpu_count), None
    full = whole.get(fact.gpu_name)
    if not full or fact.gpu_memory_mib <= 0 or fact.gpu_memory_mib >= full:
        return None, None
    share = (Decimal(fact.gpu_memory_mib) / Decimal(full)).quantize(Decimal("0.0001"))
    return share, share


CLIENTS = {AwsCatalogClient.info.slug: AwsCatalogClient}
