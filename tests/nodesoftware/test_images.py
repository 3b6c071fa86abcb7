"""Node images: the strict loader, the dated driver history per Kubernetes version, the calendars, and the curated
history checked against the recorded first-party files it was transcribed from."""

import json
import tomllib
from datetime import date
from pathlib import Path

import pytest

from nodesoftware import images

FIXTURES = Path(__file__).parent / "fixtures"


def image(slug):
    return next(image for service in images.services() for image in service.images if image.slug == slug)


def service(slug):
    return next(service for service in images.services() if service.slug == slug)


def test_eks_al2023_default_moved_555_560_570_575_570_580():
    assert [release.branch for release in images.driver_history(image("eks-al2023-nvidia"))] == [
        555, 560, 570, 575, 570, 580]


@pytest.mark.parametrize("k8s, on, branch", [
    ("1.35", date(2026, 12, 4), 580),
    ("1.33", date(2025, 10, 26), 570),  # the day before 580 reached 1.33
    ("1.33", date(2025, 10, 27), 580),
    ("1.28", date(2026, 12, 4), 570),   # 1.28 stays pinned to 570
    ("1.30", date(2025, 7, 20), 575),
])
def test_eks_driver_follows_the_kubernetes_version_and_the_date(k8s, on, branch):
    assert images.driver_on(image("eks-al2023-nvidia"), k8s, on).branch == branch


def test_the_curated_eks_history_matches_the_recorded_ami_variables():
    default = json.loads((FIXTURES / "eks-al2023-variables-default.json").read_text())
    pinned = json.loads((FIXTURES / "eks-al2023-variables-1.28.json").read_text())
    recorded_on = date(2026, 7, 23)
    assert images.driver_on(image("eks-al2023-nvidia"), None, recorded_on).branch == int(
        default["nvidia_driver_major_version"])
    assert images.driver_on(image("eks-al2023-nvidia"), "1.28", recorded_on).branch == int(
        pinned["nvidia_driver_major_version"])


@pytest.mark.parametrize("slug, container_image", [
    ("aks-ubuntu-cuda", "aks-gpu-cuda-lts"), ("aks-ubuntu-grid", "aks-gpu-grid"),
    ("aks-ubuntu-grid-v20", "aks-gpu-grid-v20"),
])
def test_the_curated_aks_drivers_match_the_recorded_agentbaker_components(slug, container_image):
    recorded = json.loads((FIXTURES / "aks-agentbaker-gpu-images.json").read_text())["GPUContainerImages"]
    latest = next(entry["gpuVersion"]["latestVersion"] for entry in recorded
                  if entry["downloadURL"] == f"mcr.microsoft.com/aks/{container_image}:*")
    assert images.driver_on(image(slug), None, date(2026, 8, 21)).version == latest.split("-")[0]


def test_aks_gives_a10_sizes_the_grid_image_and_other_gpus_the_cuda_one():
    aks = service("aks")
    assert images.image_for(aks, "a10").slug == "aks-ubuntu-grid"
    assert images.image_for(aks, "h100").slug == "aks-ubuntu-cuda"


def test_a_preinstalled_driver_without_a_published_version_has_no_branch_but_a_known_answer():
    azure_linux = image("aks-azurelinux")
    assert azure_linux.driver == "preinstalled" and images.driver_on(azure_linux) is None


def test_calendars_say_which_kubernetes_versions_a_service_offers_on_a_date():
    eks = service("eks")
    assert eks.offers_kubernetes("1.35", date(2026, 12, 4)) is True
    assert eks.offers_kubernetes("1.29", date(2026, 12, 4)) is False  # past extended support
    assert eks.offers_kubernetes("1.99", date(2026, 12, 4)) is None   # newer than the calendar knows
    assert service("nebius-mk8s").offers_kubernetes("1.35") is None   # nothing recorded: unknown
    assert service("cks").offers_kubernetes("1.35") is True           # listed on CoreWeave's page, no dates
    assert service("cks").offers_kubernetes("1.33") is False


def test_oracles_calendar_keeps_minors_with_no_end_announced_and_ends_the_others_on_their_last_patch():
    oke = service("oke")
    today = date(2026, 12, 6)
    assert oke.offers_kubernetes("1.35", today) is True    # "supported for 30 days after 1.38.1 ... (planned)"
    assert oke.offers_kubernetes("1.34", today) is True
    assert oke.offers_kubernetes("1.33", today) is False   # 1.33.10, 1.33.1, 1.33.0 ended August 10, 2026
    assert oke.offers_kubernetes("1.33", date(2026, 8, 10)) is True
    assert oke.offers_kubernetes("1.36", date(2026, 7, 6)) is False  # 1.36.1 came out 2026-07-07 (1.36.0: a preview)
    assert oke.offers_kubernetes("1.37", today) is None    # newer than the calendar knows
    assert {release.name: release.released for release in oke.kubernetes}["1.33"] is None  # neither copy dates it


def test_digitaloceans_calendar_is_behind_today_so_its_newer_versions_stay_unknown():
    doks = service("doks")
    assert doks.offers_kubernetes("1.34", date(2026, 10, 27)) is True
    assert doks.offers_kubernetes("1.34", date(2026, 12, 6)) is False  # End of Support 27 October 2026
    assert doks.offers_kubernetes("1.35", date(2026, 12, 6)) is None   # not in the recorded edition
    from nodesoftware.summary import provider_summary

    [doks_summary] = provider_summary("digitalocean", date(2026, 12, 6))["services"]
    [oke_summary] = provider_summary("oci", date(2026, 12, 6))["services"]
    assert doks_summary["kubernetes_calendar_behind"] is True
    assert oke_summary["kubernetes_calendar_behind"] is False
    assert doks_summary["kubernetes_source_url"] == "https://docs.digitalocean.com/products/kubernetes/details/supported-releases/"
    newest = oke_summary["kubernetes"][0]
    assert newest["version"] == "1.36" and newest["standard_support_ends"] is None and newest["supported_today"]


@pytest.mark.parametrize("row, error", [
    ({"releaseCycle": "1.35", "releaseDate": date(2026, 1, 1), "eol": "soon"}, "eol a date or false"),
    ({"releaseCycle": "1.35", "releaseDate": "January", "eol": date(2027, 1, 1)}, "releaseDate must be a date"),
    ({"releaseCycle": "1.35", "eol": False, "eoes": date(2028, 1, 1)}, "eoes must be a date on or after eol"),
    ({"releaseCycle": "1.35", "releaseDate": date(2027, 1, 1), "eol": date(2026, 1, 1)}, "eol before releaseDate"),
    ({"releaseCycle": "one", "eol": False}, "not a Kubernetes version"),
])
def test_a_calendar_row_that_states_no_usable_dates_is_refused_naming_it(row, error):
    with pytest.raises(images.ImageDataError, match=error):
        images.parse_calendar({"releases": [row]}, "test.yaml")


def test_a_calendar_row_without_a_release_date_or_an_announced_end_is_read():
    [release] = images.parse_calendar({"releases": [{"releaseCycle": "1.35", "eol": False}]}, "test.yaml")
    assert release.released is None and release.standard_end is None and release.supported_on(date(2030, 1, 1))


def load(text):
    return images.parse_images(tomllib.loads(text), "test.toml", providers={"aws"}, gpus={"h100"},
                               today=date(2026, 12, 4))


GOOD = '''
[[service]]
slug = "eks"
provider = "aws"
name = "EKS"
[[service.image]]
slug = "x"
name = "X"
default = true
driver = "preinstalled"
toolkit = "yes"
device_plugin = "no"
gpu_operator = "driver_disabled"
source_url = "https://example.org/x"
verified_on = 2026-12-04
[[service.image.release]]
since = 2025-01-01
branch = 570
version = "570.1"
source_url = "https://example.org/c"
'''


def test_the_loader_accepts_a_good_file():
    assert load(GOOD)[0].images[0].releases[0].branch == 570


@pytest.mark.parametrize("change, message", [
    (('provider = "aws"', 'provider = "nope"'), "provider 'nope' is not a curated provider"),
    (('driver = "preinstalled"', 'driver = "maybe"'), "driver 'maybe' must be one of"),
    (('version = "570.1"', 'version = "580.1"'), "not on branch 570"),
    (('since = 2025-01-01', 'since = 2027-01-01'), "not in the future"),
    (('toolkit = "yes"', 'toolkit = "yes"\ncolour = "red"'), "unknown fields ['colour']"),
    (('driver = "preinstalled"', 'driver = "your_choice"'), "needs `choices`"),
])
def test_the_loader_refuses_bad_rows_naming_them(change, message):
    with pytest.raises(images.ImageDataError) as caught:
        load(GOOD.replace(*change))
    assert message in str(caught.value) and "service 'eks'" in str(caught.value)


def test_every_service_names_a_curated_provider_and_catalog_gpus():
    from scrapers.normalize import gpu_catalog
    providers = {path.stem for path in (Path(images.__file__).parent.parent / "providers" / "data"
                                        / "providers").glob("*.toml")}
    images.parse_images(tomllib.loads(images.IMAGES_PATH.read_text()), providers=providers,
                        gpus={spec.slug for spec in gpu_catalog()})


def test_dra_is_yes_only_with_a_1_34_version_offered_and_a_documented_driver():
    on = date(2026, 12, 4)
    eks = images.dra_answer(service("eks"), on)
    assert eks.value == "yes" and "1.35" in eks.versions and "NVIDIA DRA Driver" in eks.driver
    aks = images.dra_answer(service("aks"), on)
    assert aks.value == "partial" and "preview" in aks.reason  # versions yes, driver only in a preview API
    before_ga = images.dra_answer(service("eks"), date(2025, 6, 1))  # 1.34 not yet released on EKS
    assert before_ga.value == "partial" and "1.34" in before_ga.reason
    assert images.dra_answer(service("nebius-mk8s"), on).value == "unknown"
    cks = images.dra_answer(service("cks"), on)  # 1.34+ listed, no DRA driver for GPU nodes documented
    assert cks.value == "partial" and "no DRA driver" in cks.reason


def test_the_curated_bottlerocket_and_gke_installer_drivers_match_their_recorded_files():
    import re
    variant = (FIXTURES / "bottlerocket-aws-k8s-1.35-nvidia.toml").read_text()
    kmod = (FIXTURES / "bottlerocket-1.54.0-kmod-6.12-nvidia-r580.toml").read_text()
    assert '"nvidia-k8s-device-plugin"' in variant and '"nvidia-container-toolkit-k8s"' in variant
    assert image("eks-bottlerocket-nvidia").device_plugin == "yes" == image("eks-bottlerocket-nvidia").toolkit
    assert '"kmod-6.12-nvidia-r580-tesla"' in variant
    recorded = re.search(r"tesla/([\d.]+)/NVIDIA-Linux-x86_64", kmod).group(1)
    assert images.driver_on(image("eks-bottlerocket-nvidia"), "1.35", date(2026, 4, 14)).version == recorded
    installer = (FIXTURES / "gke-ubuntu-daemonset-preloaded-R570.yaml").read_text()
    recorded = re.search(r'NVIDIA_DRIVER_VERSION\n\s+value: "([\d.]+)"', installer).group(1)
    assert images.driver_on(image("gke-ubuntu-installer"), "1.35", date(2026, 6, 11)).version == recorded


def test_the_load_time_check_names_a_row_whose_provider_is_not_curated():
    from nodesoftware.summary import data_check
    from scrapers.normalize import gpu_catalog
    gpus = {spec.slug for spec in gpu_catalog()}
    providers = {path.stem for path in (Path(images.__file__).parent.parent / "providers" / "data"
                                        / "providers").glob("*.toml")}
    counts = data_check(providers=providers, gpus=gpus)
    assert counts["services"] == len(images.services()) and counts["driver releases"] > 0
    with pytest.raises(images.ImageDataError, match="provider 'azure' is not a curated provider"):
        data_check(providers=providers - {"azure"}, gpus=gpus)
