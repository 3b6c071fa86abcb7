"""The Kubernetes questions we answer for every provider, their allowed answers and their grouping.

One definition used by the curated-data loader (validation), the filters (what a query may ask), the API, the
pages and the emails (labels, the wording of answers, order). Plain Python: no database access.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from django.utils.translation import get_language
from django.utils.translation import gettext_lazy as _

from .kubernetes import QUESTIONS as OFFER_QUESTIONS

UNKNOWN = "unknown"
NOT_APPLICABLE = "n/a"
YES_NO = ("yes", "no", NOT_APPLICABLE)
# "partial" is what a CNCF AI conformance self-assessment's "Partially Implemented" becomes: kept apart from yes.
PARTIAL = "partial"
YES_PARTIAL_NO = ("yes", PARTIAL, "no", NOT_APPLICABLE)
# A managed control plane that costs money where the provider does not state the amount.
PAID_UNSTATED = "paid_unstated"


@dataclass(frozen=True)
class Question:
    key: str
    label: str
    group: str
    values: tuple[str, ...]
    help: str = ""


CAPABILITIES: tuple[Question, ...] = (
    Question("offering", _("Kubernetes offering"), "control_plane", ("managed", "byo", "none"),
             _("Managed control plane with GPU node pools, or raw GPU machines you join to your own cluster.")),
    Question("control_plane_fee", _("Control-plane fee"), "control_plane",
             ("free", "paid", PAID_UNSTATED, NOT_APPLICABLE),
             _("What the managed control plane costs per cluster-hour.")),
    Question("cncf_ai_conformance", _("CNCF AI conformant"), "control_plane", YES_NO,
             _("Certified Kubernetes AI Conformant (CNCF), and for which Kubernetes versions.")),
    Question("gpu_operator", _("GPU driver / Operator"), "gpu_stack",
             ("preinstalled", "add_on", "user_installs", NOT_APPLICABLE),
             _("Who installs the NVIDIA driver, device plugin or GPU Operator on GPU nodes.")),
    Question("dra", _("Dynamic Resource Allocation"), "gpu_stack", YES_PARTIAL_NO,
             _("Kubernetes DRA APIs for requesting accelerators beyond simple counts.")),
    Question("accelerator_metrics", _("Accelerator metrics"), "gpu_stack", YES_PARTIAL_NO,
             _("Per-GPU utilisation and memory metrics on a machine-readable endpoint (DCGM exporter or managed).")),
    Question("mig", _("MIG"), "sharing", YES_NO, _("Multi-Instance GPU partitions usable from Kubernetes.")),
    Question("mps", _("MPS"), "sharing", YES_NO, _("NVIDIA Multi-Process Service sharing.")),
    Question("time_slicing", _("Time-slicing"), "sharing", YES_NO, _("Several pods take turns on one GPU.")),
    Question("vendor_sharing", _("Vendor GPU sharing"), "sharing", YES_NO,
             _("The provider's own sharing scheme, such as Alibaba cGPU or Tencent qGPU.")),
    Question("infiniband", _("InfiniBand"), "interconnect", YES_NO),
    Question("roce", _("RoCE"), "interconnect", YES_NO),
    Question("efa", _("EFA"), "interconnect", YES_NO),
    Question("gpudirect_tcpx", _("GPUDirect-TCPX"), "interconnect", YES_NO),
    Question("node_autoscaling", _("Node autoscaling"), "scaling", YES_PARTIAL_NO),
    Question("scale_to_zero", _("Scale to zero"), "scaling", YES_NO,
             _("A GPU node pool can shrink to zero nodes, so idle GPUs cost nothing.")),
    Question("spot_nodes", _("Spot GPU nodes"), "scaling", YES_NO),
    Question("rwx_storage", _("Shared RWX storage"), "storage", YES_NO,
             _("ReadWriteMany volumes through a CSI driver, for datasets and checkpoints shared by many pods.")),
    Question("gang_scheduling", _("Gang / queue scheduling"), "scheduling", YES_PARTIAL_NO,
             _("All-or-nothing scheduling of distributed jobs (Kueue, Volcano, ...).")),
    Question("nvidia", _("NVIDIA GPUs"), "vendors", ("yes", "no")),
    Question("amd", _("AMD GPUs"), "vendors", ("yes", "no")),
    Question("intel", _("Intel accelerators"), "vendors", ("yes", "no")),
    Question("other_accelerators", _("Other accelerators"), "vendors", ("yes", "no")),
)

QUESTIONS: dict[str, Question] = {question.key: question for question in CAPABILITIES}

GROUPS = {
    "control_plane": _("Control plane"),
    "gpu_stack": _("GPU software"),
    "sharing": _("GPU sharing"),
    "interconnect": _("RDMA fabric"),
    "scaling": _("Scaling"),
    "storage": _("Storage"),
    "scheduling": _("Scheduling"),
    "vendors": _("Accelerators"),
}

RDMA_FABRICS = ("infiniband", "roce", "efa", "gpudirect_tcpx")

# The site's one wording of each answer: the long labels go into sentences, tooltips, filters and emails...
VALUE_LABELS = {
    "yes": _("yes"), "no": _("no"), NOT_APPLICABLE: _("not applicable"), UNKNOWN: _("unknown"),
    "managed": _("managed control plane"), "byo": _("bring your own cluster"), "none": _("no Kubernetes"),
    "free": _("free"), "paid": _("paid"), "preinstalled": _("preinstalled"), "add_on": _("add-on"),
    "user_installs": _("you install it"), PARTIAL: _("partially"), PAID_UNSTATED: _("paid, amount not stated"),
}
# ... and the short answers into capability cells of tables.
SHORT_VALUES = {
    "yes": _("yes"), "no": _("no"), NOT_APPLICABLE: _("n/a"), "managed": _("managed"), "byo": _("BYO"),
    "none": _("none"), "free": _("free"), "paid": _("paid"), "preinstalled": _("preinstalled"),
    "add_on": _("add-on"), "user_installs": _("you install"), PARTIAL: _("partial"),
    PAID_UNSTATED: _("paid (amount?)"),
}


# --- each offer's own answers (providers.kubernetes) in the same words: pages, emails and the advisor use these ----

# The few answers an offers-table row and a digest line show; every answer is on the offer's page.
OFFER_SUMMARY_QUESTIONS = ("managed_node", "mig", "rdma")


def offer_question_label(question: str) -> str:
    """A per-offer question (providers.kubernetes.QUESTIONS) in the active language."""
    return _offer_words(get_language())[0].get(question, question)


def offer_state_text(state: str) -> str:
    """A per-offer answer state ("yes", "not_on_this_machine", ...) in the active language."""
    return _offer_words(get_language())[1].get(state, state)


@lru_cache(maxsize=16)
def _offer_words(language: str) -> tuple[dict[str, str], dict[str, str]]:
    """The questions' and states' words in `language`, which must be the active one: read once per language, not
    per row (translating lazy labels for 13 answers of 50 rows was a quarter of the offers page's time)."""
    labels = {}
    for question in OFFER_QUESTIONS:
        if question == "managed_node":
            labels[question] = str(VALUE_LABELS["managed"])
        elif question == "byo":
            labels[question] = str(VALUE_LABELS["byo"])
        elif question == "rdma":
            labels[question] = str(_("RDMA fabric"))
        else:
            labels[question] = str(QUESTIONS[question].label)
    states = {state: str(VALUE_LABELS[state]) for state in ("yes", "no", NOT_APPLICABLE, UNKNOWN)}
    states["not_on_this_machine"] = str(_("offered, but not on this machine"))
    return labels, states


def allowed_values(key: str) -> tuple[str, ...]:
    return (*QUESTIONS[key].values, UNKNOWN)


# --- research logs: a curated detail keeps the record of each search round; a cell shows only the reason ----------

# "Round 4 (2026-12-02): ...", "Round 3 lead only (2026-12-02): ..." open a log entry; "(Round 4, 2026-12-02)" is an
# aside about when a source was found.
ROUND_ENTRY = re.compile(r"\s*\bRound (\d+)( lead only)?(?: \((\d{4}-\d{2}-\d{2})\))?:?\s+")
ROUND_ASIDE = re.compile(r"\s*\(Round \d+, \d{4}-\d{2}-\d{2}\)")
NOT_ESTABLISHED = re.compile(r"\s*\bnot established\.", re.IGNORECASE)
# "Not established: no page ..." opens many reasons for an unknown answer; a reader is told "Unknown: ...".
NOT_ESTABLISHED_LEAD = re.compile(r"^Not established\b")


@dataclass(frozen=True)
class ResearchEntry:
    round: int
    lead_only: bool
    day: str  # "" where the entry names no day
    text: str


def research_split(detail: str) -> tuple[str, list[ResearchEntry]]:
    """A curated English detail as (the reason a cell shows, the research log behind it). The reason is the text
    before the first "Round N (day):" entry, without "(Round N, day)" asides or a bare "Not established." (the
    answer "unknown" says that); where the detail is all log, the newest entry is the reason. The log is listed on
    the sources page. Chinese details were written without the log."""
    parts = ROUND_ENTRY.split(detail or "")
    reason = parts[0]
    entries = [ResearchEntry(int(number), bool(lead), day or "", text.strip())
               for number, lead, day, text in zip(parts[1::4], parts[2::4], parts[3::4], parts[4::4], strict=True)]
    reason = NOT_ESTABLISHED.sub("", ROUND_ASIDE.sub("", reason)).strip()
    if not reason and entries:
        reason = NOT_ESTABLISHED.sub("", entries[-1].text).strip()
    return NOT_ESTABLISHED_LEAD.sub("Unknown", reason), entries

