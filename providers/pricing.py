"""Which price is true, and since when: each offer's "price as of" with how we know it, when a price is old, and
which machine types are retired (they leave the live list) or retiring (they carry the date).

Three ways an offer's price gets its date (`Offer.price_dated_by`):
- "source": the source states it (an API's timestamp, a price list's `lastUpdated`, a catalog commit's date, the
  capture day of a recorded answer);
- "inferred": the source states none, but the row's price equals, to the cent, what a dated record says for the same
  GPU ("equals Oracle's price list of 2026-08-14"): the row takes that record's date, and the source carries the
  evidence (providers/data/price_dating.toml, checked against each original);
- None (undated): neither; pages say "undated", never a guessed date.

A price is "old" when its date is more than OLD_AFTER_DAYS before now: a GPU cloud's list price can move within a
month (Lambda's did between 2026-03 and 2026-04), so half a year is already long; an undated price is not "old", it
is undated. This replaces the run-based "stale" flag on offers (which marked every replayed row).

Plain functions over the data file and dates: no ORM here, so services (which write the dates at ingestion) and the
pages (which show them) share one rule.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal
from functools import cache
from pathlib import Path

from django.utils.translation import gettext_lazy as _

DATING_FILE = Path(__file__).resolve().parent / "data" / "price_dating.toml"

# Prices dated more than this long ago are flagged "old" on every page and in the API (`price_is_old`).
OLD_AFTER_DAYS = 180

STATED = "source"
INFERRED = "inferred"
UNDATED = None


class DatingFileError(ValueError):
    """providers/data/price_dating.toml breaks its format (the message names the source and the problem)."""


@dataclass(frozen=True, slots=True)
class Dating:
    """The dated record a source's prices were matched against."""

    slug: str
    as_of: date
    evidence: str
    evidence_zh: str  # the same in Chinese, shown on pages and in the API beside it (price_evidence_zh)
    evidence_url: str
    verified_on: date
    # "region/instance type", instance type, or GPU name as the source spells it -> per GPU-hour on `as_of`, in the
    # source's currency (the finer key first: a region where the provider prices regions apart, as Azure does; an
    # instance type where one GPU name covers sizes the record prices apart, as Lambda's H100 PCIe and SXM).
    prices: dict[str, Decimal]

    @property
    def moment(self) -> datetime:
        return datetime.combine(self.as_of, time.min, tzinfo=UTC)

    def matches(self, instance_type: str, gpu_name: str, price_hour: Decimal | None, gpu_count: Decimal,
                region: str = "") -> bool:
        """Whether the row's on-demand price per GPU-hour equals the record's for its size in its region (or else
        its size, or else its GPU), to the hundredth of a cent."""
        expected = self.prices.get(f"{region}/{instance_type}",
                                   self.prices.get(instance_type, self.prices.get(gpu_name.strip())))
        if expected is None or price_hour is None or not gpu_count:
            return False
        return (price_hour / gpu_count).quantize(Decimal("0.0001")) == expected.quantize(Decimal("0.0001"))


@cache
def datings() -> dict[str, tuple[Dating, ...]]:
    """Every source's dating records, newest first, by source slug (a source may have several: `[[source.<slug>.
    also]]` adds one); raises DatingFileError on a malformed entry."""
    with DATING_FILE.open("rb") as handle:
        data = tomllib.load(handle)
    register = {}
    for slug, entry in (data.get("source") or {}).items():
        records = [_dating(slug, entry, f"{DATING_FILE.name} [source.{slug}]")]
        for number, extra in enumerate(entry.get("also") or [], start=1):
            records.append(_dating(slug, extra, f"{DATING_FILE.name} [source.{slug}] also #{number}"))
        register[slug] = tuple(sorted(records, key=lambda record: record.as_of, reverse=True))
    return register


def _dating(slug: str, entry: dict, where: str) -> Dating:
    try:
        as_of, verified_on = entry["as_of"], entry["verified_on"]
        evidence, url = entry["evidence"].strip(), entry["evidence_url"].strip()
        evidence_zh = entry["evidence_zh"].strip()
        prices = {name: Decimal(value) for name, value in entry["prices"].items()}
    except (KeyError, TypeError, AttributeError, ArithmeticError) as exc:
        raise DatingFileError(f"{where}: missing or malformed {exc}") from exc
    if not isinstance(as_of, date) or not isinstance(verified_on, date) or as_of > verified_on:
        raise DatingFileError(f"{where}: as_of and verified_on must be dates, as_of not after verified_on")
    if not evidence or not evidence_zh or not url.startswith("https://") or not prices:
        raise DatingFileError(f"{where}: needs evidence, evidence_zh, an https evidence_url and at least one price")
    return Dating(slug, as_of, evidence, evidence_zh, url, verified_on, prices)


def dating_of(slug: str) -> tuple[Dating, ...]:
    """A source's dating records, newest first; () when it has none."""
    return datings().get(slug, ())


def price_date(*, slug: str, stated: datetime | None, instance_type: str, gpu_name: str,
               price_hour: Decimal | None, gpu_count: Decimal, region: str = "") -> tuple[datetime | None, str | None]:
    """(price as of, how we know) for one row of source `slug`: the date the source states, else the date of the
    newest of its dating records whose price matches the row, else (None, UNDATED)."""
    if stated is not None:
        return stated, STATED
    for dating in dating_of(slug):
        if dating.matches(instance_type, gpu_name, price_hour, gpu_count, region):
            return dating.moment, INFERRED
    return None, UNDATED


def old_cutoff(now: datetime) -> datetime:
    """Prices dated before this moment are old."""
    return now - timedelta(days=OLD_AFTER_DAYS)


def is_old(price_as_of: datetime | None, now: datetime) -> bool:
    """Whether a price's date is more than OLD_AFTER_DAYS before `now` (an undated price is not old: it is undated)."""
    return price_as_of is not None and price_as_of < old_cutoff(now)


# --- prices by term ---------------------------------------------------------------------------------------------

# The commitment terms an offer's price can be stated for (Offer.commit_<term>_price_hour_usd): the `commitment`
# filter's choices. An offer without one is not known to lack it: no source we read states it.
COMMITMENT_TERMS = [("1y", _("has a stated 1-year commitment price")),
                    ("3y", _("has a stated 3-year commitment price"))]

# What a commitment price of each provider is (the one kind we read per provider), for the offer page. A provider
# without an entry has no commitment price in our data; the sources page says why (COMMITMENTS_MISSING).
COMMITMENT_KINDS = {
    "gcp": _("Google's resource-based committed use discount (vCPU, memory and GPU), billed monthly"),
    "aws": _("EC2 Reserved Instance, standard, no upfront (Linux, shared tenancy)"),
    "azure": _("Azure savings plan for compute, hourly commitment"),
}
# The big clouds whose commitment prices we do not have, and why: no public copy of the provider's own rows could be
# recorded here (tests replay recorded answers only).
COMMITMENTS_MISSING = {
    "aws": _("a live run of the AWS Price List reads the standard, no-upfront Reserved Instance rates of GPU types "
             "from AWS's bulk file, but the recording of that file bundled here holds no GPU rows, and third-party "
             "copies (ec2instances.info) are not AWS's rows; Savings Plans are not read"),
    "azure": _("a live run of the Retail Prices API reads each GPU size's 1- and 3-year savings plan rates, but the "
               "recorded answer bundled here is a CPU size's, and no recorded answer with GPU sizes' reservation "
               "items could be had"),
}


@dataclass(frozen=True, slots=True)
class Unpriced:
    """Why a provider we cover has no price in our data, when we looked, and the provider's own price page."""

    reason: str
    price_page: str
    checked_on: date


# Providers with no price in any source we read, and why (scrapers/data/prices/README.md has the searches). A provider
# without prices and without an entry gets the generic sentence.
UNPRICED = {
    "hetzner": Unpriced(_("its GEX pages load their prices from a price feed on hetzner.com that no copy we could "
                          "record holds; the prices we found are third parties' notes of it"),
                        "https://www.hetzner.com/dedicated-rootserver/matrix-gpu/", date(2026, 12, 5)),
    "voltage-park": Unpriced(_("its plan cards say \"Contact for pricing\"; its self-serve H100 price is quoted only "
                               "by third parties in what we could record"),
                             "https://www.voltagepark.com/pricing", date(2026, 12, 5)),
    "together": Unpriced(_("its GPU cluster prices are on a page no copy we could record holds; only third-party "
                           "averages quote them"), "https://www.together.ai/pricing", date(2026, 12, 5)),
    "civo": Unpriced(_("its GPU sizes are listed without prices in what we could record, and only third-party "
                       "averages quote its price page"), "https://www.civo.com/pricing", date(2026, 12, 5)),
    "volcengine": Unpriced(_("its GPU instance prices are shown by its price calculator and console, and no public "
                             "page stating them was found"), "https://www.volcengine.com/pricing", date(2026, 12, 5)),
    "huawei": Unpriced(_("its ModelArts and CCI billing pages point to price-detail pages whose numbers no copy we "
                         "could record holds"), "https://www.huaweicloud.com/pricing.html", date(2026, 12, 5)),
}


@dataclass(frozen=True, slots=True)
class TermPrice:
    label: str
    kind: str
    price: Decimal | None  # per GPU-hour, in the page's currency
    saving: int | None  # percent below the on-demand price per GPU-hour, when both are known


def commitment_terms(offer, convert) -> list[TermPrice]:
    """The offer's 1- and 3-year commitment prices per GPU-hour, converted with `convert`, with their saving
    against its on-demand price; an entry with price None says no source we read states one."""
    terms = []
    for label, per_gpu in ((_("1-year commitment"), offer.commit_1y_price_per_gpu_hour_usd),
                           (_("3-year commitment"), offer.commit_3y_price_per_gpu_hour_usd)):
        saving = None
        if per_gpu is not None and offer.price_per_gpu_hour_usd:
            saving = round(100 * (1 - per_gpu / offer.price_per_gpu_hour_usd))
        terms.append(TermPrice(label=label, kind=COMMITMENT_KINDS.get(offer.provider.slug, ""),
                               price=convert(per_gpu) if per_gpu is not None else None, saving=saving))
    return terms


# --- retirement -------------------------------------------------------------------------------------------------

RETIREMENTS_FILE = Path(__file__).resolve().parent / "data" / "retirements.toml"


@dataclass(frozen=True, slots=True)
class Retirement:
    """The day a provider retires (retired) a machine type, with the page that says so."""

    provider: str
    series: str
    date: date
    source_url: str
    verified_on: date
    note: str

    def retired(self, today: date) -> bool:
        """Retired once its day has come; until then it is retiring (live, carrying the date)."""
        return self.date <= today


@cache
def retirements() -> dict[tuple[str, str], Retirement]:
    """(provider slug, instance type) -> its retirement, from providers/data/retirements.toml; raises
    DatingFileError on a malformed entry."""
    with RETIREMENTS_FILE.open("rb") as handle:
        data = tomllib.load(handle)
    found = {}
    for number, entry in enumerate(data.get("retirement") or [], start=1):
        where = f"{RETIREMENTS_FILE.name} entry {number}"
        try:
            retirement = Retirement(entry["provider"], entry["series"], entry["date"], entry["source_url"],
                                    entry["verified_on"], entry.get("note", ""))
            sizes = list(entry["sizes"])
        except (KeyError, TypeError) as exc:
            raise DatingFileError(f"{where}: missing or malformed {exc}") from exc
        if not isinstance(retirement.date, date) or not isinstance(retirement.verified_on, date) \
                or not retirement.source_url.startswith("https://") or not sizes:
            raise DatingFileError(f"{where}: needs a date, verified_on, an https source_url and sizes")
        for size in sizes:
            if (retirement.provider, size) in found:
                raise DatingFileError(f"{where}: {size} is listed twice")
            found[retirement.provider, size] = retirement
    return found


def retirement_of(provider: str, instance_type: str) -> Retirement | None:
    return retirements().get((provider, instance_type))


def retires_on(provider: str, instance_type: str) -> str | None:
    """The retirement day of a machine type as an ISO date (the API's `retires_on`), or None."""
    retirement = retirement_of(provider, instance_type)
    return None if retirement is None else retirement.date.isoformat()


def is_retired(provider: str, instance_type: str, today: date) -> bool:
    retirement = retirement_of(provider, instance_type)
    return retirement is not None and retirement.retired(today)


# --- one price per machine --------------------------------------------------------------------------------------

# A machine is one provider's instance type in one region (its on-demand and spot prices are columns of the same
# row). When two sources price it, one is live and the other is kept (with its history) as "another source":
# 1. a candidate dated more than FRESHER_AFTER_DAYS before the other, or undated while the other is dated, loses;
# 2. then the provider's own API or price list wins over its web page (our curated tables transcribe those) over
#    third-party catalogs;
# 3. then the newer date; 4. else the one already live stays (no flapping between equal candidates).
FRESHER_AFTER_DAYS = 90
KIND_RANK = {"api": 3, "curated": 2, "catalog": 1}
KIND_WORDS = {"api": "the provider's own API or price list", "curated": "the provider's web page (curated)",
              "catalog": "a third-party catalog"}


@dataclass(frozen=True, slots=True)
class Candidate:
    """One source's price for a machine: the source, its kind, and the date its price held (a live read's time
    when the answer states none; None when undated)."""

    source: str
    kind: str
    as_of: datetime | None


def preferred(held: Candidate, incoming: Candidate) -> tuple[Candidate, str]:
    """Which of two candidates for one machine is its live price, and why the other is not (in words for the
    offer page and the run's notes)."""
    def beats(winner: Candidate, loser: Candidate, why: str) -> tuple[Candidate, str]:
        return winner, f"{loser.source}'s price is not live: {why} ({winner.source})"

    if held.as_of is not None and incoming.as_of is None:
        return beats(held, incoming, "undated, while another source dates its price")
    if incoming.as_of is not None and held.as_of is None:
        return beats(incoming, held, "undated, while another source dates its price")
    if held.as_of is not None and incoming.as_of is not None:
        gap = timedelta(days=FRESHER_AFTER_DAYS)
        if held.as_of + gap < incoming.as_of:
            return beats(incoming, held, f"dated more than {FRESHER_AFTER_DAYS} days before a fresher price")
        if incoming.as_of + gap < held.as_of:
            return beats(held, incoming, f"dated more than {FRESHER_AFTER_DAYS} days before a fresher price")
    rank_held, rank_incoming = KIND_RANK.get(held.kind, 0), KIND_RANK.get(incoming.kind, 0)
    if rank_incoming != rank_held:
        winner, loser = (incoming, held) if rank_incoming > rank_held else (held, incoming)
        return beats(winner, loser, f"{KIND_WORDS.get(winner.kind, winner.kind)} comes first")
    if held.as_of is not None and incoming.as_of is not None and incoming.as_of > held.as_of:
        return beats(incoming, held, "an older date of the same kind of source")
    return beats(held, incoming, "the same kind of source and no newer date; the live one stays")


# --- memory as sold ---------------------------------------------------------------------------------------------

# A reported memory this close below the catalog's figure is the same GPU seen through its driver (GiB, reserved
# memory): AWS reports 22.4 for the A10G and L4 that AWS and NVIDIA sell as 24 GB.
USABLE_SHARE = Decimal("0.9")


def memory_as_sold(reported: Decimal | None, spec, fraction: Decimal | None,
                   variant_unknown: bool = False) -> tuple[Decimal | None, Decimal | None]:
    """(memory per GPU as sold, usable memory as reported where it is below that) for a row whose GPU the catalog
    resolved to `spec` (a GpuSpec with memory_gb, or None). A slice of a GPU (`fraction`) is sold with that share of
    the memory. Reported memory above the catalog's, or more than 10% below it, is kept as it is (it is not the
    driver's view of the same card), and so is any row of an unknown GPU or of a catalog entry that stands for
    variants of different memory (`variant_unknown`: a bare "A100")."""
    if reported is None or spec is None or variant_unknown:
        return reported, None
    sold = Decimal(str(spec.memory_gb)) * (fraction or 1)
    if sold * USABLE_SHARE <= reported < sold:
        return sold.quantize(Decimal("0.1")), reported
    return reported, None


# --- price guard ------------------------------------------------------------------------------------------------

# A price that moves more than MAX_MOVE times (up or down) against the stored price of the same machine, or that is
# below its GPU family's floor for the term (providers/data/price_floors.toml), is held: not published, listed on the
# sources page, and published only when a later run states the same price again (providers/ingest.py keeps the
# holds). A slip of a decimal point or a unit (per month read as per hour, cents as dollars) is a move past MAX_MOVE;
# real moves are far inside it: the largest between two of the 34 bundled CoreWeave page scrapes (2026-03..08) is
# x1.2 (RTX PRO 6000 spot, 9.24 -> 11.09), and Lambda's 2026 H100 change was x1.13 (3.78 -> 4.29).
MAX_MOVE = 5
FLOORS_FILE = Path(__file__).resolve().parent / "data" / "price_floors.toml"


@dataclass(frozen=True, slots=True)
class Floor:
    """USD per whole-GPU-equivalent hour below which a price is held, per term."""

    on_demand: Decimal
    spot: Decimal


@cache
def floors() -> tuple[Floor, dict[str, Floor]]:
    """(the default floor, GPU family -> its floor) from providers/data/price_floors.toml; raises DatingFileError on a
    malformed entry."""
    with FLOORS_FILE.open("rb") as handle:
        data = tomllib.load(handle)

    def floor(entry, where: str) -> Floor:
        try:
            found = Floor(Decimal(str(entry["on_demand"])), Decimal(str(entry["spot"])))
        except (KeyError, TypeError, ArithmeticError) as exc:
            raise DatingFileError(f"{FLOORS_FILE.name} {where}: needs on_demand and spot numbers ({exc})") from exc
        if not (0 < found.spot <= found.on_demand):
            raise DatingFileError(f"{FLOORS_FILE.name} {where}: needs 0 < spot <= on_demand")
        return found

    return floor(data.get("default", {}), "[default]"), {
        family: floor(entry, f"family {family!r}") for family, entry in (data.get("families") or {}).items()}


def floor_of(family: str | None) -> Floor:
    default, by_family = floors()
    return by_family.get(family or "", default)


def held_because(*, family: str | None, price: Decimal | None, spot: Decimal | None,
                 stored_price: float | None, stored_spot: float | None) -> str | None:
    """Why a row's prices (USD per whole-GPU-equivalent hour, on-demand and spot) are held against the stored ones
    of the same machine and the family's floors, in words for the sources page; None when they may be published."""
    floor = floor_of(family)
    for term, new, old, low in (("on-demand", price, stored_price, floor.on_demand),
                                ("spot", spot, stored_spot, floor.spot)):
        if new is None:
            continue
        if new < low:
            return (f"{term} ${new.normalize():f} per GPU-hour is below the floor of ${low:f} for "
                    f"{family or 'a GPU without a family floor'}")
        if old is not None and old > 0:
            ratio = float(new) / old
            if ratio > MAX_MOVE or ratio < 1 / MAX_MOVE:
                return (f"{term} ${new.normalize():f} per GPU-hour is {ratio:.3g} times the published "
                        f"${old:.5g} (more than {MAX_MOVE}x up or down)")
    return None


# --- region basis -----------------------------------------------------------------------------------------------

REGION_BASIS_FILE = Path(__file__).resolve().parent / "data" / "region_basis.toml"


@cache
def regions_confirmed_by() -> dict[str, str]:
    """Source slug -> why its regions are the provider's word, for the sources that are not the provider's own API
    (providers/data/region_basis.toml); raises DatingFileError on a malformed entry."""
    with REGION_BASIS_FILE.open("rb") as handle:
        data = tomllib.load(handle)
    found = {}
    for slug, entry in (data.get("confirmed") or {}).items():
        why, url = entry.get("why"), entry.get("source_url")
        if not isinstance(why, str) or not why or not isinstance(url, str) or not url.startswith("https://"):
            raise DatingFileError(f"{REGION_BASIS_FILE.name} [confirmed.{slug}]: needs why and an https source_url")
        found[slug] = why
    return found


def regions_confirmed(slug: str, kind: str) -> bool:
    """Whether a source's regions are the provider's word (its own API, or a source region_basis.toml names); else
    they are a catalog's copy."""
    return kind == "api" or slug in regions_confirmed_by()
