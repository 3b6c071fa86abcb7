"""What changed in node software between two dates, from the dated data files: a node image's default NVIDIA driver
moving to another branch (or version), and a Kubernetes version leaving standard or extended support. What the
weekly digest's "Node software changed" section lists for the providers of a saved filter's offers."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta

from . import images


@dataclass(frozen=True)
class NodeSoftwareChange:
    provider: str  # provider slug
    service: str  # the service's name
    on: date
    text: str  # in English, from the data files
    source_url: str


def _k8s(version: tuple[int, int] | None) -> str | None:
    return f"{version[0]}.{version[1]}" if version else None


def _scope(release: images.Release) -> str:
    low, high = _k8s(release.k8s_min), _k8s(release.k8s_max)
    if not low and not high:
        return ""
    if low == high:
        return f" (Kubernetes {low})"
    if low and high:
        return f" (Kubernetes {low}–{high})"
    return f" (Kubernetes {low}+)" if low else f" (Kubernetes up to {high})"


def driver_changes(start: date, end: date) -> list[NodeSoftwareChange]:
    """Release rows dated in [start, end) that change the driver their Kubernetes versions got the day before."""
    found = []
    for service in images.services():
        for image in service.images:
            for release in image.releases:
                if not start <= release.since < end:
                    continue
                k8s = _k8s(release.k8s_min) or _k8s(release.k8s_max)
                before = images.driver_on(image, k8s, release.since - timedelta(days=1))
                old = (before.version or str(before.branch)) if before else None
                new = release.version or str(release.branch)
                if old == new or (old is None and any(
                        (earlier.version or str(earlier.branch)) == new
                        for earlier in image.releases if earlier.since < release.since)):
                    continue  # the same driver, only reaching more Kubernetes versions
                scope = _scope(release)
                text = (f"{image.name}: NVIDIA driver {old} -> {new}{scope}" if old
                        else f"{image.name}: NVIDIA driver {new}{scope}")
                found.append(NodeSoftwareChange(service.provider, service.name, release.since, text,
                                                release.source_url))
    return sorted(found, key=lambda change: (change.on, change.provider, change.text))


def support_ends(start: date, end: date) -> list[NodeSoftwareChange]:
    """Kubernetes versions whose standard or extended support ends in [start, end)."""
    found = []
    for service in images.services():
        for release in service.kubernetes:
            for day, kind in ((release.standard_end, "standard"), (release.extended_end, "extended")):
                if day is not None and start <= day < end:
                    found.append(NodeSoftwareChange(service.provider, service.name, day,
                                                    f"Kubernetes {release.name}: end of {kind} support",
                                                    service.calendar_url))
    return sorted(found, key=lambda change: (change.on, change.provider, change.text))


def changes_between(start: date, end: date) -> list[NodeSoftwareChange]:
    return sorted(driver_changes(start, end) + support_ends(start, end),
                  key=lambda change: (change.on, change.provider, change.text))
