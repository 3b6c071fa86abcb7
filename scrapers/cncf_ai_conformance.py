"""CNCF Kubernetes AI Conformance (github.com/cncf/k8s-ai-conformance, Apache-2.0) as a source of Kubernetes facts.

Each certified product files one `v<k8s version>/<product>/PRODUCT.yaml` self-assessment per Kubernetes version:
for every requirement (docs/AIConformance-<version>.yaml defines them) a status (Implemented / Partially
Implemented / Not Implemented / N/A), evidence URLs and notes. We read the files of the products that are one of
our providers (`PRODUCTS`, an explicit table; the other upstream products are listed in `IGNORED_PRODUCTS` and only
counted) and turn them into capability cells:

- `cncf_ai_conformance`: "yes", labelled with the Kubernetes versions the product is certified for;
- a requirement becomes the cell of a matrix question only where its definition answers that question
  (`REQUIREMENT_QUESTIONS`): `dra_support` -> `dra`, `accelerator_metrics` -> `accelerator_metrics`,
  `gang_scheduling` -> `gang_scheduling` ("at least one gang scheduling solution ... successfully run"),
  `cluster_autoscaling` -> `node_autoscaling` ("scale up/down node groups containing specific accelerator types
  based on pending pods"). The others (GPU sharing without saying which kind, driver *verification*, inference
  gateway, pod autoscaling, operators, ...) do not answer any of our questions and are not used;
- Implemented -> yes, Partially -> partial (kept distinct from yes), Not Implemented -> no, N/A -> n/a; the
  requirement's first evidence URL is the cell's source (the PRODUCT.yaml itself when it lists none); the answer
  comes from the newest version that states the requirement (v1.36 dropped `dra_support`, for example).

This is a dataset at a commit, not a live API: every cell is dated with the commit's date (`AS_OF`), and the bundled
snapshot replays the recorded copy (scrapers/recorded/cncf_ai_conformance/, verbatim files at `REVISION`), which
says exactly what a live fetch of the same paths says (`capability_dataset = True`; see
providers.facts_sync.capability_facts_sync for how such cells sit beside the curated ones). A file that is missing
upstream is skipped with a note while another version of the product answers. A self-assessment filed as a pull
request not yet merged at REVISION (`PINNED`) is read, recorded and cited at the commit that filed it. A file that
is not the checklist's shape raises SchemaScrapeError.
"""

from __future__ import annotations

import logging
import re
from datetime import date
from pathlib import Path
from typing import ClassVar

import yaml

from .base import ProviderClient, SchemaScrapeError, ScrapedCapability, ScrapeError, ScrapeResult, SourceInfo
from .http import get

logger = logging.getLogger(__name__)

REPOSITORY = "https://github.com/cncf/k8s-ai-conformance"
REVISION = "b2c89690e77f705dd4aec8da7d33a3b5d9831d8e"
AS_OF = date(2026, 8, 19)  # the commit's date
RAW = f"https://raw.githubusercontent.com/cncf/k8s-ai-conformance/{REVISION}"
BLOB = f"{REPOSITORY}/blob/{REVISION}"
RECORDED = Path(__file__).resolve().parent / "recorded" / "cncf_ai_conformance"
# Self-assessments filed as pull requests not yet merged at REVISION, read at the commit that filed them.
PINNED: dict[str, str] = {
    # refs/pull/134/head (2026-08-17), "Add ACK AI Conformance submission for v1.36"
    "v1.36/ack/PRODUCT.yaml": "499c14ae42e5e9e87ba8b43c5a65aef35795fc92",
}

# Upstream product folder -> our provider slug, with the versions recorded at REVISION (oldest first).
PRODUCTS: dict[str, tuple[str, tuple[str, ...]]] = {
    "eks": ("aws", ("v1.34", "v1.35")),            # Amazon EKS
    "gke": ("gcp", ("v1.34", "v1.35")),            # Google Kubernetes Engine
    "aks": ("azure", ("v1.34", "v1.35", "v1.36")),  # Azure Kubernetes Service
    "OKE": ("oci", ("v1.34",)),                    # OCI Kubernetes Engine (v1.34 folder is upper case)
    "oke": ("oci", ("v1.35",)),
    "cce": ("huawei", ("v1.34", "v1.35")),         # Huawei Cloud Container Engine
    "cks": ("coreweave", ("v1.33", "v1.34", "v1.35")),  # CoreWeave Kubernetes Service
    "ack": ("alibaba", ("v1.34", "v1.36")),        # Alibaba Cloud ACK
    "baidu_cce": ("baidu", ("v1.34",)),            # Baidu AI Cloud CCE
    "ovh": ("ovhcloud", ("v1.34",)),               # OVHcloud Managed Kubernetes Service
    "lke": ("linode", ("v1.34",)),                 # Akamai (Linode) Kubernetes Engine
}
# Certified products at REVISION that are not providers we list (distributions, platforms, other clouds): ignored.
IGNORED_PRODUCTS = (
    "alauda", "chinaunicom-csk", "daocloud", "gardener", "giantswarm", "jdcloud", "jdos", "openshift", "palette",
    "rke2", "talos", "Taichu", "bks", "kubermatic", "vcluster-private-nodes", "vks", "ericsson-ccd", "k0rdent", "k0s",
    "kops", "nkp", "nvidia-nim-eks", "rafay", "upcloud", "viettel-ai-platform", "Softbank", "orkestrix",
)

STATUSES = {"implemented": "yes", "partially implemented": "partial", "partially": "partial",
            "not implemented": "no", "n/a": "n/a", "na": "n/a", "not applicable": "n/a"}
STATUS_ZH = {"yes": "已实现", "partial": "部分实现", "no": "未实现", "n/a": "不适用"}
STATUS_EN = {"yes": "Implemented", "partial": "Partially implemented", "no": "Not implemented", "n/a": "N/A"}

# Requirement id -> matrix question it really answers (see the module docstring for why only these).
REQUIREMENT_QUESTIONS = {
    "dra_support": "dra",
    "accelerator_metrics": "accelerator_metrics",
    "gang_scheduling": "gang_scheduling",
    "cluster_autoscaling": "node_autoscaling",
}
REQUIREMENT_NAMES = {
    "dra_support": ("Dynamic Resource Allocation (DRA) APIs", "动态资源分配（DRA）API"),
    "accelerator_metrics": ("accelerator metrics solution", "加速器指标方案"),
    "gang_scheduling": ("gang scheduling solution", "Gang 调度（成组调度）方案"),
    "cluster_autoscaling": ("GPU-aware cluster autoscaling", "按 GPU 类型的集群节点自动伸缩"),
}
VERSION_RE = re.compile(r"^v1\.\d+$")


def file_path(version: str, product: str) -> str:
    return f"{version}/{product}/PRODUCT.yaml"


def commit_of(path: str) -> str:
    return PINNED.get(path, REVISION)


def raw_url(path: str) -> str:
    return f"https://raw.githubusercontent.com/cncf/k8s-ai-conformance/{commit_of(path)}/{path}"


def blob_url(path: str) -> str:
    return f"{REPOSITORY}/blob/{commit_of(path)}/{path}"


def parse_product(text: str, origin: str) -> tuple[str, dict[str, dict]]:
    """The Kubernetes version and the requirements (id -> {status, evidence}) of one PRODUCT.yaml.

    Raises SchemaScrapeError for anything that is not the checklist's shape: not YAML, no metadata version, no
    spec sections, a requirement without id or with a status outside the checklist's four.
    """
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise SchemaScrapeError(f"{origin}: not valid YAML ({exc})") from exc
    if not isinstance(data, dict) or not isinstance(data.get("metadata"), dict) or not isinstance(
            data.get("spec"), dict):
        raise SchemaScrapeError(f"{origin}: no 'metadata' and 'spec' mappings")
    version = str(data["metadata"].get("kubernetesVersion", "")).strip()
    if not VERSION_RE.match(version):
        raise SchemaScrapeError(f"{origin}: metadata.kubernetesVersion {version!r} is not like 'v1.35'")
    requirements: dict[str, dict] = {}
    for section, items in data["spec"].items():
        if not isinstance(items, list):
            raise SchemaScrapeError(f"{origin}: spec.{section} is not a list of requirements")
        for item in items:
            if not isinstance(item, dict) or not isinstance(item.get("id"), str):
                raise SchemaScrapeError(f"{origin}: a requirement in spec.{section} has no id")
            status = STATUSES.get(str(item.get("status", "")).strip().lower())
            if status is None:
                raise SchemaScrapeError(f"{origin}: requirement {item['id']!r} has status {item.get('status')!r}")
            evidence = item.get("evidence") or []
            if isinstance(evidence, str):
                evidence = [evidence]
            if not isinstance(evidence, list):
                raise SchemaScrapeError(f"{origin}: requirement {item['id']!r} evidence is not a list of URLs")
            urls = [url.strip() for url in evidence if isinstance(url, str) and url.strip().startswith("https://")]
            requirements[item["id"]] = {"status": status, "evidence": urls}
    if not requirements:
        raise SchemaScrapeError(f"{origin}: no requirements")
    return version, requirements


def capabilities_from(files: list[tuple[str, str, dict[str, dict]]]) -> list[ScrapedCapability]:
    """Cells from one product's parsed files [(version, blob URL, requirements)], oldest version first."""
    versions = [version for version, _, _ in files]
    newest_url = files[-1][1]
    listed = ", ".join(versions)
    cells = [ScrapedCapability(
        key="cncf_ai_conformance", value="yes", source_url=newest_url, verified_on=AS_OF,
        label=f"Kubernetes {listed}", label_zh=f"Kubernetes {listed}",
        detail=f"Listed as a Certified Kubernetes AI Conformant product for {listed} in cncf/k8s-ai-conformance "
               f"(commit {REVISION[:8]}, {AS_OF.isoformat()}).",
        detail_zh=f"在 cncf/k8s-ai-conformance 中被列为 {listed} 的 Kubernetes AI 一致性认证产品"
                  f"（提交 {REVISION[:8]}，{AS_OF.isoformat()}）。",
    )]
    for requirement, key in REQUIREMENT_QUESTIONS.items():
        stated = [(version, url, reqs[requirement]) for version, url, reqs in files if requirement in reqs]
        if not stated:
            continue
        version, url, answer = stated[-1]
        name, name_zh = REQUIREMENT_NAMES[requirement]
        value = answer["status"]
        cells.append(ScrapedCapability(
            key=key, value=value, source_url=answer["evidence"][0] if answer["evidence"] else url,
            verified_on=AS_OF, label="CNCF AI conformance", label_zh="CNCF AI 一致性认证",
            detail=f"{STATUS_EN[value]}: the vendor's {version} AI conformance self-assessment "
                   f"({requirement}, {name}); the evidence is the page linked.",
            detail_zh=f"{STATUS_ZH[value]}：厂商 {version} AI 一致性自评（{requirement}，{name_zh}）；"
                      "证据为所链接的页面。",
        ))
    return cells


class CncfAiConformanceClient(ProviderClient):
    """Base for one provider's certified products; subclasses set `info` and `products`."""

    info: ClassVar[SourceInfo]
    products: ClassVar[tuple[str, ...]]
    provides_kubernetes_facts: ClassVar[bool] = True
    # A dataset at a commit: replaying the recorded copy is the same as fetching it (see the module docstring).
    capability_dataset: ClassVar[bool] = True

    @classmethod
    def paths(cls) -> list[str]:
        return [file_path(version, product) for product in cls.products for version in PRODUCTS[product][1]]

    @classmethod
    def recorded(cls) -> dict[str, Path]:
        return {raw_url(path): RECORDED / path for path in cls.paths()}

    def fetch(self) -> ScrapeResult:
        files: list[tuple[str, str, dict[str, dict]]] = []
        missing: list[str] = []
        for path in self.paths():
            try:
                text = get(self.http, raw_url(path)).text
            except ScrapeError as exc:
                if "HTTP 404" not in str(exc):
                    raise
                missing.append(path)
                logger.warning("%s: %s is missing upstream; other versions still answer", self.info.slug, path)
                continue
            version, requirements = parse_product(text, path)
            files.append((version, blob_url(path), requirements))
        if not files:
            raise SchemaScrapeError(f"none of {', '.join(self.paths())} exists at {REVISION[:8]}")
        files.sort(key=lambda item: int(item[0].split(".")[1]))
        logger.info("%s: %d upstream products are not providers we list and are ignored", self.info.slug,
                    len(IGNORED_PRODUCTS))
        return ScrapeResult(offers=[], rejected=[f"{path}: missing upstream" for path in missing],
                            capabilities=capabilities_from(files))


def _client(provider: str) -> type[CncfAiConformanceClient]:
    products = tuple(product for product, (slug, _) in PRODUCTS.items() if slug == provider)
    info = SourceInfo(
        slug=f"cncf-ai-{provider}", provider=provider, name="CNCF Kubernetes AI Conformance", kind="catalog",
        url=REPOSITORY, license="Apache-2.0", revision=REVISION, as_of=AS_OF.isoformat(),
    )
    return type(f"CncfAiConformance_{provider.replace('-', '_')}", (CncfAiConformanceClient,),
                {"info": info, "products": products, "__module__": __name__})


CLIENTS: dict[str, type[CncfAiConformanceClient]] = {
    client.info.slug: client
    for client in (_client(provider) for provider in dict.fromkeys(slug for slug, _ in PRODUCTS.values()))
}
