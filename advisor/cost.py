"""What an offer costs a month on Kubernetes, and renting against owning.

GPU nodes x hours x price (spot only where tolerated and usable), plus the control-plane fee for one cluster all
month, plus the nodes that stay up for the idle hours when a pool cannot scale to zero. Nothing is invented: a fee we
do not know is left out of the total and the cost is flagged incomplete; a scale-to-zero answer we do not know is
costed as "no" and flagged.

Pure functions over the plain data in `advisor.types`; the ECB rates convert fees in other currencies.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

from django.utils.translation import get_language
from django.utils.translation import gettext_lazy as _

from providers.capabilities import UNKNOWN
from scrapers.normalize import to_usd

from . import fees
from .requirements import cell_or_unknown
from .types import HOURS_PER_MONTH, BreakEven, Cell, Cost, Note, OfferData, WorkloadSpec

CENT = Decimal("0.01")


def monthly_hours(spec: WorkloadSpec) -> Decimal:
    """Hours the GPU nodes run a month: as given, else the utilisation of 730 hours, else all month."""
    if spec.hours_per_month is not None:
        return spec.hours_per_month
    if spec.utilisation_percent is not None:
        return HOURS_PER_MONTH * spec.utilisation_percent / 100
    return HOURS_PER_MONTH


def _tier_price(tier: fees.Tier, language: str) -> str:
    name, note = tier.shown(language)
    usd = tier.monthly_usd(HOURS_PER_MONTH)
    if usd is None:
        return f"{name}, {note}"
    return _("%(tier)s, USD %(fee)s a month") % {"tier": name, "fee": usd.quantize(CENT)}


def control_plane_fee(cells: dict[str, Cell], per_eur: dict[str, Decimal],
                      provider_slug: str) -> tuple[Decimal | None, Note | None]:
    """USD per month for one cluster (730 cluster-hours), or None with a flag when it is not known. A managed
    service in the sourced tier table (advisor.fees) costs its cheapest priced tier, named in a flag with the
    others; any other provider its control_plane_fee capability."""
    offering = cell_or_unknown(cells, "offering")
    if offering.value == "byo":
        return Decimal(0), Note("self_managed_control_plane",
                                _("You run the control plane yourself; the machines it needs are not costed."),
                                source_url=offering.source_url)
    tiered = fees.cheapest(provider_slug, HOURS_PER_MONTH) if offering.value == "managed" else None
    if tiered is not None:
        tier, usd, others = tiered
        language = get_language() or ""
        name, note = tier.shown(language)
        return usd.quantize(CENT), Note(
            "fee_tier", _("Control plane: %(service)s, %(tier)s, USD %(fee)s a month (%(note)s), the cheapest it "
                          "offers. Other tiers: %(others)s."),
            {"service": tier.service, "tier": name, "fee": usd.quantize(CENT), "note": note,
             "others": "; ".join(_tier_price(other, language) for other in others) or "-"}, tier.source_url)
    fee = cell_or_unknown(cells, "control_plane_fee")
    if fee.value == "free" or (fee.value == "n/a" and offering.value == "managed"):
        return Decimal(0), None
    if fee.value == "paid" and fee.amount is not None:
        usd = to_usd(fee.amount, fee.currency or "USD", per_eur)
        if usd is None:
            return None, Note("fee_no_rate", _("No exchange rate for the control-plane fee in %(currency)s."),
                              {"currency": fee.currency}, fee.source_url)
        return (usd * HOURS_PER_MONTH).quantize(CENT), None
    return None, Note("fee_unknown", _("Control-plane fee unknown: not included in the total."),
                      source_url=fee.source_url)


def monthly_cost(*, offer: OfferData, instances: int, hours: Decimal, kubernetes: bool, spot_ok: bool,
                 cells: dict[str, Cell], per_eur: dict[str, Decimal], min_nodes_kept: int) -> Cost:
    """GPU nodes x hours x price (spot where tolerated and usable), plus, on Kubernetes, the control-plane fee and
    the nodes that stay up for the rest of the month when the pool cannot scale to zero.

    `offer.price_hour_usd` must be set (offers without a price are not costed). A spot price is used only when the
    user tolerates interruptions, the offer has one and (on Kubernetes) the provider's `spot_nodes` cell is "yes";
    scale-to-zero "no", "n/a" or unknown keeps `min_nodes_kept` nodes up while idle, and unknown is flagged.
    """
    assert offer.price_hour_usd is not None
    flags: list[Note] = []
    price, price_kind = offer.price_hour_usd, "on_demand"
    if spot_ok and offer.spot_price_hour_usd is not None:
        spot_cell = cell_or_unknown(cells, "spot_nodes")
        if not kubernetes or spot_cell.value == "yes":
            price, price_kind = offer.spot_price_hour_usd, "spot"
        else:
            flags.append(Note("spot_not_usable",
                              _("A spot price exists, but spot GPU nodes in Kubernetes are %(value)s here: costed at "
                                "the on-demand price."), {"value": spot_cell.value}, spot_cell.source_url))
    gpu_nodes = instances * hours * price

    fee: Decimal | None = Decimal(0)
    idle_nodes, idle_hours = 0, Decimal(0)
    if kubernetes:
        fee, fee_flag = control_plane_fee(cells, per_eur, offer.provider_slug)
        if fee_flag:
            flags.append(fee_flag)
        idle_hours = max(Decimal(0), HOURS_PER_MONTH - hours)
        scale_cell = cell_or_unknown(cells, "scale_to_zero")
        if idle_hours and scale_cell.value != "yes":
            idle_nodes = min(min_nodes_kept, instances)
            if scale_cell.value == UNKNOWN:
                flags.append(Note("scale_to_zero_unknown",
                                  _("Scale to zero unknown: %(nodes)s node(s) costed as staying up when idle."),
                                  {"nodes": idle_nodes}))
            elif idle_nodes:
                flags.append(Note("no_scale_to_zero",
                                  _("No scale to zero: %(nodes)s node(s) stay up when idle."),
                                  {"nodes": idle_nodes}, scale_cell.source_url))
    idle = idle_nodes * idle_hours * price
    total = gpu_nodes + idle + (fee or 0)
    return Cost(
        hours=hours, instances=instances, price_kind=price_kind, price_hour_usd=price,
        gpu_nodes_usd=gpu_nodes.quantize(CENT), control_plane_usd=fee, idle_nodes=idle_nodes,
        idle_hours=idle_hours, idle_usd=idle.quantize(CENT), total_usd=total.quantize(CENT),
        complete=fee is not None, flags=tuple(flags),
    )


def break_even(*, purchase_usd: Decimal, own_monthly_usd: Decimal, rent_monthly_usd: Decimal | None) -> BreakEven:
    """Months after which buying (price + monthly power and operations) costs less than renting the best option."""
    if rent_monthly_usd is None:
        return BreakEven(purchase_usd, own_monthly_usd, None, None,
                         Note("no_rental", _("No ranked option with a complete monthly cost to compare with.")))
    saving = rent_monthly_usd - own_monthly_usd
    if saving <= 0:
        return BreakEven(purchase_usd, own_monthly_usd, rent_monthly_usd, None,
                         Note("never", _("Running your own server costs at least as much per month as renting: "
                                         "buying never breaks even.")))
    months = (purchase_usd / saving).quantize(Decimal("0.1"), ROUND_HALF_UP)
    return BreakEven(purchase_usd, own_monthly_usd, rent_monthly_usd, months,
                     Note("months", _("Buying breaks even after %(months)s months against the best rental option."),
                          {"months": months}))
