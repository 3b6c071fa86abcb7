"""The node-software filters (`cuda`, `k8s_version`, `dra`, `stack`): answered from nodesoftware/'s data files
(docs/node-software.md), applied as literal id lists; only a yes counts, and an unknown answer is a condition of the
`unknown` parameter (providers.filters.unknown). A mixin of OfferFilterSet (providers.filters), which declares the
filters and supplies `form` and `_providers`.
"""

from __future__ import annotations

from django.db.models import Q

from nodesoftware import fit as node_fit
from nodesoftware import stacks as node_stacks

from ..capabilities import UNKNOWN
from ..models import GpuModel, Provider
from ..versions import remembered
from .unknown import Conditions


class NodeSoftwareFilters:
    def filter_cuda(self, queryset, name, value, conditions):
        """Offers whose provider's managed Kubernetes gives a node with this GPU (for `k8s_version`, if set) an image
        whose driver runs CUDA `value` on that GPU; a fit only on a non-default image counts, and the API marks it.
        An offer whose fit is unknown (no node software recorded, an unknown GPU) is left out and counted, or kept
        with unknown=include."""
        k8s_version = self.form.cleaned_data.get("k8s_version")
        pairs, unknown = remembered(f"node-fit:{value}:{k8s_version}", lambda: self._node_fits(value, k8s_version))
        matching = Q(pk__in=[])
        for provider_id, gpu_ids in pairs.items():
            matching |= Q(provider_id=provider_id, gpu_id__any=gpu_ids)
        unsure = Q(gpu__isnull=True)
        for provider_id, gpu_ids in unknown.items():
            unsure |= Q(provider_id=provider_id) if gpu_ids is None else Q(provider_id=provider_id, gpu_id__any=gpu_ids)
        conditions.offer_condition(matching, unsure, name)
        return queryset

    @staticmethod
    def _node_fits(cuda: str, k8s_version: str | None) -> tuple[dict[int, list[int]], dict[int, list[int] | None]]:
        """(provider id -> ids of the GPUs whose node there runs CUDA `cuda`, provider id -> ids of the GPUs whose
        fit is unknown there, or None for all of them)."""
        providers = dict(Provider.objects.values_list("slug", "pk"))
        gpus = {slug: (pk, arch) for pk, slug, arch in GpuModel.objects.values_list("pk", "slug", "architecture")}
        architectures = {slug: arch for slug, (_pk, arch) in gpus.items()}
        fits, unknown = node_fit.gpus_by_cuda_fit(list(providers), architectures, cuda=cuda, k8s=k8s_version)
        return ({providers[slug]: sorted(gpus[gpu][0] for gpu in gpu_slugs) for slug, gpu_slugs in fits.items()},
                {providers[slug]: None if gpu_slugs is None else sorted(gpus[gpu][0] for gpu in gpu_slugs)
                 for slug, gpu_slugs in unknown.items()})

    @staticmethod
    def _provider_condition(conditions: Conditions, name: str, matching_ids, unknown_ids) -> None:
        """A filter answered per provider whose answer may be unknown: left out and counted, or kept with
        unknown=include."""
        conditions.offer_condition(Q(provider_id__any=list(matching_ids)), Q(provider_id__any=list(unknown_ids)), name)

    def _provider_ids(self, slugs) -> list[int]:
        return sorted(Provider.objects.filter(slug__in=slugs).values_list("pk", flat=True))

    def _providers_without_node_software(self) -> list[int]:
        return remembered("node-software:unrecorded", lambda: sorted(
            Provider.objects.exclude(slug__in=node_fit.providers_with_node_software()).values_list("pk", flat=True)))

    def filter_k8s_version(self, queryset, name, value, conditions):
        """Providers with a managed Kubernetes service whose recorded calendar offers `value` today; a provider with
        no node software recorded, or whose services have no calendar or one behind `value`, is unknown."""
        if self.form.cleaned_data.get("cuda"):
            return queryset  # filter_cuda asks for the driver of that version, which needs the version offered
        ids = remembered(f"k8s-version:{value}",
                         lambda: self._provider_ids(node_fit.providers_offering_kubernetes(value)))
        unknown = remembered(f"k8s-version-unknown:{value}", lambda: sorted(
            self._providers_without_node_software()
            + self._provider_ids(node_fit.providers_unknown_for_kubernetes(value))))
        self._provider_condition(conditions, name, ids, unknown)
        return queryset

    def filter_dra(self, queryset, name, value, conditions):
        """yes: a Kubernetes version serving resource.k8s.io by default (1.34+) and a documented DRA driver for GPU
        nodes; partial: one of them (nodesoftware.images.dra_answer says which); unknown: nothing recorded."""
        answers = remembered("dra:answers", lambda: {
            pk: node_fit.provider_dra(slug).value for slug, pk in Provider.objects.values_list("slug", "pk")})
        if UNKNOWN in value:
            return self._providers(queryset, sorted(pk for pk, answer in answers.items() if answer in value))
        self._provider_condition(conditions, name, [pk for pk, answer in answers.items() if answer in value],
                                 [pk for pk, answer in answers.items() if answer == UNKNOWN])
        return queryset

    def filter_stack(self, queryset, name, value, conditions):
        """Providers with a provider-managed or provider-documented stack of each family asked for (all of them);
        a provider with no recorded answer for a family asked for is unknown."""
        slugs = set.intersection(*(node_stacks.providers_with(family) for family in value))
        answering = set.intersection(*(node_stacks.providers_answering(family) for family in value))
        ids = remembered(f"stack:{sorted(value)}", lambda: self._provider_ids(slugs))
        unknown = remembered(f"stack-unknown:{sorted(value)}", lambda: sorted(
            Provider.objects.exclude(slug__in=answering).values_list("pk", flat=True)))
        self._provider_condition(conditions, name, ids, unknown)
        return queryset

