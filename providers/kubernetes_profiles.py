"""The stored Kubernetes answers of every offer (KubernetesProfile), derived by providers.kubernetes from three
layers: the provider's capability cells, the instance type's facts and the GPU model.

Every service that changes a layer calls `offer_kubernetes_refresh` inside its transaction; an ingest gives the
machines new to it their profile in the same write (`offer_profiles_for`). Offers sharing (provider, instance type,
GPU model, GPU count) share one profile.
"""

from __future__ import annotations

import dataclasses
from datetime import datetime
from decimal import Decimal

from django.db import connection
from django.utils import timezone, translation

from .bulk import BATCH_SIZE
from .models import Capability, DataSource, GpuModel, KubernetesFact, KubernetesProfile, Offer, Provider


def offer_profiles_for(source: DataSource, machines: set[tuple], *, now: datetime) -> dict[tuple, int]:
    """(instance type, GPU model id, GPU count) -> the id of that machine's KubernetesProfile under the source's
    provider, creating the profiles of machines new to it. Profiles already stored are taken as they are: every
    service that changes one of their layers recomputes them (offer_kubernetes_refresh), so an ingest derives
    answers only for machines it has not seen before."""
    by_key = {machine: _profile_key(source.provider_id, *machine) for machine in machines}
    ids, _ = _kubernetes_profiles_store({key: (source.provider_id, *machine) for machine, key in by_key.items()},
                                        {source.provider_id}, now=now, missing_only=True)
    return {machine: ids[key] for machine, key in by_key.items()}


def _profile_key(provider_id: int, instance_type: str, gpu_id: int | None, gpu_count: Decimal) -> str:
    return f"{provider_id}|{gpu_id or ''}|{gpu_count.normalize()}|{instance_type}"


def offer_kubernetes_refresh(*, provider_ids=None, source_ids=None, now: datetime | None = None) -> int:
    """Recompute the stored Kubernetes answers (KubernetesProfile) of the offers of `provider_ids` or `source_ids`
    (all offers when both are None) from the three layers: provider cells, instance facts (plus a provider API's
    `kubernetes_gpu_node_sizes` fact), GPU models. Called by every service that changes a layer, inside the
    caller's transaction; offers_sync gives the offers it writes their machine's profile in the same write
    (offer_profiles_for) and calls this only for offers of its source stored without one.

    Offers sharing (provider, instance type, GPU model, GPU count) share one profile. A profile whose answers did
    not change is not written; an offer is written only when its profile changes; profiles no offer uses any more
    are deleted. The number of queries does not grow with the number of offers. Returns the profiles written."""
    now = now or timezone.now()
    offers = Offer.objects.all()
    if source_ids is not None:
        offers = offers.filter(source_id__in=list(source_ids))
    elif provider_ids is not None:
        offers = offers.filter(provider_id__in=list(provider_ids))
    offers = offers.order_by()
    # The offers are read twice, streamed (a source may have a million): once for their distinct profiles, once to
    # move those whose profile changed; only the profiles are held.
    by_key: dict[str, tuple] = {}
    for provider_id, instance_type, gpu_id, gpu_count in offers.values_list(
            "provider_id", "instance_type", "gpu_id", "gpu_count").distinct().iterator(chunk_size=BATCH_SIZE):
        by_key.setdefault(_profile_key(provider_id, instance_type, gpu_id, gpu_count),
                          (provider_id, instance_type, gpu_id, gpu_count))
    wanted_providers = {row[0] for row in by_key.values()}
    if provider_ids is not None:
        wanted_providers |= set(provider_ids)
    if source_ids is not None:
        wanted_providers |= set(DataSource.objects.filter(pk__in=list(source_ids)).values_list("provider_id",
                                                                                              flat=True))
    if not by_key:
        KubernetesProfile.objects.filter(provider_id__in=wanted_providers, offers__isnull=True).delete()
        return 0
    profile_ids, written = _kubernetes_profiles_store(by_key, wanted_providers, now=now)
    del by_key
    # One statement per batch, however many profiles the moved offers go to (kubernetes_profile is in no index, so
    # PostgreSQL rewrites the rows in place, like the per-run last_seen update).
    moves: list[tuple[int, int]] = []
    for offer_id, provider_id, instance_type, gpu_id, gpu_count, current in offers.values_list(
            "id", "provider_id", "instance_type", "gpu_id", "gpu_count", "kubernetes_profile_id").iterator(
            chunk_size=BATCH_SIZE):
        profile_id = profile_ids[_profile_key(provider_id, instance_type, gpu_id, gpu_count)]
        if profile_id != current:
            moves.append((offer_id, profile_id))
            if len(moves) == BATCH_SIZE:
                _offer_profiles_set(moves)
                moves = []
    _offer_profiles_set(moves)
    KubernetesProfile.objects.filter(provider_id__in=wanted_providers, offers__isnull=True).delete()
    return written


def _kubernetes_profiles_store(by_key: dict[str, tuple], wanted_providers: set[int], *, now: datetime,
                               missing_only: bool = False) -> tuple[dict[str, int], int]:
    """Derive and store the KubernetesProfile of each machine in `by_key` (profile key -> (provider id, instance
    type, GPU model id, GPU count)) from the three layers, writing only profiles that are new or whose answers
    changed; with `missing_only`, profiles already stored are taken as they are (the services that change a layer
    recompute them). Returns profile key -> profile id for every key, and how many profiles were written."""
    from . import kubernetes as k8s
    from .models import InstanceTypeFact

    ids: dict[str, int] = {}
    if missing_only:
        ids = dict(KubernetesProfile.objects.filter(key__in=list(by_key)).values_list("key", "id"))
        by_key = {key: machine for key, machine in by_key.items() if key not in ids}
        if not by_key:
            return ids, 0
        existing = {}
    else:
        existing = {profile.key: profile for profile in KubernetesProfile.objects.filter(key__in=list(by_key))}
    names, names_zh = {}, {}
    for provider_id, name, name_zh in Provider.objects.filter(pk__in=wanted_providers).values_list(
            "id", "name", "name_zh"):
        names[provider_id], names_zh[provider_id] = name, name_zh or name
    # Each cell twice: with its English detail, and with its Chinese one for the Chinese reasons (the MIG answer
    # quotes how MIG is set up on the provider's managed Kubernetes).
    cells: dict[int, dict[str, k8s.Cell]] = {}
    cells_zh: dict[int, dict[str, k8s.Cell]] = {}
    for provider_id, key, value, url, confidence, detail, detail_zh, verified_on in Capability.objects.filter(
            provider_id__in=wanted_providers).values_list("provider_id", "key", "value", "source_url", "confidence",
                                                          "detail", "detail_zh", "verified_on"):
        cells.setdefault(provider_id, {})[key] = k8s.Cell(value, url, confidence, detail, verified_on)
        cells_zh.setdefault(provider_id, {})[key] = k8s.Cell(value, url, confidence, detail_zh or detail, verified_on)
    facts: dict[int, list[k8s.Fact]] = {}
    for fact in InstanceTypeFact.objects.filter(provider_id__in=wanted_providers).values(
            "provider_id", "pattern", "key", "value", "number", "detail", "detail_zh", "source_url", "confidence",
            "origin", "interfaces", "bandwidth_gbps", "gpudirect_rdma", "verified_on"):
        provider_id = fact.pop("provider_id")
        facts.setdefault(provider_id, []).append(k8s.Fact(**fact))
    for provider_id, value, url, fetched_at in KubernetesFact.objects.filter(
            provider_id__in=wanted_providers, name="kubernetes_gpu_node_sizes").values_list(
            "provider_id", "value", "source_url", "fetched_at"):
        for size in value if isinstance(value, list) else []:
            facts.setdefault(provider_id, []).append(k8s.Fact(
                pattern=str(size), key="managed_node", value="yes", origin="provider_api", source_url=url,
                verified_on=fetched_at.date() if fetched_at else None,
                confidence="documented", detail="The provider's API lists it as a Kubernetes GPU node size.",
                detail_zh="该厂商的 API 将其列为 Kubernetes GPU 节点规格。"))
    gpus = {gpu_id: k8s.Gpu(name, vendor, tuple(profiles or ()), mig_url, url) for gpu_id, name, vendor, profiles,
            mig_url, url in GpuModel.objects.values_list("id", "name", "vendor", "mig_profiles", "mig_source_url",
                                                          "source_url")}

    to_create, to_update = [], []
    for key, (provider_id, instance_type, gpu_id, gpu_count) in by_key.items():
        machine = {"instance_type": instance_type, "gpu_count": gpu_count, "cells": cells.get(provider_id, {}),
                   "facts": k8s.facts_for(instance_type, facts.get(provider_id, [])), "gpu": gpus.get(gpu_id)}
        answers = k8s.derive(provider_name=names.get(provider_id, "The provider"), **machine)
        # The same rules in Chinese, kept beside the English reason (pages and emails in Chinese show it).
        with translation.override("zh-hans"), k8s.translated(translation.gettext):
            chinese = k8s.derive(provider_name=names_zh.get(provider_id, "该厂商"),
                                 **{**machine, "cells": cells_zh.get(provider_id, {}),
                                    "facts": {key: dataclasses.replace(fact, detail=fact.detail_zh or fact.detail)
                                              for key, fact in machine["facts"].items()}})
        values = {question: answer.state for question, answer in answers.items()}
        values["fabric"] = answers["rdma"].fabric or k8s.UNKNOWN
        values["efa_interfaces"] = answers["rdma"].efa_interfaces
        values["fabric_class"] = answers["rdma"].fabric_class or k8s.UNKNOWN
        values["answers"] = {question: {**answer.as_dict(), "reason_zh": chinese[question].reason}
                             for question, answer in answers.items()}
        values["inferred"] = sorted(question for question, answer in answers.items() if answer.inferred)
        profile = existing.get(key)
        if profile is None:
            to_create.append(KubernetesProfile(key=key, provider_id=provider_id, instance_type=instance_type,
                                               gpu_id=gpu_id, gpu_count=gpu_count, computed_at=now, **values))
        elif any(getattr(profile, name) != value for name, value in values.items()):
            for name, value in values.items():
                setattr(profile, name, value)
            profile.computed_at = now
            to_update.append(profile)
    # Two runs of one provider's sources may meet a new machine at once: the second waits for the first's profile
    # and keeps it (the same derivation), read back with the others below.
    KubernetesProfile.objects.bulk_create(to_create, batch_size=BATCH_SIZE, ignore_conflicts=True)
    KubernetesProfile.objects.bulk_update(
        to_update, [*k8s.QUESTIONS, "fabric", "fabric_class", "efa_interfaces", "answers", "inferred", "computed_at"],
        batch_size=BATCH_SIZE)
    ids |= dict(KubernetesProfile.objects.filter(key__in=list(by_key)).values_list("key", "id"))
    return ids, len(to_create) + len(to_update)


def _offer_profiles_set(moves: list[tuple[int, int]]) -> None:
    """Point each offer id at its profile id: on PostgreSQL one `UPDATE ... FROM unnest(arrays)` (as _offers_update
    writes, not bulk_update's CASE per row), elsewhere bulk_update."""
    if not moves:
        return
    if connection.vendor != "postgresql":
        Offer.objects.bulk_update([Offer(pk=pk, kubernetes_profile_id=profile) for pk, profile in moves],
                                  ["kubernetes_profile"])
        return
    table = connection.ops.quote_name(Offer._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(f"UPDATE {table} AS o SET kubernetes_profile_id = v.profile FROM unnest(%s::bigint[], "
                       f"%s::bigint[]) AS v(id, profile) WHERE o.id = v.id",
                       [[pk for pk, _ in moves], [profile for _, profile in moves]])
