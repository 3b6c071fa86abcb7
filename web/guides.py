"""Our guides (prose per language, English as fallback) and which guide section explains each capability
question and filter: the pages link every question to its explanation."""

from __future__ import annotations

import logging

from django.template.loader import select_template
from django.urls import reverse
from django.utils.translation import gettext_lazy as _

from providers.filters import OfferFilterSet

logger = logging.getLogger(__name__)


# --- the guides ------------------------------------------------------------------------------------------------------

GUIDES = {
    "kubernetes-support": _("What “Kubernetes support” means when you rent GPUs"),
    "gpu-sharing": _("Sharing a GPU: MIG, MPS and time-slicing"),
    "before-you-commit": _("What to check before you commit"),
    "when-not-kubernetes": _("When Kubernetes is not worth it"),
}
# Every capability question and capability filter links to the guide section that explains it.
CAPABILITY_GUIDES = {
    "offering": ("kubernetes-support", "managed-vs-byo"),
    "control_plane_fee": ("kubernetes-support", "control-plane-fee"),
    "gpu_operator": ("before-you-commit", "drivers"),
    "mig": ("gpu-sharing", "mig"),
    "mps": ("gpu-sharing", "mps"),
    "time_slicing": ("gpu-sharing", "time-slicing"),
    "vendor_sharing": ("gpu-sharing", "vendor-sharing"),
    "infiniband": ("before-you-commit", "interconnect"),
    "roce": ("before-you-commit", "interconnect"),
    "efa": ("before-you-commit", "interconnect"),
    "gpudirect_tcpx": ("before-you-commit", "interconnect"),
    "node_autoscaling": ("before-you-commit", "idle-nodes"),
    "scale_to_zero": ("before-you-commit", "idle-nodes"),
    "spot_nodes": ("before-you-commit", "spot"),
    "rwx_storage": ("before-you-commit", "storage"),
    "gang_scheduling": ("before-you-commit", "gang-scheduling"),
    "nvidia": ("before-you-commit", "drivers"),
    "amd": ("before-you-commit", "drivers"),
    "intel": ("before-you-commit", "drivers"),
    "other_accelerators": ("before-you-commit", "drivers"),
}
FILTER_GUIDES = {
    **{key: CAPABILITY_GUIDES[key] for key in CAPABILITY_GUIDES if key in OfferFilterSet.base_filters},
    "control_plane_fee_max": CAPABILITY_GUIDES["control_plane_fee"],
    "rdma": ("before-you-commit", "interconnect"),
    "documented_only": ("kubernetes-support", "how-we-source"),
}


def guide_url(slug: str, anchor: str) -> str:
    return f"{reverse('guide-detail', args=[slug])}#{anchor}"



def guide_template(slug: str, language: str | None) -> str:
    """Our guides are written per language (prose, not UI strings); English is the fallback."""
    candidates = [f"guides/{(language or 'en').lower()}/{slug}.html", f"guides/en/{slug}.html"]
    return select_template(candidates).template.name

