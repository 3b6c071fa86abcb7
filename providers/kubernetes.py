"""Kubernetes answers per offer: what THIS machine gets, derived from three layers of sourced facts.

1. the provider's capability cells (providers.capabilities: offering, MIG, spot nodes, ...);
2. the instance type's facts (providers/data/instance_types/*.toml, a provider API's node-type list, a catalog's EFA
   count): can it be a node of the provider's managed Kubernetes, can you join it to your own cluster, its GPU-to-GPU
   fabric across nodes (with the EFA interface count), its GPU count, share of a GPU and form factor;
3. the GPU model (MIG profiles, vendor).

Plain Python, no database: `derive()` takes the three layers and returns one `Answer` per question, each with its
state, an English reason and the source URLs it used. The states are kept apart on purpose:

- "yes" / "no": what the sources say about this machine;
- "unknown": a fact the rule needs is missing (never turned into yes or no);
- "n/a": the question does not apply (MPS on an AMD GPU; MIG where the provider has no managed Kubernetes);
- "not_on_this_machine": the provider offers it, but not on this machine (a type that cannot be a managed node, a
  GPU without MIG profiles, a fraction of a GPU, a type without the provider's fabric).

kubernetes_profiles.offer_kubernetes_refresh stores the answers (recomputed whenever a provider cell, an instance
fact or a GPU changes; an ingest derives them for machines new to it, kubernetes_profiles.offer_profiles_for), so
filters read stored states and never run these rules per request.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from fnmatch import fnmatchcase

YES, NO, UNKNOWN, NA, NOT_HERE = "yes", "no", "unknown", "n/a", "not_on_this_machine"
STATES = (YES, NO, UNKNOWN, NA, NOT_HERE)

# Fabric kinds an instance fact may state. "rdma_unspecified" is an RDMA network whose protocol the source does not name
# (OCI cluster networks); "none" needs a source that says the type has no such fabric.
# "infiniband_or_roce": the provider says the fabric depends on the contract or cluster.
FABRICS = ("infiniband", "roce", "efa", "gpudirect_tcpx", "gpudirect_tcpxo", "rdma_unspecified", "infiniband_or_roce")
FABRIC_VALUES = (*FABRICS, "none", UNKNOWN)
FABRIC_LABELS = {"infiniband": "InfiniBand", "roce": "RoCE", "efa": "EFA", "gpudirect_tcpx": "GPUDirect-TCPX",
                 "gpudirect_tcpxo": "GPUDirect-TCPXO",
                 "rdma_unspecified": "RDMA (protocol not stated)",
                 "infiniband_or_roce": "InfiniBand or RoCE, depends on the cluster"}
# The provider capability cell that says the provider has this fabric somewhere.
PROVIDER_FABRIC_CELL = {"infiniband": "infiniband", "roce": "roce", "efa": "efa", "gpudirect_tcpx": "gpudirect_tcpx",
                        "gpudirect_tcpxo": "gpudirect_tcpx"}
# What a buyer can do with a machine's fabric (SCHEMA.md): GPUDirect RDMA between nodes; GPU-direct over TCP
# (multi-node capable, not RDMA); a plain network (any other NIC, including EFA on a type AWS does not list for
# GPUDirect RDMA). "unknown" when the kind is unknown, or EFA without a source for GPUDirect RDMA.
RDMA_CLASS, TCP_CLASS, PLAIN_CLASS = "gpudirect_rdma", "gpudirect_tcp", "plain"
FABRIC_CLASSES = (RDMA_CLASS, TCP_CLASS, PLAIN_CLASS, UNKNOWN)
FABRIC_CLASS_LABELS = {RDMA_CLASS: "GPUDirect RDMA between nodes", TCP_CLASS: "GPU-direct over TCP (not RDMA)",
                       PLAIN_CLASS: "plain network (no GPUDirect RDMA)", UNKNOWN: "unknown"}
RDMA_KINDS = ("infiniband", "roce", "rdma_unspecified", "infiniband_or_roce")
TCP_KINDS = ("gpudirect_tcpx", "gpudirect_tcpxo")


def fabric_class(kind: str | None, gpudirect_rdma: bool | None = None) -> str:
    """The class of a fabric kind (EFA's depends on whether AWS lists the type for GPUDirect RDMA)."""
    if kind in RDMA_KINDS or (kind == "efa" and gpudirect_rdma is True):
        return RDMA_CLASS
    if kind in TCP_KINDS:
        return TCP_CLASS
    if kind == "none" or (kind == "efa" and gpudirect_rdma is False):
        return PLAIN_CLASS
    return UNKNOWN


# The GPU-to-GPU link inside one machine (xgmi: AMD Infinity Fabric).
GPU_LINKS = ("nvswitch", "nvlink", "pcie", "xgmi")

# What an instance fact may state: key -> allowed values (numbers for gpu_count, gpu_share and gpu_memory_gb).
FACT_VALUES: dict[str, tuple[str, ...]] = {
    "managed_node": (YES, NO, UNKNOWN),
    "byo": (YES, NO, UNKNOWN),
    "fabric": FABRIC_VALUES,
    "form_factor": ("sxm", "pcie", "nvl", "oam", "superchip", UNKNOWN),
    "gpu_link": (*GPU_LINKS, UNKNOWN),
    # Whether the provider's MIG reaches this machine where its MIG page names the GPUs it covers: "unknown" for a
    # MIG-capable GPU the page does not name, "no" where it says this machine has none (_mig).
    "mig": (YES, NO, UNKNOWN),
    # Whether the provider's spot / preemptible nodes reach this machine where its page says which machines they
    # cover (Oracle: no bare metal): "no" is "not on this machine" (_managed_feature).
    "spot_nodes": (YES, NO, UNKNOWN),
    "gpu_count": (),
    "gpu_share": (),
    "gpu_memory_gb": (),
}
NUMERIC_FACTS = ("gpu_count", "gpu_share", "gpu_memory_gb")
ORIGIN_RANK = {"provider_api": 0, "curated": 1, "catalog": 2}

# The questions answered for every offer, in the order the API and the pages show them.
QUESTIONS = (
    "managed_node", "byo", "mig", "mps", "time_slicing", "vendor_sharing", "rdma", "gpu_operator",
    "node_autoscaling", "scale_to_zero", "spot_nodes", "rwx_storage", "gang_scheduling",
)
QUESTION_LABELS = {
    "managed_node": "Node of the provider's managed Kubernetes", "byo": "Join to your own cluster",
    "mig": "MIG", "mps": "MPS", "time_slicing": "Time-slicing", "vendor_sharing": "Vendor GPU sharing",
    "rdma": "RDMA fabric", "gpu_operator": "GPU driver / Operator", "node_autoscaling": "Node autoscaling",
    "scale_to_zero": "Scale to zero", "spot_nodes": "Spot GPU nodes", "rwx_storage": "Shared RWX storage",
    "gang_scheduling": "Gang / queue scheduling",
}
# Provider features that reach a machine only when it is a node of the provider's managed Kubernetes.
MANAGED_FEATURES = ("vendor_sharing", "gpu_operator", "node_autoscaling", "scale_to_zero", "spot_nodes",
                    "rwx_storage", "gang_scheduling")
GPU_OPERATOR_YES = ("preinstalled", "add_on")
# Features that exist only as part of a managed Kubernetes service: a machine that cannot be its node has none of
# them, even where we do not know whether the service has them. Not the GPU features (MIG, MPS, time-slicing), the
# driver or shared storage, which a machine outside the service can still have in the user's own cluster.
SERVICE_ONLY = frozenset({"vendor_sharing", "node_autoscaling", "scale_to_zero", "spot_nodes", "gang_scheduling"})


# The reasons are English; derive() under translated(gettext) writes them in that translation's language (the
# services store a Chinese copy beside the English one). `_` marks the sentences for makemessages.
_TRANSLATE: contextvars.ContextVar[Callable[[str], str] | None] = contextvars.ContextVar("translate", default=None)


def _(text: str) -> str:
    translate = _TRANSLATE.get()
    return translate(text) if translate is not None else text


@contextlib.contextmanager
def translated(gettext: Callable[[str], str]):
    """Within it, derive() writes its reasons through `gettext` (Django's, under translation.override)."""
    token = _TRANSLATE.set(gettext)
    try:
        yield
    finally:
        _TRANSLATE.reset(token)


# FABRIC_LABELS' one sentence-like label, marked for makemessages (the rules translate it where they use it).
_("RDMA (protocol not stated)")
_("InfiniBand or RoCE, depends on the cluster")
_("GPUDirect RDMA between nodes")
_("GPU-direct over TCP (not RDMA)")
_("plain network (no GPUDirect RDMA)")


def _detail(fact) -> str:
    return f" {fact.detail}" if fact is not None and fact.detail else ""


@dataclass(frozen=True)
class Cell:
    """A provider capability cell as the rules need it (`detail` in the language the reasons are written in)."""

    value: str
    source_url: str = ""
    confidence: str = ""
    detail: str = ""
    verified_on: date | None = None


@dataclass(frozen=True)
class Fact:
    """One instance-type fact: `pattern` is an exact instance type or an fnmatch pattern (`Standard_NV*as_v4`).
    `number` is the value of a numeric fact (GPU count, share, memory per GPU); a fabric fact may carry its interface
    count, total bandwidth (Gbit/s) and, for EFA, whether AWS lists the type as supporting GPUDirect RDMA."""

    pattern: str
    key: str
    value: str
    number: Decimal | None = None
    detail: str = ""
    source_url: str = ""
    confidence: str = ""
    origin: str = "curated"
    verified_on: date | None = None
    interfaces: int | None = None
    bandwidth_gbps: Decimal | None = None
    gpudirect_rdma: bool | None = None
    detail_zh: str = ""  # the detail in Simplified Chinese, for the Chinese reasons (English when blank)

    def matches(self, instance_type: str) -> bool:
        return self.pattern == instance_type or (_is_pattern(self.pattern) and fnmatchcase(instance_type,
                                                                                             self.pattern))

    def precedence(self) -> tuple:
        """Lower wins: an exact name before a pattern, a longer pattern before a shorter one, then the origin (a
        provider API's answer before ours, ours before a catalog's)."""
        return (_is_pattern(self.pattern), -len(self.pattern), ORIGIN_RANK.get(self.origin, 9))


def _is_pattern(text: str) -> bool:
    return any(char in text for char in "*?[")


@dataclass(frozen=True)
class Gpu:
    name: str
    vendor: str
    mig_profiles: tuple[str, ...] = ()
    mig_source_url: str = ""
    source_url: str = ""


@dataclass
class Answer:
    """One derived answer: `state` (see STATES), an English `reason`, the source URLs used. The rdma answer also
    carries the fabric kind and class, its interface count and total bandwidth (Gbit/s) where a source states them,
    and, for EFA, the interface count again as `efa_interfaces` (the API's older field)."""

    state: str
    reason: str
    sources: list[str] = field(default_factory=list)
    confidence: str = ""  # the weakest of what it rests on: "inferred", "third_party", or "" (documented, or no source)
    verified_on: date | None = None  # the oldest day one of its sources was checked (dated_answers)
    fabric: str | None = None
    efa_interfaces: int | None = None
    fabric_class: str | None = None
    interfaces: int | None = None
    bandwidth_gbps: Decimal | None = None

    @property
    def inferred(self) -> bool:
        return self.confidence == INFERRED

    def as_dict(self) -> dict:
        data = {"answer": self.state, "reason": self.reason, "sources": self.sources}
        if self.fabric is not None or self.efa_interfaces is not None:
            data["fabric"] = self.fabric
            data["efa_interfaces"] = self.efa_interfaces
            data["fabric_class"] = self.fabric_class or UNKNOWN
            data["interfaces"] = self.interfaces
            data["bandwidth_gbps"] = float(self.bandwidth_gbps) if self.bandwidth_gbps is not None else None
        data["inferred"] = self.inferred
        data["confidence"] = answer_confidence(self.confidence, self.sources)
        data["verified_on"] = self.verified_on.isoformat() if self.verified_on else None
        return data


def facts_for(instance_type: str, facts: list[Fact]) -> dict[str, Fact]:
    """The winning fact per key for one instance type (see Fact.precedence)."""
    best: dict[str, Fact] = {}
    for fact in facts:
        if fact.matches(instance_type):
            current = best.get(fact.key)
            if current is None or fact.precedence() < current.precedence():
                best[fact.key] = fact
    return best


def _urls(*items) -> list[str]:
    seen: list[str] = []
    for item in items:
        url = getattr(item, "source_url", "") if item is not None else ""
        if url and url not in seen:
            seen.append(url)
    return seen


# How sure an answer is, weakest last: it is as sure as the least sure cell, fact or answer it rests on.
DOCUMENTED, THIRD_PARTY, INFERRED = "documented", "third_party", "inferred"
_WEAKNESS = {THIRD_PARTY: 1, INFERRED: 2}


def _confidence(*items) -> str:
    """"inferred" when any of `items` is inferred, else "third_party" when any rests on a third party's page, else ""
    (documented). Items are cells, facts or answers; None and items without a confidence count as documented."""
    weakest = ""
    for item in items:
        confidence = getattr(item, "confidence", "") if item is not None else ""
        if _WEAKNESS.get(confidence, 0) > _WEAKNESS.get(weakest, 0):
            weakest = confidence
    return weakest


def answer_confidence(confidence: str, sources) -> str:
    """An answer's confidence as the API and the pages give it: documented, third_party or inferred; blank for an
    answer that cites no source."""
    return confidence or (DOCUMENTED if sources else "")


# A machine's form factor (its sourced "form_factor" fact, Offer.form_factor) as the product names it.
MACHINE_FORM_FACTORS = {"sxm": "SXM", "pcie": "PCIe", "nvl": "NVL"}
NOT_STATED = "(form factor not stated)"


def gpu_on_machine(name: str, form_factor: str) -> str:
    """The catalog GPU name on a machine whose sources state its form factor: the catalog's "not stated" gives way to
    it ("NVIDIA A100 40GB SXM" on a p4d), so nothing says "not stated" beside a sourced answer. English, as stored."""
    if form_factor in MACHINE_FORM_FACTORS and NOT_STATED in name:
        return name.replace(NOT_STATED, MACHINE_FORM_FACTORS[form_factor])
    return name


def derive(*, provider_name: str, instance_type: str, gpu_count: Decimal, cells: dict[str, Cell],
           facts: dict[str, Fact], gpu: Gpu | None) -> dict[str, Answer]:
    """Every question's answer for one machine. `facts` are the winning instance facts for it (facts_for)."""
    form_factor = facts.get("form_factor")
    if gpu is not None and form_factor is not None:
        # the answers name the GPU as this machine has it, not with the catalog's "(form factor not stated)"
        gpu = dataclasses.replace(gpu, name=gpu_on_machine(gpu.name, form_factor.value))
    share = facts.get("gpu_share")
    fraction = share.number if share is not None and share.number is not None else (
        gpu_count if gpu_count is not None and gpu_count < 1 else None)
    answers: dict[str, Answer] = {}
    answers["managed_node"] = _managed_node(provider_name, instance_type, cells, facts)
    answers["byo"] = _byo(provider_name, instance_type, cells, facts)
    node = answers["managed_node"]
    answers["mig"] = _mig(provider_name, instance_type, cells, gpu, node, fraction, share, facts.get("mig"))
    for key, word in (("mps", "MPS"), ("time_slicing", "Time-slicing")):
        answers[key] = _nvidia_sharing(key, word, provider_name, instance_type, cells, gpu, node)
    for key in MANAGED_FEATURES:
        answers[key] = _managed_feature(key, provider_name, instance_type, cells, node, gpu, facts.get(key))
    answers["rdma"] = _rdma(provider_name, instance_type, cells, facts)
    return dated_answers(answers, [*cells.values(), *facts.values()])


def dated_answers(answers: dict[str, Answer], dated) -> dict[str, Answer]:
    """Each answer's `verified_on`: the oldest day one of its sources was checked, over the cells and facts of
    `dated` that cite them (a URL cited with several days counts at its oldest); None when none of its sources is
    dated (a GPU maker's page of the catalog, or no source)."""
    checked: dict[str, date] = {}
    for item in dated:
        if item.source_url and item.verified_on is not None:
            known = checked.get(item.source_url)
            checked[item.source_url] = item.verified_on if known is None else min(known, item.verified_on)
    for answer in answers.values():
        days = [checked[url] for url in answer.sources if url in checked]
        answer.verified_on = min(days) if days else None
    return answers


def _managed_node(provider: str, instance_type: str, cells: dict[str, Cell], facts: dict[str, Fact]) -> Answer:
    offering = cells.get("offering")
    fact = facts.get("managed_node")
    if offering is None or offering.value == UNKNOWN:
        return Answer(UNKNOWN, _("We do not know whether {provider} offers a managed Kubernetes.").format(
            provider=provider))
    if offering.value != "managed":
        if offering.value == "byo":
            text = _("{provider} has no managed Kubernetes of its own (it offers bring-your-own-cluster machines).")
        else:
            text = _("{provider} has no managed Kubernetes of its own (it offers no Kubernetes).")
        return Answer(NO, text.format(provider=provider), _urls(offering), _confidence(offering))
    if fact is None or fact.value == UNKNOWN:
        return Answer(UNKNOWN, _("{provider} has a managed Kubernetes, but we have no source saying whether "
                                 "{instance_type} can be one of its nodes.").format(
            provider=provider, instance_type=instance_type), _urls(offering))
    if fact.value == YES:
        text = _("{instance_type} can be a node of {provider}'s managed Kubernetes.")
        return Answer(YES, text.format(instance_type=instance_type, provider=provider) + _detail(fact),
                      _urls(fact, offering), _confidence(fact, offering))
    text = _("{provider} has a managed Kubernetes, but {instance_type} cannot be one of its nodes.")
    return Answer(NOT_HERE, text.format(provider=provider, instance_type=instance_type) + _detail(fact),
                  _urls(fact, offering), _confidence(fact, offering))


def _byo(provider: str, instance_type: str, cells: dict[str, Cell], facts: dict[str, Fact]) -> Answer:
    fact = facts.get("byo")
    if fact is not None and fact.value != UNKNOWN:
        if fact.value == YES:
            text = _("{instance_type} is a machine you can join to your own cluster.")
            return Answer(YES, text.format(instance_type=instance_type) + _detail(fact), _urls(fact),
                          _confidence(fact))
        text = _("{instance_type} cannot be joined to your own cluster.")
        return Answer(NO, text.format(instance_type=instance_type) + _detail(fact), _urls(fact), _confidence(fact))
    offering = cells.get("offering")
    if offering is not None and offering.value == "byo":
        return Answer(YES, _("{provider} rents raw GPU machines you join to your own cluster.").format(
            provider=provider), _urls(offering), _confidence(offering))
    if offering is not None and offering.value == "none":
        return Answer(NO, _("{provider} offers no Kubernetes and no machine to join to a cluster.").format(
            provider=provider), _urls(offering), _confidence(offering))
    return Answer(UNKNOWN, _("We have no source saying whether {instance_type} can be joined to your own "
                             "cluster.").format(instance_type=instance_type))


def _provider_feature(key: str, provider: str, cells: dict[str, Cell], word: str, node: Answer,
                      instance_type: str) -> Answer | None:
    """The answer when the provider's own cell already decides it (unknown, n/a, no); None when it says yes. A
    machine that cannot be a node of the provider's managed Kubernetes gets none of the service's own features
    (SERVICE_ONLY), whatever the cell says."""
    cell = cells.get(key)
    if (cell is None or cell.value == UNKNOWN) and key in SERVICE_ONLY and node.state in (NO, NOT_HERE):
        return Answer(NO, _("{instance_type} cannot be a node of a managed Kubernetes at {provider}, so that "
                            "service's {feature} does not reach it (whether the service has {feature} at all is not "
                            "known).").format(
            instance_type=instance_type, provider=provider, feature=_(word)), list(node.sources), node.confidence)
    if cell is None or cell.value == UNKNOWN:
        return Answer(UNKNOWN, _("We do not know whether {provider} supports {feature} on its managed "
                                 "Kubernetes.").format(provider=provider, feature=_(word)))
    if cell.value == NA:
        return Answer(NA, _("{feature} on a managed Kubernetes does not apply: {provider} has none.").format(
            feature=_(word), provider=provider), _urls(cell), _confidence(cell))
    if cell.value in (YES, *GPU_OPERATOR_YES):
        return None
    if key == "gpu_operator" and cell.value == "user_installs":
        return Answer(NO, _("On {provider} you install the NVIDIA driver / GPU Operator yourself.").format(
            provider=provider), _urls(cell), _confidence(cell))
    return Answer(NO, _("{provider} does not support {feature} on its managed Kubernetes.").format(
        provider=provider, feature=_(word)), _urls(cell), _confidence(cell))


def _on_node(answer_yes: Answer, provider: str, instance_type: str, cell: Cell, node: Answer, word: str) -> Answer:
    """A provider feature that needs the machine to be a managed node."""
    if node.state == YES:
        return answer_yes
    if node.state == UNKNOWN:
        return Answer(UNKNOWN, _("{provider} supports {feature} on its managed Kubernetes, but we do not know "
                                 "whether {instance_type} can be one of its nodes.").format(
            provider=provider, feature=_(word), instance_type=instance_type), _urls(cell))
    text = _("{provider} supports {feature} on its managed Kubernetes, but {instance_type} cannot be one of its nodes.")
    return Answer(NOT_HERE, text.format(provider=provider, feature=_(word), instance_type=instance_type),
                  [*_urls(cell), *[u for u in node.sources if u not in _urls(cell)]], _confidence(cell, node))


def _managed_feature(key: str, provider: str, instance_type: str, cells: dict[str, Cell], node: Answer,
                     gpu: Gpu | None = None, scope: Fact | None = None) -> Answer:
    """`scope`: the machine's own fact on the feature (FACT_VALUES), where the provider's page says which machines
    the feature covers."""
    word = QUESTION_LABELS[key]
    decided = _provider_feature(key, provider, cells, word, node, instance_type)
    if decided is not None:
        return decided
    if scope is not None and scope.value == NO:
        text = _("{provider} supports {feature} on its managed Kubernetes, but not on {instance_type}.")
        return Answer(NOT_HERE, text.format(provider=provider, feature=_(word), instance_type=instance_type)
                      + _detail(scope), _urls(scope, cells[key]), _confidence(scope))
    if scope is not None and scope.value == UNKNOWN:
        return Answer(UNKNOWN, _("{provider} supports {feature} on its managed Kubernetes, but what we read of it "
                                 "does not say whether {instance_type} is covered.").format(
            provider=provider, feature=_(word), instance_type=instance_type) + _detail(scope), _urls(scope, cells[key]))
    if key == "gpu_operator" and gpu is not None and gpu.vendor != "nvidia":
        # The providers' driver answers are about NVIDIA's driver and GPU Operator: who installs an AMD, Intel or
        # TPU runtime on this machine is a different fact, which we have no source for.
        return Answer(UNKNOWN, _("{provider}'s driver answer is about NVIDIA GPUs; we have no source on who installs "
                                 "the driver of the {gpu} on its nodes.").format(provider=provider, gpu=gpu.name),
                      _urls(cells[key]))
    cell = cells[key]
    sources = [*_urls(cell), *[url for url in node.sources if url not in _urls(cell)]]
    feature = _(word) + (f" ({_(cell.value.replace('_', '-'))})" if key == "gpu_operator" else "")
    text = _("{feature}: {provider} supports it on its managed Kubernetes and {instance_type} can be a node.")
    yes = Answer(YES, text.format(feature=feature, provider=provider, instance_type=instance_type), sources,
                 _confidence(cell, node))
    return _on_node(yes, provider, instance_type, cell, node, word)


def _mig(provider: str, instance_type: str, cells: dict[str, Cell], gpu: Gpu | None, node: Answer,
         fraction: Decimal | None, share: Fact | None, scope: Fact | None = None) -> Answer:
    if gpu is None:
        return Answer(UNKNOWN, _("The GPU of this offer is not in our catalog, so we cannot tell whether it has "
                                 "MIG."))
    if not gpu.mig_profiles:
        if gpu.vendor != "nvidia":
            return Answer(NA, _("The {gpu} has no MIG: MIG is an NVIDIA feature.").format(gpu=gpu.name), _urls(gpu))
        return Answer(NO, _("The {gpu} has no MIG: it has no MIG profiles.").format(gpu=gpu.name), _urls(gpu))
    decided = _provider_feature("mig", provider, cells, "MIG", node, instance_type)
    if decided is not None:
        return decided
    cell = cells["mig"]
    if fraction is not None:
        return Answer(NOT_HERE, _("{provider} supports MIG, but {instance_type} is a fraction of a GPU ({fraction} "
                                  "of a {gpu}); MIG needs a whole GPU.").format(
            provider=provider, instance_type=instance_type, fraction=fraction.normalize(), gpu=gpu.name),
                      [*_urls(cell), *_urls(share)], _confidence(cell, share))
    if scope is not None and scope.value == UNKNOWN:
        return Answer(UNKNOWN, _("{provider} supports MIG on its managed Kubernetes, but what we read of it does not "
                                 "name the {gpu} of {instance_type}.").format(
            provider=provider, gpu=gpu.name, instance_type=instance_type) + _detail(scope), _urls(scope, cell))
    if scope is not None and scope.value == NO:
        text = _("{provider} supports MIG on its managed Kubernetes, but not on {instance_type}.")
        return Answer(NOT_HERE, text.format(provider=provider, instance_type=instance_type) + _detail(scope),
                      _urls(scope, cell), _confidence(scope))
    mig_url = gpu.mig_source_url or gpu.source_url
    profiles = ", ".join(gpu.mig_profiles[:3]) + (", ..." if len(gpu.mig_profiles) > 3 else "")
    setup = " " + _("How MIG is set up there: {detail}").format(detail=cell.detail) if cell.detail else ""
    yes = Answer(YES, _("{provider} supports MIG on its managed Kubernetes, the {gpu} has MIG profiles ({profiles}) "
                        "and {instance_type} is a managed node with whole GPUs.").format(
        provider=provider, gpu=gpu.name, profiles=profiles, instance_type=instance_type) + setup,
                 [*_urls(cell), *[u for u in node.sources if u not in _urls(cell)], *([mig_url] if mig_url else [])],
                 _confidence(cell, node))
    return _on_node(yes, provider, instance_type, cell, node, "MIG")


def _nvidia_sharing(key: str, word: str, provider: str, instance_type: str, cells: dict[str, Cell],
                    gpu: Gpu | None, node: Answer) -> Answer:
    if gpu is not None and gpu.vendor != "nvidia":
        return Answer(NA, _("{feature} is an NVIDIA device-plugin feature; the {gpu} is not an NVIDIA GPU.").format(
            feature=_(word), gpu=gpu.name), _urls(gpu))
    decided = _provider_feature(key, provider, cells, word, node, instance_type)
    if decided is not None:
        return decided
    if gpu is None:
        return Answer(UNKNOWN, _("{provider} supports {feature}, but the GPU of this offer is not in our "
                                 "catalog.").format(provider=provider, feature=_(word)), _urls(cells[key]))
    cell = cells[key]
    yes = Answer(YES, _("{provider} supports {feature} on its managed Kubernetes, the {gpu} is an NVIDIA GPU and "
                        "{instance_type} can be a node.").format(
        provider=provider, feature=_(word), gpu=gpu.name, instance_type=instance_type),
                 [*_urls(cell), *[u for u in node.sources if u not in _urls(cell)]], _confidence(cell, node))
    return _on_node(yes, provider, instance_type, cell, node, word)


def _rdma(provider: str, instance_type: str, cells: dict[str, Cell], facts: dict[str, Fact]) -> Answer:
    """The machine's fabric across nodes, from its instance fact only (a provider's InfiniBand somewhere says nothing
    about this machine). "yes" is GPUDirect RDMA between nodes (the class `rdma=any` asks for); GPU-direct over TCP
    and a plain network are "not on this machine" where the provider has RDMA elsewhere, else "no"."""
    fact = facts.get("fabric")
    provider_fabrics = [kind for kind, key in PROVIDER_FABRIC_CELL.items()
                        if kind != "gpudirect_tcpxo" and cells.get(key) is not None and cells[key].value == YES]
    provider_rdma = [kind for kind in ("infiniband", "roce", "efa") if kind in provider_fabrics]
    if fact is not None and fact.value in (*FABRICS, "none"):
        kind_class = fabric_class(fact.value, fact.gpudirect_rdma)
        shape = {"fabric": fact.value, "fabric_class": kind_class, "interfaces": fact.interfaces,
                 "bandwidth_gbps": fact.bandwidth_gbps,
                 "efa_interfaces": fact.interfaces if fact.value == "efa" else None}
        if fact.value == "none":
            text = _("{instance_type} has no RDMA fabric between nodes.").format(instance_type=instance_type)
        else:
            text = _("{instance_type} has {fabric}.").format(instance_type=instance_type,
                                                              fabric=_(FABRIC_LABELS[fact.value]))
        numbers = _fabric_numbers(fact)
        if numbers:  # inside the sentence, before its full stop (English or Chinese)
            text = f"{text[:-1]} ({numbers}){text[-1]}"
        if kind_class == RDMA_CLASS:
            text += " " + _("That is GPUDirect RDMA between nodes.")
        elif kind_class == TCP_CLASS:
            text += " " + _("That is GPU-direct over TCP: multi-node capable, but not RDMA.")
        elif kind_class == PLAIN_CLASS and fact.value == "efa":
            text += " " + _("AWS does not list it among the types that support GPUDirect RDMA over EFA, so GPU "
                            "traffic between nodes goes through a plain network path.")
        elif kind_class == UNKNOWN:
            text += " " + _("We have no source saying whether it supports GPUDirect RDMA.")
        text += _detail(fact)
        if kind_class == RDMA_CLASS:
            return Answer(YES, text, _urls(fact), _confidence(fact), **shape)
        if kind_class == UNKNOWN:
            return Answer(UNKNOWN, text, _urls(fact), _confidence(fact), **shape)
        if provider_rdma:
            names = ", ".join(FABRIC_LABELS[kind] for kind in provider_rdma)
            text += " " + _("{provider} offers {fabrics} on other machines.").format(provider=provider, fabrics=names)
            return Answer(NOT_HERE, text, [*_urls(fact), *_urls(*(cells[PROVIDER_FABRIC_CELL[k]] for k in
                                                                  provider_rdma))], _confidence(fact), **shape)
        return Answer(NO, text, _urls(fact), _confidence(fact), **shape)
    fabric_cells = [cells.get(key) for key in ("infiniband", "roce", "efa", "gpudirect_tcpx")]
    if all(cell is not None and cell.value in (NO, NA) for cell in fabric_cells):
        return Answer(NO, _("{provider} offers no RDMA fabric (no InfiniBand, RoCE, EFA or GPUDirect-TCPX).").format(
            provider=provider),
                      _urls(*fabric_cells), _confidence(*fabric_cells), fabric="none", fabric_class=PLAIN_CLASS)
    read = fact is not None and fact.value == UNKNOWN and bool(fact.source_url)  # sources read that do not settle it
    if provider_fabrics:
        names = ", ".join(FABRIC_LABELS[kind] for kind in provider_fabrics)
        text = (_("{provider} offers {fabrics} on some machines; what we read does not settle {instance_type}'s "
                  "fabric.") if read else
                _("{provider} offers {fabrics} on some machines; we have no source for {instance_type}'s fabric."))
        return Answer(UNKNOWN, text.format(provider=provider, fabrics=names, instance_type=instance_type)
                      + (_detail(fact) if read else ""),
                      _urls(fact if read else None, *(cells[PROVIDER_FABRIC_CELL[k]] for k in provider_fabrics)),
                      fabric=UNKNOWN, fabric_class=UNKNOWN)
    text = (_("What we read does not settle {instance_type}'s fabric between nodes.") if read else
            _("We have no source for {instance_type}'s fabric between nodes."))
    return Answer(UNKNOWN, text.format(instance_type=instance_type) + (_detail(fact) if read else ""),
                  _urls(fact if read else None), fabric=UNKNOWN, fabric_class=UNKNOWN)


def _fabric_numbers(fact: Fact) -> str:
    """"32 interfaces, 3200 Gbit/s in total" from what the fact states; "" when it states neither."""
    parts = []
    if fact.interfaces is not None:
        parts.append(_("{count} EFA interfaces") if fact.value == "efa" else _("{count} network interfaces"))
        parts[-1] = parts[-1].format(count=fact.interfaces)
    if fact.bandwidth_gbps is not None:
        parts.append(_("{gbps} Gbit/s in total").format(gbps=f"{fact.bandwidth_gbps.normalize():f}"))
    return ", ".join(parts)
