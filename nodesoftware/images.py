"""GPU node images of managed Kubernetes services (nodesoftware/data/node_images.toml): which NVIDIA driver each
installs, for which Kubernetes versions, since when, and what else comes preinstalled.

`driver_on(image, k8s_version, on)` answers "which driver branch does a node of this image get?" from the dated
history; `image_for(service, gpu_slug)` picks the image a GPU node gets by default (an image listing the GPU, such as
AKS's GRID image for A10 sizes, wins over the general one). A preinstalled driver with no published version has no
history: its answer is "preinstalled, version not published", which is known, and only the branch is unknown.

Read strictly like providers/curated.py: an unknown key, value, provider or date stops the load naming the row.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from functools import cache
from pathlib import Path

import yaml
from django.utils import translation
from django.utils.translation import gettext_noop

from . import read_toml
from .compat import parse_cuda_version

IMAGES_PATH = Path(__file__).resolve().parent / "data" / "node_images.toml"

DRIVER_WAYS = {"preinstalled", "your_choice", "you_install", "operator"}
TRISTATE = {"yes", "no", "unknown"}
OPERATOR_WAYS = {"driver_disabled", "provider_managed", "full", "unknown"}
SLUG_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
SERVICE_FIELDS = {"slug", "provider", "name", "calendar", "versions", "versions_source_url", "dra_driver",
                  "dra_driver_zh", "dra_status", "dra_source_url", "image"}
DRA_STATUSES = {"documented", "preview"}
DRA_GA = (1, 34)  # resource.k8s.io v1 served by default from Kubernetes 1.34 (DRA GA)
CALENDARS_DIR = IMAGES_PATH.parent / "k8s_calendars"
IMAGE_FIELDS = {"slug", "name", "default", "gpus", "driver", "choices", "choices_zh", "toolkit", "device_plugin",
                "gpu_operator", "note", "note_zh", "source_url", "verified_on", "release"}
RELEASE_FIELDS = {"since", "branch", "version", "k8s_min", "k8s_max", "source_url"}


class ImageDataError(ValueError):
    """node_images.toml breaks the rules; the message names the row and the problem."""


@dataclass(frozen=True)
class Release:
    since: date
    branch: int
    version: str
    k8s_min: tuple[int, int] | None
    k8s_max: tuple[int, int] | None
    source_url: str

    def covers(self, k8s_version: tuple[int, int] | None) -> bool:
        """Without a Kubernetes version: the rows for new clusters (no upper bound)."""
        if k8s_version is None:
            return self.k8s_max is None
        return ((self.k8s_min is None or self.k8s_min <= k8s_version)
                and (self.k8s_max is None or k8s_version <= self.k8s_max))


@dataclass(frozen=True)
class NodeImage:
    service: str
    provider: str
    slug: str
    name: str
    default: bool
    gpus: tuple[str, ...]
    driver: str
    choices: str
    toolkit: str
    device_plugin: str
    gpu_operator: str
    note: str
    note_zh: str
    source_url: str
    verified_on: date
    releases: tuple[Release, ...]
    choices_zh: str = ""  # `choices` in Simplified Chinese, for the Chinese pages

    def applies_to(self, gpu_slug: str) -> bool:
        return not self.gpus or gpu_slug in self.gpus


@dataclass(frozen=True)
class KubernetesRelease:
    """One Kubernetes minor version of a service's calendar: out on `released` (None: the source states no date),
    standard support until `standard_end` (None: no end announced yet), extended support (where the service sells
    it) until `extended_end`."""

    version: tuple[int, int]
    released: date | None
    standard_end: date | None
    extended_end: date | None

    @property
    def name(self) -> str:
        return f"{self.version[0]}.{self.version[1]}"

    def supported_on(self, on: date) -> bool:
        end = self.extended_end or self.standard_end
        return (self.released is None or self.released <= on) and (end is None or on <= end)


@dataclass(frozen=True)
class Service:
    slug: str
    provider: str
    name: str
    images: tuple[NodeImage, ...]
    calendar: str = ""
    calendar_url: str = ""
    kubernetes: tuple[KubernetesRelease, ...] = ()
    dra_driver: str = ""
    dra_status: str = ""
    dra_source_url: str = ""
    # Without a calendar: the versions the provider's docs list as supported on the day they were read.
    versions: tuple[tuple[int, int], ...] = ()
    versions_source_url: str = ""
    dra_driver_zh: str = ""  # `dra_driver` in Simplified Chinese, for the Chinese pages

    def offers_kubernetes(self, version: str, on: date | None = None) -> bool | None:
        """True/False from the calendar; None (unknown) when the service has no recorded calendar or the version is
        newer than any it lists."""
        wanted = parse_cuda_version(version)
        if not self.kubernetes:
            if not self.versions or wanted > max(self.versions):
                return None
            return wanted in self.versions
        on = on or date.today()
        if wanted > self.kubernetes[0].version:
            return None  # newer than the recorded calendar knows: it may simply be behind
        return any(release.version == wanted and release.supported_on(on) for release in self.kubernetes)


@dataclass(frozen=True)
class DraAnswer:
    """yes: the service offers a Kubernetes version serving resource.k8s.io by default (1.34+) AND documents a DRA
    driver for its GPU nodes; partial: one of the two, with the reason; unknown: nothing recorded. `reason_zh`: the
    reason in Simplified Chinese."""

    value: str
    reason: str
    versions: tuple[str, ...] = ()
    driver: str = ""
    sources: tuple[str, ...] = ()
    reason_zh: str = ""


def said(text: str, *, driver: str = "", driver_zh: str = "", **values) -> dict[str, str]:
    """`text` (a gettext_noop'd sentence) with `values`, as `reason` in English and `reason_zh` through the Chinese
    catalog; `{driver}` is the service's DRA driver in each language."""
    with translation.override("zh-hans"):
        chinese = translation.gettext(text).format(driver=driver_zh or driver, **values)
    return {"reason": text.format(driver=driver, **values), "reason_zh": chinese}


def dra_answer(service: Service, on: date | None = None) -> DraAnswer:
    on = on or date.today()
    versions = tuple(release.name for release in service.kubernetes
                     if release.version >= DRA_GA and release.supported_on(on))
    versions += tuple(f"{major}.{minor}" for major, minor in sorted(service.versions, reverse=True)
                      if (major, minor) >= DRA_GA)
    sources = tuple(url for url in (service.dra_source_url, service.calendar_url, service.versions_source_url) if url)
    driver = {"driver": service.dra_driver, "driver_zh": service.dra_driver_zh}
    if not service.kubernetes and not service.versions and not service.dra_status:
        return DraAnswer("unknown", **said(gettext_noop(
            "no Kubernetes calendar and no DRA driver recorded for this service")))
    if not service.kubernetes and not service.versions:
        return DraAnswer("partial", driver=service.dra_driver, sources=sources, **said(gettext_noop(
            "no Kubernetes calendar recorded, so no version is known to serve DRA")))
    if not versions:
        newest = service.kubernetes[0].name if service.kubernetes else ".".join(map(str, max(service.versions)))
        return DraAnswer("partial", driver=service.dra_driver, sources=sources, **said(gettext_noop(
            "the recorded versions include no Kubernetes 1.34 or newer (DRA served by default) today; the newest is "
            "{newest}"), newest=newest))
    listed = ", ".join(versions)
    if service.dra_status == "documented":
        return DraAnswer("yes", versions=versions, driver=service.dra_driver, sources=sources, **said(gettext_noop(
            "Kubernetes {versions} serve DRA; {driver}"), versions=listed, **driver))
    if service.dra_status == "preview":
        return DraAnswer("partial", versions=versions, driver=service.dra_driver, sources=sources, **said(
            gettext_noop("Kubernetes {versions} serve DRA, but {driver}"), versions=listed, **driver))
    return DraAnswer("partial", versions=versions, driver=service.dra_driver, sources=sources, **said(gettext_noop(
        "Kubernetes {versions} serve DRA, but no DRA driver for GPU nodes is documented"), versions=listed))


def parse_calendar(data: dict, origin: str) -> tuple[KubernetesRelease, ...]:
    """An endoflife.date `releases` list: releaseCycle, releaseDate (may be absent where the source states none), eol
    (end of standard support; false: none announced yet), optional eoes (end of extended support)."""
    rows = []
    for row in data.get("releases") or []:
        where = f"{origin}: release {row.get('releaseCycle')!r}"
        try:
            version = parse_cuda_version(row.get("releaseCycle"))
        except ValueError as exc:
            raise ImageDataError(f"{where}: not a Kubernetes version") from exc
        released, end = row.get("releaseDate"), row.get("eol")
        if not (released is None or isinstance(released, date)) or not (end is False or isinstance(end, date)):
            raise ImageDataError(f"{where}: releaseDate must be a date (or absent), eol a date or false")
        extended = row.get("eoes")
        if extended is not None and (not isinstance(extended, date) or end is False or extended < end):
            raise ImageDataError(f"{where}: eoes must be a date on or after eol")
        if released is not None and end and end < released:
            raise ImageDataError(f"{where}: eol before releaseDate")
        rows.append(KubernetesRelease(version, released, end or None, extended))
    if not rows:
        raise ImageDataError(f"{origin}: no releases")
    return tuple(sorted(rows, key=lambda release: release.version, reverse=True))


def calendar_url(name: str) -> str:
    """The original the recording names in its header (the endoflife.date file at a commit, or the provider's page)."""
    for line in (CALENDARS_DIR / f"{name}.yaml").read_text().splitlines():
        if line.startswith("# https://"):
            return line[2:].split(" ")[0]
    raise ImageDataError(f"k8s_calendars/{name}.yaml: its header names no source URL")


def load_calendar(name: str) -> tuple[KubernetesRelease, ...]:
    path = CALENDARS_DIR / f"{name}.yaml"
    if not path.exists():
        raise ImageDataError(f"calendar {name!r}: no file k8s_calendars/{name}.yaml")
    return parse_calendar(yaml.safe_load(path.read_text()), f"k8s_calendars/{name}.yaml")


class _Checker:
    """The shared context of one validation pass: where the file came from, the catalogs to check against, today."""

    def __init__(self, origin: str, providers: set[str] | None, gpus: set[str] | None, today: date):
        self.origin, self.providers, self.gpus, self.today = origin, providers, gpus, today
        self.seen: set[str] = set()

    def fail(self, where: str, message: str) -> ImageDataError:
        return ImageDataError(f"{self.origin}: {where}: {message}")

    def k8s(self, value, where):
        if value is None:
            return None
        try:
            return parse_cuda_version(value)  # same major.minor shape
        except ValueError as exc:
            raise self.fail(where, f"{value!r} is not a Kubernetes version such as 1.34") from exc

    def release(self, row: dict, where: str) -> Release:
        if set(row) - RELEASE_FIELDS:
            raise self.fail(where, f"unknown fields {sorted(set(row) - RELEASE_FIELDS)}")
        if not isinstance(row.get("since"), date) or row["since"] > self.today:
            raise self.fail(where, "needs `since` as a date not in the future")
        if not isinstance(row.get("branch"), int) or not 100 <= row["branch"] <= 999:
            raise self.fail(where, "branch must be a driver branch such as 580")
        version = str(row.get("version", ""))
        if version and not version.startswith(f"{row['branch']}."):
            raise self.fail(where, f"version {version!r} is not on branch {row['branch']}")
        if not str(row.get("source_url", "")).startswith("https://"):
            raise self.fail(where, "needs an https source_url")
        return Release(row["since"], row["branch"], version, self.k8s(row.get("k8s_min"), where),
                       self.k8s(row.get("k8s_max"), where), row["source_url"])

    def image_fields(self, image: dict, at: str) -> None:
        if set(image) - IMAGE_FIELDS:
            raise self.fail(at, f"unknown fields {sorted(set(image) - IMAGE_FIELDS)}")
        if not SLUG_RE.match(str(image.get("slug", ""))) or image["slug"] in self.seen:
            raise self.fail(at, "needs a unique slug")
        self.seen.add(image["slug"])
        for key, allowed in (("driver", DRIVER_WAYS), ("toolkit", TRISTATE), ("device_plugin", TRISTATE),
                             ("gpu_operator", OPERATOR_WAYS)):
            if image.get(key) not in allowed:
                raise self.fail(at, f"{key} {image.get(key)!r} must be one of {sorted(allowed)}")
        if not isinstance(image.get("default"), bool):
            raise self.fail(at, "default must be true or false")
        if image["driver"] == "your_choice" and not image.get("choices"):
            raise self.fail(at, "a driver the user chooses needs `choices` saying how and what the default is")
        if not str(image.get("source_url", "")).startswith("https://"):
            raise self.fail(at, "needs an https source_url")
        if not isinstance(image.get("verified_on"), date) or image["verified_on"] > self.today:
            raise self.fail(at, "needs verified_on as a date not in the future")
        unknown_gpus = set(image.get("gpus") or []) - (self.gpus if self.gpus is not None
                                                       else set(image.get("gpus") or []))
        if unknown_gpus:
            raise self.fail(at, f"gpus {sorted(unknown_gpus)} are not in the GPU catalog")

    def image(self, image: dict, service: dict, where: str) -> NodeImage:
        at = f"{where} image {image.get('slug', '?')!r}"
        self.image_fields(image, at)
        releases = [self.release(row, f"{at} release #{index + 1}")
                    for index, row in enumerate(image.get("release") or [])]
        if releases and image["driver"] == "you_install":
            raise self.fail(at, "a driver you install has no release history")
        return NodeImage(
            service=service["slug"], provider=service["provider"], slug=image["slug"], name=image["name"],
            default=image["default"], gpus=tuple(image.get("gpus") or ()), driver=image["driver"],
            choices=image.get("choices", ""), toolkit=image["toolkit"], device_plugin=image["device_plugin"],
            gpu_operator=image["gpu_operator"], note=image.get("note", ""), note_zh=image.get("note_zh", ""),
            source_url=image["source_url"], verified_on=image["verified_on"],
            releases=tuple(sorted(releases, key=lambda release: release.since)), choices_zh=image.get("choices_zh", ""))

    def service(self, service: dict) -> Service:
        where = f"service {service.get('slug', '?')!r}"
        if set(service) - SERVICE_FIELDS:
            raise self.fail(where, f"unknown fields {sorted(set(service) - SERVICE_FIELDS)}")
        if not SLUG_RE.match(str(service.get("slug", ""))) or not service.get("name"):
            raise self.fail(where, "needs a slug (lowercase, dashes) and a name")
        if self.providers is not None and service.get("provider") not in self.providers:
            raise self.fail(where, f"provider {service.get('provider')!r} is not a curated provider")
        images = [self.image(image, service, where) for image in service.get("image") or []]
        calendar = service.get("calendar", "")
        versions = tuple(self.k8s(version, where) for version in service.get("versions") or [])
        if versions and (calendar or not str(service.get("versions_source_url", "")).startswith("https://")):
            raise self.fail(where, "versions (without a calendar) need an https versions_source_url")
        dra_status = service.get("dra_status", "")
        if dra_status and (dra_status not in DRA_STATUSES or not service.get("dra_driver")
                           or not str(service.get("dra_source_url", "")).startswith("https://")):
            raise self.fail(where, f"dra_status must be one of {sorted(DRA_STATUSES)}, with dra_driver and an "
                                   "https dra_source_url")
        return Service(service["slug"], service["provider"], service["name"], tuple(images), calendar,
                       calendar_url(calendar) if calendar else "", load_calendar(calendar) if calendar else (),
                       service.get("dra_driver", ""), dra_status, service.get("dra_source_url", ""),
                       versions, service.get("versions_source_url", ""), service.get("dra_driver_zh", ""))


def parse_images(data: dict, origin: str = "node_images.toml", *, providers: set[str] | None = None,
                 gpus: set[str] | None = None, today: date | None = None) -> list[Service]:
    """Validate the file; `providers` and `gpus` (slugs) are checked when given."""
    check = _Checker(origin, providers, gpus, today or date.today())
    return [check.service(service) for service in data.get("service") or []]


@cache
def services() -> tuple[Service, ...]:
    return tuple(parse_images(read_toml(IMAGES_PATH)))


def services_of(provider_slug: str) -> list[Service]:
    return [service for service in services() if service.provider == provider_slug]


def image_for(service: Service, gpu_slug: str, *, default: bool = True) -> NodeImage | None:
    """The image a node with this GPU gets (default=True), the most specific first."""
    fitting = [image for image in service.images if image.default == default and image.applies_to(gpu_slug)]
    fitting.sort(key=lambda image: not image.gpus)
    return fitting[0] if fitting else None


def driver_on(image: NodeImage, k8s_version: str | None = None, on: date | None = None) -> Release | None:
    """The newest release row in force on `on` (today) for that Kubernetes version (or for new clusters)."""
    on = on or date.today()
    wanted = parse_cuda_version(k8s_version) if k8s_version else None
    rows = [release for release in image.releases if release.since <= on and release.covers(wanted)]
    return rows[-1] if rows else None


def driver_history(image: NodeImage, k8s_version: str | None = None) -> list[Release]:
    """The changes of branch for that Kubernetes version, oldest first: what the digest reports."""
    wanted = parse_cuda_version(k8s_version) if k8s_version else None
    changes: list[Release] = []
    for release in image.releases:
        if release.covers(wanted) and (not changes or changes[-1].branch != release.branch):
            changes.append(release)
    return changes
