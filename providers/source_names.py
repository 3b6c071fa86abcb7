"""Data sources' names in the active language. The names come from the source clients (scrapers/*.py and the curated
price files) in English; the catalogue translates them like the pages' own words, so a Chinese page reads
"Azure 零售价格 API" rather than an English description. A name the catalogue does not know is shown as it is
(tests/providers/test_source_names.py requires one for every registered source)."""

from __future__ import annotations

import re

from django.utils.translation import gettext, gettext_noop

SKYPILOT = re.compile(r"^SkyPilot catalog: (?P<name>.+)$")

# Spelled out so makemessages finds them; each is a SourceInfo.name.
NAMES = (
    gettext_noop("AWS Price List (bulk, EC2)"),
    gettext_noop("AWS Price List (bulk, EKS)"),
    gettext_noop("AWS: Karpenter price tables, Vantage-derived regional prices, Spot Advisor"),
    gettext_noop("Alibaba Cloud PAI published GPU prices (curated)"),
    gettext_noop("Azure Retail Prices API"),
    gettext_noop("Baidu AI Cloud BML published GPU prices (curated)"),
    gettext_noop("CNCF Kubernetes AI Conformance"),
    gettext_noop("CoreWeave pricing page, daily scrapes (coreweave-pricing-tracker)"),
    gettext_noop("Crusoe per-GPU prices as gpuhunt hardcodes them (transcribed)"),
    gettext_noop("DigitalOcean API v2 (sizes, Kubernetes options)"),
    gettext_noop("Genesis Cloud per-GPU prices from cloud-gpus.com's data file (transcribed)"),
    gettext_noop("Google Cloud: Karpenter-for-GCP price table, gpuhunt TPU prices, commitment prices"),
    gettext_noop("Hyperstack Infrahub API (pricebook)"),
    gettext_noop("IBM Cloud gx2 V100 servers from SkyPilot's v5 catalog (transcribed)"),
    gettext_noop("Lambda Cloud API (instance types)"),
    gettext_noop("Linode API v4 (types, regions, LKE)"),
    gettext_noop("OVHcloud GPU instances from SkyPilot's v6 catalog (transcribed, USD)"),
    gettext_noop("Oracle Cloud price list API"),
    gettext_noop("RunPod GraphQL API (gpuTypes)"),
    gettext_noop("Scaleway GPU instances from SkyPilot's v6 catalog (transcribed, EUR)"),
    gettext_noop("Tencent Cloud GPU instance prices from Tencent's documentation repository (curated, 2023)"),
    gettext_noop("Vast.ai bundles search (live offers)"),
    gettext_noop("Verda Public API v1 (instance types, spot availability, locations)"),
    gettext_noop("Vultr API v2 (plans, regions, VKE versions)"),
)


def source_name(name: str) -> str:
    """A data source's name in the active language (its English name when the catalogue has none)."""
    match = SKYPILOT.match(name or "")
    if match:
        return gettext("SkyPilot catalog: %(name)s") % {"name": match["name"]}
    return gettext(name) if name else name
