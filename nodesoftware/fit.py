"""Will an image run on a provider's managed Kubernetes GPU node? The answer the `cuda` and `k8s_version` filters,
the offer pages and the advisor share.

For a provider, a GPU and (optionally) a CUDA version and a Kubernetes version: take each of the provider's managed
services that offers that Kubernetes version, the node image a node with that GPU gets by default, the driver branch
that image installs for that version today, and ask compat.can_run. If the default image cannot (or cannot be shown
to), the service's other images are tried and a fit there is reported as "yes, with image X" (`needs_image`), kept
apart from a plain yes. A provider without recorded node software is unknown, never no.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from django.utils.translation import gettext_noop

from . import compat, images

YES, NO, UNKNOWN = compat.YES, compat.NO, compat.UNKNOWN


@dataclass(frozen=True)
class NodeFit:
    answer: str  # yes / no / unknown
    reason: str
    service: str = ""
    image: str = ""  # the node image the answer is about
    needs_image: bool = False  # yes only with an image that is not the default one
    driver_branch: int | None = None
    sources: tuple[str, ...] = ()


def image_verdict(image: images.NodeImage, cuda: str | None, k8s: str | None, gpu: compat.Accelerator | None,
                  on: date) -> tuple[compat.Verdict, int | None]:
    release = images.driver_on(image, k8s, on)
    branch = release.branch if release else None
    if cuda is None:
        return compat.Verdict(YES, f"{image.name}"), branch
    verdict = compat.can_run(cuda, branch, gpu)
    if release is None and verdict.answer == UNKNOWN:
        why = {"your_choice": f"the driver is your choice ({image.choices}); its default version is not published",
               "preinstalled": "the driver is preinstalled; its version is not published",
               "you_install": "you install the driver", "operator": "a GPU Operator installs the driver"}[image.driver]
        verdict = compat.Verdict(UNKNOWN, f"{verdict.reason} ({why})", verdict.sources + (image.source_url,))
    elif release is not None:
        verdict = compat.Verdict(verdict.answer, f"{image.name}: driver {branch}. {verdict.reason}",
                                 verdict.sources + (release.source_url,))
    return verdict, branch


def node_fit(provider_slug: str, gpu_slug: str, architecture: str = "", *, cuda: str | None = None,
             k8s: str | None = None, on: date | None = None) -> NodeFit:
    """The best answer over the provider's managed services: a default-image yes beats a non-default one, which
    beats unknown, which beats no. Raises ValueError for an unparseable `cuda` or `k8s`."""
    on = on or date.today()
    if cuda is not None:
        compat.parse_cuda_version(cuda)
    if k8s is not None:
        compat.parse_cuda_version(k8s)
    services = images.services_of(provider_slug)
    if not services:
        return NodeFit(UNKNOWN, "no node software is recorded for this provider's managed Kubernetes")
    gpu = compat.accelerator(gpu_slug, architecture)
    answers: list[NodeFit] = []
    for service in services:
        if k8s is not None:
            offered = service.offers_kubernetes(k8s, on)
            if offered is False:
                answers.append(NodeFit(NO, f"{service.name} does not offer Kubernetes {k8s}", service.slug,
                                       sources=(service.calendar_url,)))
                continue
            if offered is None:
                answers.append(NodeFit(UNKNOWN, f"{service.name} publishes no Kubernetes calendar recorded here",
                                       service.slug))
                continue
        for default in (True, False):
            candidates = [image for image in service.images
                          if image.default == default and image.applies_to(gpu_slug)]
            candidates.sort(key=lambda image: not image.gpus)  # an image naming the GPU is the one it gets
            if default:
                candidates = candidates[:1]
            for image in candidates:
                verdict, branch = image_verdict(image, cuda, k8s, gpu, on)
                answers.append(NodeFit(verdict.answer, verdict.reason, service.slug, image.slug,
                                       needs_image=not default and verdict.answer == YES, driver_branch=branch,
                                       sources=verdict.sources))
    if not answers:
        return NodeFit(UNKNOWN, "no recorded node image of this provider applies to this GPU")
    rank = {(YES, False): 0, (YES, True): 1, (UNKNOWN, False): 2, (UNKNOWN, True): 2, (NO, False): 3, (NO, True): 3}
    return min(answers, key=lambda fit: rank[(fit.answer, fit.needs_image)])


def gpus_by_cuda_fit(provider_slugs: list[str], gpus: dict[str, str], *, cuda: str, k8s: str | None = None,
                     on: date | None = None) -> tuple[dict[str, list[str]], dict[str, list[str] | None]]:
    """What the `cuda` filter keeps and what it leaves out as unknown, for GPUs given as slug -> architecture:
    (provider slug -> slugs of the GPUs whose node there runs CUDA `cuda`, provider slug -> slugs of the GPUs whose
    fit is unknown there, or None for every GPU when no node software is recorded for the provider)."""
    recorded = {service.provider for service in images.services()}
    fits: dict[str, list[str]] = {}
    unknown: dict[str, list[str] | None] = {}
    for provider in provider_slugs:
        if provider not in recorded:
            unknown[provider] = None
            continue
        answers = {gpu: node_fit(provider, gpu, architecture, cuda=cuda, k8s=k8s, on=on).answer
                   for gpu, architecture in sorted(gpus.items())}
        for found, answer in ((fits, YES), (unknown, UNKNOWN)):
            if answer in answers.values():
                found[provider] = [gpu for gpu, given in answers.items() if given == answer]
    return fits, unknown


def providers_with_node_software() -> set[str]:
    """Slugs of the providers with recorded managed-Kubernetes node software (calendars, images)."""
    return {service.provider for service in images.services()}


def providers_offering_kubernetes(version: str, on: date | None = None) -> set[str]:
    """Slugs of the providers with a managed service whose recorded calendar offers `version` on `on` (today)."""
    return {service.provider for service in images.services() if service.offers_kubernetes(version, on)}


def providers_unknown_for_kubernetes(version: str, on: date | None = None) -> set[str]:
    """Slugs of the providers with node software recorded but no service known to offer `version` on `on` while
    one of them may (no calendar, or a calendar behind that version): unknown, never a silent no."""
    answers: dict[str, set[bool | None]] = {}
    for service in images.services():
        answers.setdefault(service.provider, set()).add(service.offers_kubernetes(version, on))
    return {slug for slug, found in answers.items() if True not in found and None in found}


def provider_dra(provider_slug: str, on: date | None = None) -> images.DraAnswer:
    """The provider's best DRA answer over its managed services (yes > partial > unknown)."""
    answers = [images.dra_answer(service, on) for service in images.services_of(provider_slug)]
    if not answers:
        return images.DraAnswer(UNKNOWN, **images.said(gettext_noop(
            "no managed Kubernetes node software is recorded for this provider")))
    return min(answers, key=lambda answer: ("yes", "partial", UNKNOWN).index(answer.value))
