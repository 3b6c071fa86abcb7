"""Public multi-cloud GPU catalogs from SkyPilot (github.com/skypilot-org/skypilot-catalog, Apache-2.0).

SkyPilot's maintainers regenerate one `vms.csv` per cloud from each provider's API; we import them for providers we
have no client for yet, marked as catalog-derived with the catalog's commit (the bundled snapshot replays the files
at the commits below; a live run fetches the same paths, and dates their prices by the commit, read from GitHub's
API: the files state no date, and the commits' dates were not recorded with the copies). Columns: InstanceType,
AcceleratorName, AcceleratorCount, vCPUs, MemoryGiB, Price, SpotPrice (per instance-hour, in USD unless CURRENCIES
says otherwise), Region and GpuInfo (a Python/JSON literal with per-GPU `MemoryInfo.SizeInMiB` and
`TotalGpuMemoryInMiB`). Rows without an accelerator are CPU machines and are not offers for this product; a row with
no region is a plan no region could take when the file was made.
"""

from __future__ import annotations

import ast
import csv
import json
import logging
import re
from collections.abc import Iterator
from dataclasses import replace
from decimal import Decimal
from pathlib import Path

from .base import ProviderClient, SchemaScrapeError, ScrapedOffer, ScrapeError, ScrapeResult, SourceInfo
from .http import lines_whole, stream_text
from .normalize import default_gpu_resolver, mib_to_gb, name_key, positive, to_decimal
from .upstream import commit_date

logger = logging.getLogger(__name__)

RECORDED = Path(__file__).resolve().parent / "recorded"
REPOSITORY_NAME = "skypilot-org/skypilot-catalog"
REPOSITORY = f"https://github.com/{REPOSITORY_NAME}"
RAW = "https://raw.githubusercontent.com/skypilot-org/skypilot-catalog"
REQUIRED_COLUMNS = {"InstanceType", "AcceleratorName", "AcceleratorCount", "Price", "SpotPrice", "Region"}


def catalog_url(revision: str, path: str) -> str:
    return f"{RAW}/{revision}/{path}"


class SkyPilotCatalogClient(ProviderClient):
    """Base for one provider's SkyPilot catalog file; subclasses set `info` and `path`."""

    info: SourceInfo
    path: str
    memory_size_is_total = False
    # SkyPilot writes each provider's own prices as they come; Seeweb's API answers in euros (its page's figures).
    currency = "USD"

    @classmethod
    def url(cls) -> str:
        return catalog_url(cls.info.revision, cls.path)

    @classmethod
    def recorded(cls) -> dict[str, Path]:
        return {cls.url(): RECORDED / "skypilot" / cls.path}

    def fetch(self) -> ScrapeResult:
        """The catalog's offers as a generator that parses the file as it arrives (never the whole body or a list
        of offers in memory: a 1,000,000-row file goes through offers_sync in the memory bench/ingest.py states).
        What it refuses is appended to the result's `rejected` as it is read; a file with a renamed column, cut
        short or with no GPU row raises SchemaScrapeError while it is read, before anything is written."""
        # The file states no date; its commit's is the date its prices hold (issue 13). A replay, which has no
        # recording of GitHub's answer, and a live run GitHub does not answer leave the offers undated: never
        # dated by the run, since the file at a pinned commit is no fresher for being read again.
        try:
            as_of = commit_date(self.http, REPOSITORY_NAME, self.info.revision)
        except ScrapeError as exc:
            logger.info("%s: the commit date of %s was not read (%s); its offers state no price date",
                        self.info.slug, self.info.revision[:8], exc)
            as_of = None
        result = ScrapeResult(offers=[])
        result.offers = self._streamed(result, as_of)
        return result

    def _streamed(self, result: ScrapeResult, as_of) -> Iterator[ScrapedOffer]:
        with stream_text(self.http, self.url()) as chunks:
            try:
                yield from self._parse(lines_whole(chunks, self.path), result, as_of)
            except csv.Error as exc:
                raise SchemaScrapeError(f"{self.path}: not a CSV file ({exc})") from exc

    def _parse(self, lines: Iterator[str], result: ScrapeResult, as_of) -> Iterator[ScrapedOffer]:
        reader = csv.DictReader(lines)
        missing = REQUIRED_COLUMNS - set(reader.fieldnames or [])
        if missing:
            raise SchemaScrapeError(f"{self.path}: columns missing or renamed: {', '.join(sorted(missing))}")
        # A size listed once per zone (OCI) repeats its row: the ingestion service takes the same row again as the same
        # offer and refuses a second row at another price with the reason, so no map of keys is kept here.
        offers = 0
        for line, row in enumerate(reader, start=2):
            if None in row or None in row.values():
                # Fewer or more fields than the header: a broken or truncated file, not one odd row.
                raise SchemaScrapeError(f"{self.path}: line {line} has {len(row) - (None in row)} fields where the "
                                        f"header names {len(reader.fieldnames or [])}: truncated or malformed")
            if not (row.get("AcceleratorName") or "").strip():
                continue
            if not row["Region"].strip():
                # SkyPilot's Seeweb fetcher writes a plan no region could take when the file was made (Seeweb's
                # regions/availables answer was empty: sold out) with an empty region: not a machine on sale there.
                continue
            try:
                offer = self.known_size(parse_row(row, size_is_total=self.memory_size_is_total,
                                                  currency=self.currency))
            except ValueError as exc:
                result.rejected.append(f"line {line} ({row.get('InstanceType')}): {exc}")
                result.rejected_keys.add((row["InstanceType"], region_named(row["Region"])))
                continue
            offers += 1
            yield offer if as_of is None else replace(offer, price_as_of=as_of)
        if not offers:
            raise SchemaScrapeError(f"{self.path}: no GPU rows in {reader.line_num} lines")

    def known_size(self, offer: ScrapedOffer) -> ScrapedOffer:
        """Overridden where the provider's own size table says more than the catalog row (see _azure_size)."""
        return offer


VAST_INSTANCE_RE = re.compile(r"^\d+x-(.+?)-\d+-\d+$")


def _vast_size(self, offer: ScrapedOffer) -> ScrapedOffer:
    """Vast.ai's instance types spell the GPU variant ("2x-RTX_3060_Ti-32-65536") where the catalog's
    AcceleratorName drops it ("RTX3060"): an RTX 3060 Ti is not an RTX 3060, so the instance type's spelling is
    used when the GPU catalog knows it (form factors like A100_PCIE are read from the instance type anyway)."""
    match = VAST_INSTANCE_RE.match(offer.instance_type)
    if match and name_key(match.group(1)) != name_key(offer.gpu_name) \
            and default_gpu_resolver().resolve(match.group(1)) is not None:
        return replace(offer, gpu_name=match.group(1))
    return offer


def _azure_size(self, offer: ScrapedOffer) -> ScrapedOffer:
    """Azure's catalog rows name only "H100" and give no memory; Microsoft's size pages (the table in
    scrapers/azure.py, one place for Azure sizes) say e.g. NC40ads_H100_v5 carries an H100 NVL with 94 GB."""
    from .azure import SIZES

    size = SIZES.get(offer.instance_type)
    if size is None:
        return offer
    # The count is left as the catalog wrote it: the ingestion service corrects it from the same table and says
    # so on the run (the catalog counts 12 GPUs in Standard_ND96isr_H100_v5; Microsoft's page says 8).
    return replace(offer, gpu_name=size.gpu_name, gpu_memory_gb=Decimal(size.gpu_memory_gb),
                   gpu_fraction=size.gpu_fraction)


def region_named(raw: str) -> str:
    """The catalog's region without its empty parts: SkyPilot's Vast.ai fetcher writes a host whose state it does not
    know as ", US, NA", which reads as "US, NA"."""
    if "," not in raw:
        return raw
    return ", ".join(part for part in (piece.strip() for piece in raw.split(",")) if part)


def parse_row(row: dict[str, str], size_is_total: bool = False, currency: str = "USD") -> ScrapedOffer:
    count = positive(row["AcceleratorCount"], "GPU count")
    price = to_decimal(row["Price"])
    spot = to_decimal(row["SpotPrice"])
    if spot is not None and spot == 0:
        spot = None  # Vast.ai rows write 0.00 where there is no interruptible price.
    if price is not None and price <= 0:
        raise ValueError(f"on-demand price {row['Price']!r}")
    if spot is not None and spot < 0:
        raise ValueError(f"spot price {row['SpotPrice']!r}")
    if price is None and spot is None:
        raise ValueError("no price")
    return ScrapedOffer(
        instance_type=row["InstanceType"],
        region=region_named(row["Region"]),
        gpu_name=row["AcceleratorName"].strip(),
        gpu_count=count,
        gpu_memory_gb=gpu_memory_per_gpu(row.get("GpuInfo") or "", count, size_is_total),
        vcpus=to_decimal(row.get("vCPUs")),
        ram_gb=to_decimal(row.get("MemoryGiB")),
        currency=currency,
        price_hour=price,
        spot_price_hour=spot,
    )


def gpu_memory_per_gpu(gpu_info: str, count: Decimal, size_is_total: bool = False) -> Decimal | None:
    """Per-GPU memory from GpuInfo's `MemoryInfo.SizeInMiB`, or None when it does not say.

    The catalogs disagree on the field: most give per-GPU MiB (and TotalGpuMemoryInMiB is not reliable: Lambda's
    repeats the per-GPU size for 8-GPU machines), Vast.ai's holds the total of all GPUs (`size_is_total`), and
    Shadeform's holds GB mislabelled as MiB (`SizeInMiB: 48` for an A6000): no GPU has under 1 GiB of memory.
    DigitalOcean's file spells the keys in lower case.
    """
    info = _literal(gpu_info)
    if not isinstance(info, dict):
        return None
    info = _lower_keys(info)
    gpus = info.get("gpus") or [{}]
    size = to_decimal((gpus[0].get("memoryinfo") or {}).get("sizeinmib"))
    if size is None or size <= 0:
        return None
    if size_is_total:
        size = size / count
    if size < 1024:
        return size.quantize(Decimal("0.1"))
    return mib_to_gb(size)


def _lower_keys(value):
    if isinstance(value, dict):
        return {str(key).lower(): _lower_keys(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_lower_keys(item) for item in value]
    return value


def _literal(text: str):
    if not text or text[0] != "{":
        return None
    try:
        return json.loads(text)
    except ValueError:
        pass
    try:
        return ast.literal_eval(text.replace(": null", ": None"))
    except (ValueError, SyntaxError):
        logger.warning("unparsable GpuInfo %r", text[:80])
        return None


def _catalog(slug: str, provider: str, name: str, path: str, revision: str) -> type[SkyPilotCatalogClient]:
    # Vast.ai's rows give the memory of all GPUs together (2x H200: 287542 MiB).
    info = SourceInfo(
        slug=slug,
        provider=provider,
        name=f"SkyPilot catalog: {name}",
        kind="catalog",
        url=f"{REPOSITORY}/blob/{revision}/{path}",
        license="Apache-2.0",
        revision=revision,
    )
    attributes = {"info": info, "path": path, "memory_size_is_total": provider == "vastai",
                  "currency": CURRENCIES.get(provider, "USD")}
    if provider == "azure":
        attributes["known_size"] = _azure_size
    if provider == "vastai":
        attributes["known_size"] = _vast_size
    return type(f"SkyPilot{name.replace(' ', '').replace('.', '')}Client", (SkyPilotCatalogClient,), attributes)


# Catalogs whose prices are not dollars: SkyPilot's Seeweb fetcher writes Seeweb's API `hourly_price` unconverted,
# and those are euros (Seeweb's GPU page: "NVIDIA H200 ... Hourly Cost 2.60 €", the file's 2.6).
CURRENCIES = {"seeweb": "EUR"}

# (source slug, provider slug, display name, path in the repository, commit the bundled copy was taken at)
CATALOGS = [
    ("skypilot-lambda", "lambda", "Lambda", "catalogs/v8/lambda/vms.csv", "0f4070387edc953d7004cff197940e1918a1d6aa"),
    ("skypilot-verda", "verda", "Verda", "catalogs/v8/verda/vms.csv", "000c1d0bf24621f4ac37cfa585f0897c1aa1d9cf"),
    ("skypilot-nebius", "nebius", "Nebius", "catalogs/v8/nebius/vms.csv", "0082b0435f3912ae4c566856b272455cc78f4f61"),
    ("skypilot-shadeform", "shadeform", "Shadeform", "catalogs/v8/shadeform/vms.csv",
     "002363dac75913b446b2d3d564ae795678849dfd"),
    ("skypilot-vast", "vastai", "Vast.ai", "catalogs/v8/vast/vms.csv", "01b8cdda287814b30ff0acb49746cca19fbd4355"),
    ("skypilot-hyperstack", "hyperstack", "Hyperstack", "catalogs/v8/hyperstack/vms.csv",
     "fdc9d908ab0b2af9f468f139fb3f662c8c6b3257"),
    ("skypilot-cudo", "cudo", "Cudo Compute", "catalogs/v8/cudo/vms.csv", "113567a74b2f208af08e0c9236e26cc354a2bf65"),
    ("skypilot-jarvislabs", "jarvislabs", "JarvisLabs", "catalogs/v8/jarvislabs/vms.csv",
     "57d65781a544958d7d07014f062f7d1cad8415a7"),
    ("skypilot-oci", "oci", "Oracle Cloud", "catalogs/v8/oci/vms.csv", "0588751183820cf2dab5c8a89447e8aac9f73fd5"),
    ("skypilot-azure", "azure", "Azure", "catalogs/v6/azure/vms.csv", "098741e70562f65d7af1cceb81e33b284f742604"),
    ("skypilot-digitalocean", "digitalocean", "DigitalOcean", "catalogs/v6/do/vms.csv",
     "1fbe7331dd1f13d70ac4f249bb7ee7a659fc6b6a"),
    ("skypilot-fluidstack", "fluidstack", "FluidStack", "catalogs/v6/fluidstack/vms.csv",
     "002403bca05e2ab5110637448f3b1654c983d5d5"),
    ("skypilot-paperspace", "paperspace", "Paperspace", "catalogs/v6/paperspace/vms.csv",
     "e520054145d1bce6748bcf18c9a25ddd6ea9a348"),
    ("skypilot-seeweb", "seeweb", "Seeweb", "catalogs/v8/seeweb/vms.csv", "004a1aef76542bb40d12fcedaaf091551ddf5fb4"),
]

CLIENTS = {slug: _catalog(slug, provider, name, path, rev) for slug, provider, name, path, rev in CATALOGS}
