"""Node software as plain data for the API and the pages: one provider's services (node images with the driver
they install today and its dated history, Kubernetes versions with support dates, DRA) and stacks, and one offer's
GPU (compute capability, dtypes, or runtime) with the driver its default node image gets. JSON-ready values only
(strings, numbers, booleans, ISO dates), so the API and the templates show the same thing."""

from __future__ import annotations

from datetime import date

from . import compat, fit, images, read_toml, stacks

DRIVER_WAYS = {
    "preinstalled": "preinstalled",
    "your_choice": "your choice",
    "you_install": "you install it",
    "operator": "installed by a GPU Operator",
}


def _release(release: images.Release | None) -> dict | None:
    if release is None:
        return None
    return {"branch": release.branch, "version": release.version or None, "since": release.since.isoformat(),
            "k8s_min": ".".join(map(str, release.k8s_min)) if release.k8s_min else None,
            "k8s_max": ".".join(map(str, release.k8s_max)) if release.k8s_max else None,
            "source_url": release.source_url}


def driver_text(image: images.NodeImage, release: images.Release | None) -> str:
    """The answer in words: a version, "preinstalled, version not published", "your choice (...)", ..."""
    if release is not None:
        shown = release.version or f"{release.branch} branch"
        prefix = "your choice; default " if image.driver == "your_choice" else ""
        return f"{prefix}{shown}"
    if image.driver == "preinstalled":
        return "preinstalled, version not published"
    if image.driver == "your_choice":
        return f"your choice ({image.choices})"
    return DRIVER_WAYS[image.driver]


def image_summary(image: images.NodeImage, on: date) -> dict:
    now = images.driver_on(image, None, on)
    return {
        "slug": image.slug, "name": image.name, "default": image.default, "gpus": list(image.gpus),
        "driver": image.driver, "driver_text": driver_text(image, now), "choices": image.choices or None,
        "choices_zh": image.choices_zh or None,
        "driver_now": _release(now),
        "history": [_release(release) for release in images.driver_history(image) if release.since <= on],
        "toolkit": image.toolkit, "device_plugin": image.device_plugin, "gpu_operator": image.gpu_operator,
        "note": image.note or None, "note_zh": image.note_zh or None,
        "source_url": image.source_url, "verified_on": image.verified_on.isoformat(),
    }


def provider_summary(provider_slug: str, on: date | None = None) -> dict:
    """Everything recorded for a provider; empty lists (not an error) when nothing is."""
    on = on or date.today()
    services = []
    for service in images.services_of(provider_slug):
        dra = images.dra_answer(service, on)
        services.append({
            "slug": service.slug, "name": service.name,
            "images": [image_summary(image, on) for image in service.images],
            "kubernetes": [{"version": release.name,
                            "released": release.released.isoformat() if release.released else None,
                            "standard_support_ends": release.standard_end.isoformat() if release.standard_end
                            else None,
                            "extended_support_ends": release.extended_end.isoformat() if release.extended_end
                            else None, "supported_today": release.supported_on(on)}
                           for release in service.kubernetes],
            "kubernetes_source_url": service.calendar_url or None,
            # None of a calendar's versions supported today: the recorded edition may be behind the service.
            "kubernetes_calendar_behind": bool(service.kubernetes) and not any(
                release.supported_on(on) for release in service.kubernetes),
            "kubernetes_listed": [f"{major}.{minor}" for major, minor in sorted(service.versions, reverse=True)],
            "kubernetes_listed_source_url": service.versions_source_url or None,
            "dra": {"value": dra.value, "reason": dra.reason, "reason_zh": dra.reason_zh,
                    "versions": list(dra.versions), "driver": dra.driver or None, "sources": list(dra.sources)},
        })
    return {
        "services": services,
        "stacks": [{"stack": answer.stack, "name": answer.name, "family": answer.family, "status": answer.status,
                    "detail": answer.detail, "detail_zh": answer.detail_zh or None, "source_url": answer.source_url,
                    "verified_on": answer.verified_on.isoformat()} for answer in stacks.stacks_of(provider_slug)],
    }


def accelerator_summary(gpu_slug: str, architecture: str = "") -> dict:
    gpu = compat.accelerator(gpu_slug, architecture)
    if gpu is None:
        return {"known": False}
    data = compat.table()
    if not gpu.is_cuda:
        return {"known": True, "runtime": gpu.runtime, "target": gpu.target,
                "source_url": data.sources[gpu.source].url}
    assert gpu.compute_capability is not None
    return {"known": True, "runtime": "CUDA", "compute_capability": compat.shown(gpu.compute_capability),
            "from_architecture": gpu.capability_from_architecture or None, "dtypes": compat.dtypes(gpu),
            "source_url": data.sources["cuda_gpus"].url, "dtypes_source_url": data.sources["dtypes"].url}


def offer_summary(provider_slug: str, gpu_slug: str | None, architecture: str = "", *, cuda: str | None = None,
                  k8s: str | None = None, on: date | None = None) -> dict:
    """The offer's GPU and, for its provider's managed Kubernetes, the default node image it gets and its driver;
    with `cuda` (and `k8s`), whether that image runs it (`needs_image` when only another image does)."""
    if gpu_slug is None:
        return {"gpu": {"known": False}, "node": None}
    node = fit.node_fit(provider_slug, gpu_slug, architecture, cuda=cuda, k8s=k8s, on=on)
    return {
        "gpu": accelerator_summary(gpu_slug, architecture),
        # without a CUDA version there is no question to answer: only the image and its driver
        "node": {"answer": node.answer if cuda else None, "reason": node.reason if cuda else None,
                 "service": node.service or None,
                 "image": node.image or None, "needs_image": node.needs_image, "driver_branch": node.driver_branch,
                 "cuda": cuda, "k8s_version": k8s, "sources": list(node.sources)},
    }


def data_check(*, providers: set[str], gpus: set[str]) -> dict[str, int]:
    """Read every node-software data file strictly, checking provider and GPU slugs against the ones given (the
    curated providers, the GPU catalog); raises the loaders' errors, which name the file and row. What
    `manage.py load_snapshot` runs, so a broken file stops a deploy instead of a page."""
    table = compat.table()
    unknown = (set(table.nvidia) | set(table.other)) - gpus
    if unknown:
        raise compat.CompatDataError(f"cuda.toml: GPUs {sorted(unknown)} are not in the GPU catalog")
    services = images.parse_images(read_toml(images.IMAGES_PATH), providers=providers, gpus=gpus)
    answers = stacks.parse_stacks(read_toml(stacks.STACKS_PATH), providers=providers)
    return {"services": len(services), "node images": sum(len(service.images) for service in services),
            "driver releases": sum(len(image.releases) for service in services for image in service.images),
            "stack answers": len(answers)}
