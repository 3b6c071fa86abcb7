"""The "N offers are hidden because an answer is unknown — show them" notice: one piece every page that filters
offers reuses (the offers page today; price-region, node-software and advisor pages later). It reads
coverage.offers_left_out_for_unknown and renders templates/_unknown_notice.html.

Plain presentation: the counting is the selector's, the parameter (`unknown=include`) the FilterSet's."""

from __future__ import annotations

from django.http import QueryDict
from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext_lazy as _

from providers.coverage import LeftOutForUnknown

# "whether they <phrase> is unknown", per filter (providers.filters.unknown.UNKNOWABLE_FILTERS).
QUESTION_PHRASES = {
    "offering": _("can be nodes of the provider's managed Kubernetes or of your own cluster"),
    "mig": _("get MIG"), "mps": _("get MPS"), "time_slicing": _("get time-slicing"),
    "vendor_sharing": _("get the vendor's GPU sharing"), "rdma": _("have the fabric between nodes you asked for"),
    "gpu_operator": _("get the GPU Operator as you asked"), "node_autoscaling": _("get node autoscaling"),
    "scale_to_zero": _("can scale to zero"), "spot_nodes": _("can be spot GPU nodes"),
    "rwx_storage": _("get shared RWX storage"), "gang_scheduling": _("get gang / queue scheduling"),
    "control_plane_fee_max": _("charge no more than your control-plane fee (the fee or its amount is not known)"),
    "form_factor": _("have the form factor you asked for"),
    "gpu_memory_min": _("have the memory per GPU you asked for"),
    # A machine sold on request: no on-demand price is published to compare with the ceiling (a spot price may be).
    "price_per_gpu_hour_max": _("cost no more than your price per GPU-hour (no on-demand price is published)"),
    "price_hour_max": _("cost no more than your price per instance-hour (no on-demand price is published)"),
    # AWS: the Spot Instance Advisor states how much spot saves, not the price.
    "spot": _("have a spot price (spot is sold, but only its savings are published)"),
    "available": _("are in stock as you asked (no stock check has reported them)"),
    "in_stock_7d_min": _("were in stock as often as you asked over 7 days (never checked)"),
    "seen_within_hours": _("have a price dated within the hours you asked for (the source states no date)"),
    "cuda": _("run the CUDA version you asked for on the default node image"),
    "k8s_version": _("offer the Kubernetes version you asked for"),
    "dra": _("give Dynamic Resource Allocation as you asked"),
    "stack": _("support the training stacks you asked for"),
    "country": _("are sold in the country you asked for (only a third-party catalog lists them there)"),
    "continent": _("are sold on the continent you asked for (only a third-party catalog lists them there)"),
    "region": _("are sold in the region you asked for (only a third-party catalog lists them there)"),
}
MAX_NAMED_PROVIDERS = 4


def _listed(items: list[str]) -> str:
    if len(items) < 2:
        return "".join(items)
    return gettext("%(first)s and %(last)s") % {"first": gettext(", ").join(items[:-1]), "last": items[-1]}


def unknown_notice(left_out: LeftOutForUnknown, params: QueryDict, path: str) -> dict | None:
    """The notice's text and its "show them" link (the same query with unknown=include), or None when nothing was
    left out for an unknown answer."""
    if not left_out.total:
        return None
    names = [name for _slug, name, _count in left_out.by_provider]
    if len(names) > MAX_NAMED_PROVIDERS:
        rest = len(names) - MAX_NAMED_PROVIDERS + 1
        names = [*names[:MAX_NAMED_PROVIDERS - 1],
                 ngettext("%(count)s other provider", "%(count)s other providers", rest) % {"count": rest}]
    questions = [str(QUESTION_PHRASES.get(question, question)) for question in left_out.questions]
    query = params.copy()
    query["unknown"] = "include"
    query.pop("page", None)
    values = {"count": f"{left_out.total:,}", "providers": _listed(names), "question": gettext(" or ").join(questions)}
    if left_out.exact:
        text = ngettext(
            "%(count)s offer from %(providers)s is hidden because whether they %(question)s is unknown",
            "%(count)s offers from %(providers)s are hidden because whether they %(question)s is unknown",
            left_out.total) % values
    else:  # counted up to a limit: the providers named are those of the offers counted
        text = gettext("More than %(count)s offers, among them from %(providers)s, are hidden because whether they "
                       "%(question)s is unknown") % values
    return {"text": text, "show_url": f"{path}?{query.urlencode()}", "by_provider": left_out.by_provider}

