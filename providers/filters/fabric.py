"""The fabric-between-nodes filter's choices (`rdma=`) and what each means on a machine's stored Kubernetes answer
(providers.kubernetes: the fabric kind and its class). OfferFilterSet (providers.filters) declares the filter and
applies these terms; the `unknown` parameter (providers.filters.unknown) lets through the terms below that leave a
machine's fit unknown."""

from __future__ import annotations

from django.utils.translation import gettext_lazy as _

from ..capabilities import UNKNOWN
from ..kubernetes import PLAIN_CLASS, RDMA_CLASS, TCP_CLASS, TCP_KINDS

# The fabric between nodes a buyer asks for (classes and kinds: providers.kubernetes.fabric_class). Each choice is
# one term on the machine's stored profile: all of its (column, allowed values) atoms.
RDMA_CHOICES = [
    ("any", _("GPUDirect RDMA between nodes (InfiniBand, RoCE, or EFA with GPUDirect RDMA)")),
    ("multinode", _("multi-node GPU fabric: GPUDirect RDMA or GPU-direct over TCP")),
    ("infiniband", _("InfiniBand only")),
    ("roce", _("RoCE only")),
    ("efa", _("EFA with GPUDirect RDMA")),
    ("tcpx", _("GPU-direct over TCP (GPUDirect-TCPX or -TCPXO)")),
    ("none", _("plain network only (no GPUDirect RDMA, no GPU-direct over TCP)")),
    (UNKNOWN, _("fabric unknown")),
]
RDMA_TERMS = {
    "any": [("fabric_class", [RDMA_CLASS])],
    "multinode": [("fabric_class", [RDMA_CLASS, TCP_CLASS])],
    "infiniband": [("fabric", ["infiniband"])],
    "roce": [("fabric", ["roce"])],
    "efa": [("fabric", ["efa"]), ("fabric_class", [RDMA_CLASS])],
    "tcpx": [("fabric", list(TCP_KINDS))],
    "none": [("fabric_class", [PLAIN_CLASS])],
    UNKNOWN: [("fabric_class", [UNKNOWN])],
}
# The answer that makes an offer's fit to each choice unknown (what `unknown=include` lets through).
RDMA_UNKNOWN_TERMS = {
    "any": [("fabric_class", [UNKNOWN])], "multinode": [("fabric_class", [UNKNOWN])],
    "infiniband": [("fabric", [UNKNOWN])], "roce": [("fabric", [UNKNOWN])], "tcpx": [("fabric", [UNKNOWN])],
    "efa": [("fabric", ["efa", UNKNOWN]), ("fabric_class", [UNKNOWN])], "none": [("fabric_class", [UNKNOWN])],
}
# Choices of earlier releases, read as the closest choice of today's (bookmarked URLs, signed subscribe links; saved
# digest filters are rewritten by digest migration 0002 with the same table); and `yes`/`true`, a buyer's first guess
# for "has RDMA", read as `any` (there is no single "no": plain network only is `none`, GPU-direct over TCP `tcpx`).
RDMA_RENAMED = {"gpudirect_tcpx": "tcpx", "gpudirect_tcpxo": "tcpx", "rdma_unspecified": "any", "yes": "any",
                "true": "any"}
