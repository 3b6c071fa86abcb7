"""The CUDA compatibility table: NVIDIA's driver and architecture rules, combined into yes / no / unknown with a
reason, and the table covering every GPU of the catalog."""

import tomllib

import pytest

from nodesoftware import compat
from nodesoftware.compat import UNKNOWN
from scrapers.normalize import gpu_catalog


def gpu(slug: str):
    spec = next(spec for spec in gpu_catalog() if spec.slug == slug)
    return compat.accelerator(spec.slug, spec.architecture)


@pytest.mark.parametrize("cuda, branch, answer, says", [
    ("12.8", 580, "yes", "natively"),
    ("12.8", 570, "yes", "natively"),
    ("12.8", 535, "yes", "minor-version compatibility"),
    ("12.8", 470, "no", "525 or newer"),
    ("13.0", 570, "no", "580 or newer"),
    ("13.0", "580.95.05", "yes", "natively"),
    ("13.2", 580, "yes", "minor-version compatibility"),
    ("12.8", None, "unknown", "not known"),
])
def test_driver_runs_follows_nvidias_driver_table(cuda, branch, answer, says):
    verdict = compat.driver_runs(cuda, branch)
    assert verdict.answer == answer
    assert says in verdict.reason


def test_a_cuda_13_image_excludes_v100_with_the_reason_even_on_a_new_driver():
    verdict = compat.can_run("13.0", 580, gpu("v100"))
    assert verdict.answer == "no"
    assert "compute capability 7.0" in verdict.reason and "7.5" in verdict.reason
    assert any("13.0.0" in url for url in verdict.sources)


def test_cuda_12_on_v100_is_fine_until_the_driver_is_past_r580():
    assert compat.can_run("12.8", 580, gpu("v100")).answer == "yes"
    too_new = compat.can_run("12.8", 590, gpu("v100"))
    assert too_new.answer == "no" and "580 is its last branch" in too_new.reason


def test_blackwell_with_an_image_older_than_12_8_is_unknown_not_yes():
    verdict = compat.can_run("12.4", 580, gpu("b200"))
    assert verdict.answer == "unknown" and "PTX" in verdict.reason
    assert compat.can_run("12.8", 580, gpu("b200")).answer == "yes"


def test_non_nvidia_accelerators_do_not_run_cuda_and_say_what_they_run():
    verdict = compat.can_run("12.8", 580, gpu("mi300x"))
    assert verdict.answer == "no" and "gfx942" in verdict.reason and "ROCm" in verdict.reason
    assert compat.can_run("12.8", None, gpu("tpu-v5e")).answer == "no"


def test_no_beats_unknown_and_unknown_beats_yes():
    assert compat.can_run("13.0", None, gpu("v100")).answer == "no"   # the GPU rules it out whatever the driver
    assert compat.can_run("12.8", None, gpu("h100")).answer == "unknown"
    assert compat.can_run("12.8", 570, None).answer == "unknown"


def test_a_product_nvidia_does_not_list_is_answered_from_its_architecture_and_says_so():
    a10g = gpu("a10g")
    assert a10g.capability_from_architecture == "Ampere"
    verdict = compat.can_run("13.0", 580, a10g)
    assert verdict.answer == "yes" and "from its architecture" in verdict.reason
    assert compat.dtypes(a10g) == {"bf16": "yes", "fp8": "no", "fp4": "no"}


@pytest.mark.parametrize("slug, expected", [
    ("t4", {"bf16": "no", "fp8": "no", "fp4": "no"}),
    ("a100", {"bf16": "yes", "fp8": "no", "fp4": "no"}),
    ("l4", {"bf16": "yes", "fp8": "yes", "fp4": "no"}),
    ("h100-sxm", {"bf16": "yes", "fp8": "yes", "fp4": "no"}),
    ("b200", {"bf16": "yes", "fp8": "yes", "fp4": "yes"}),
    ("rtx-pro-6000-server", {"bf16": "yes", "fp8": "yes", "fp4": "partial"}),
])
def test_dtypes_follow_compute_capability(slug, expected):
    assert compat.dtypes(gpu(slug)) == expected


@pytest.mark.parametrize("text", ["12", "12.x", "latest", "", "12.8.1"])
def test_unparseable_cuda_versions_raise_naming_the_text(text):
    with pytest.raises(ValueError, match="CUDA version"):
        compat.can_run(text, 580, gpu("h100"))


def test_every_gpu_of_the_catalog_has_a_compute_capability_or_a_runtime():
    """Unless the catalog says no source states its architecture (AWS's T4G and Radeon Pro V520): then every CUDA
    question about it is answered unknown, never guessed from a sibling."""
    missing = [spec.slug for spec in gpu_catalog()
               if compat.accelerator(spec.slug, spec.architecture) is None and spec.architecture != "not stated"]
    assert not missing
    unstated = [spec.slug for spec in gpu_catalog() if spec.architecture == "not stated"]
    assert unstated and all(compat.accelerator(slug, "not stated") is None for slug in unstated)
    assert {compat.gpu_runs("12.4", compat.accelerator(slug, "not stated")).answer for slug in unstated} == {UNKNOWN}


def test_the_table_names_only_catalog_gpus():
    slugs = {spec.slug for spec in gpu_catalog()}
    data = compat.table()
    assert not (set(data.nvidia) | set(data.other)) - slugs


def test_the_loader_refuses_a_row_without_a_declared_source():
    data = tomllib.loads(compat.CUDA_PATH.read_text())
    data["other"]["mi300x"]["source"] = "nowhere"
    with pytest.raises(compat.CompatDataError, match="other mi300x: source 'nowhere'"):
        compat.parse_table(data)


def test_the_loader_refuses_an_unparseable_version():
    data = tomllib.loads(compat.CUDA_PATH.read_text())
    data["nvidia"]["h100"] = "nine"
    with pytest.raises(compat.CompatDataError, match="nvidia h100"):
        compat.parse_table(data)
