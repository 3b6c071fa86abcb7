"""Issue #39's target "0 generated manifests failing schema or label validation over the whole snapshot": for every
machine type of the bundled snapshot (one offer per provider, instance type, GPU and count), the advisor's batch
Job and its inference Deployment and Service for a small model are built on that machine and validated strictly
against the Kubernetes schema, which checks every label key and value and every selector."""

from __future__ import annotations

import re
from decimal import Decimal as D

import pytest

from advisor import engine
from advisor.manifests import build_manifest
from advisor.selectors import OFFER_FIELDS, _offer_data
from advisor.types import ModelNeed, WorkloadSpec
from providers.models import Offer

from .test_manifests import validate

# Kubernetes' rules for label values and (optionally prefixed) keys, which the OpenAPI schema does not check
# (https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#syntax-and-character-set).
VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
PREFIX = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def label_problems(obj, path="") -> list[str]:
    """Every label map (labels, nodeSelector, matchLabels) and node-selector requirement whose key or value breaks
    Kubernetes' syntax."""
    problems = []
    if isinstance(obj, dict):
        for key, value in obj.items():
            here = f"{path}.{key}"
            if key in ("labels", "nodeSelector", "matchLabels") and isinstance(value, dict):
                for name, text in value.items():
                    prefix, _, short = name.rpartition("/")
                    if (not NAME.match(short) or len(short) > 63 or (prefix and not PREFIX.match(prefix))
                            or len(prefix) > 253 or not isinstance(text, str) or len(text) > 63
                            or not VALUE.match(text)):
                        problems.append(f"{here}: {name}={text!r}")
            elif key == "matchExpressions" and isinstance(value, list):
                for requirement in value:
                    for text in requirement.get("values", []):
                        if len(text) > 63 or not VALUE.match(text):
                            problems.append(f"{here}: {requirement['key']} {text!r}")
            else:
                problems += label_problems(value, here)
    elif isinstance(obj, list):
        for index, item in enumerate(obj):
            problems += label_problems(item, f"{path}[{index}]")
    return problems


def test_the_label_check_catches_what_the_schema_lets_through():
    assert label_problems({"spec": {"nodeSelector": {"node.kubernetes.io/instance-type": "BM.GPU H100.8"}}})
    assert label_problems({"metadata": {"labels": {"app": "x" * 64}}})
    assert not label_problems({"spec": {"nodeSelector": {"node.kubernetes.io/instance-type": "p5.48xlarge"}}})

pytestmark = pytest.mark.django_db

SPECS = (WorkloadSpec(kind="batch", gpus_per_node=1, nodes=1),
         WorkloadSpec(kind="inference", models=(ModelNeed(1, D("0.5"), name="small"),)))
MANAGED = {"offering": "managed", "control_plane_fee": "free"}


def machine_types() -> list:
    seen, offers = set(), []
    for offer in (Offer.objects.filter(is_active=True, price_hour_usd__isnull=False, gpu__isnull=False)
                  .select_related("provider", "source", "gpu").only(*OFFER_FIELDS).order_by("id")):
        key = (offer.provider.slug, offer.instance_type, offer.gpu.slug, offer.gpu_count)
        if key not in seen:
            seen.add(key)
            offers.append(_offer_data(offer))
    return offers


@pytest.mark.slow
def test_every_machine_types_manifests_are_schema_and_label_valid(snapshot):
    from advisor.types import Cell

    cells = {key: Cell(key, value) for key, value in MANAGED.items()}
    machines = machine_types()
    assert len(machines) > 300  # the whole snapshot, not a sample
    built, failures = 0, []
    for offer in machines:
        for spec in SPECS:
            advice = engine.advise(spec, offers=[offer], cells={offer.provider_slug: cells}, per_eur={})
            if advice.chosen is None:
                continue  # left out for a reason the advice counts (a TPU, a fractional GPU): no manifest
            manifest = build_manifest(spec, advice.chosen, advice.packing)
            for obj in manifest.objects:
                try:
                    validate(obj)
                except Exception as error:  # collect all, report them together
                    failures.append((offer.provider_slug, offer.instance_type, obj["kind"], str(error)[:200]))
                failures += [(offer.provider_slug, offer.instance_type, obj["kind"], problem)
                             for problem in label_problems(obj)]
            built += 1
    assert not failures, failures[:10]
    assert built > len(machines)  # most machine types get both manifests
