"""node_fit: the provider's default node image, its driver for the Kubernetes version, and the GPU, combined."""

from datetime import date

import pytest

from nodesoftware.fit import node_fit

TODAY = date(2026, 12, 4)


def test_cuda_13_on_eks_excludes_v100_with_the_architecture_reason():
    fit = node_fit("aws", "v100", "Volta", cuda="13.0", k8s="1.35", on=TODAY)
    assert fit.answer == "no" and "compute capability 7.0" in fit.reason and fit.image == "eks-al2023-nvidia"


def test_cuda_12_8_on_eks_1_35_runs_on_the_default_image_with_driver_580():
    fit = node_fit("aws", "h100-sxm", "Hopper", cuda="12.8", k8s="1.35", on=TODAY)
    assert (fit.answer, fit.needs_image, fit.driver_branch) == ("yes", False, 580)


def test_the_same_question_before_eks_moved_to_580_depends_on_the_date():
    fit = node_fit("aws", "h100-sxm", "Hopper", cuda="13.0", k8s="1.33", on=date(2025, 10, 1))
    assert fit.answer == "no" and "580 or newer" in fit.reason


def test_aks_a10_uses_the_grid_image_for_its_answer():
    fit = node_fit("azure", "a10", "Ampere", cuda="12.8", k8s="1.35", on=TODAY)
    assert fit.answer == "yes" and fit.image == "aks-ubuntu-grid" and fit.driver_branch == 570


def test_a_driver_of_your_choice_without_a_published_default_is_unknown_and_says_why():
    fit = node_fit("coreweave", "h100-sxm", "Hopper", cuda="12.8", on=TODAY)
    assert fit.answer == "unknown" and "your choice" in fit.reason


def test_a_fit_only_on_a_non_default_image_is_marked():
    fit = node_fit("gcp", "l4", "Ada Lovelace", cuda="12.8", k8s="1.35", on=TODAY)
    assert fit.answer == "yes" and fit.needs_image and fit.image == "gke-ubuntu-installer"


def test_a_provider_without_recorded_node_software_is_unknown_not_no():
    assert node_fit("lambda", "h100", "Hopper", cuda="12.8", on=TODAY).answer == "unknown"


def test_a_kubernetes_version_past_extended_support_is_no():
    fit = node_fit("aws", "h100-sxm", "Hopper", cuda="12.8", k8s="1.29", on=TODAY)
    assert fit.answer == "no" and "does not offer Kubernetes 1.29" in fit.reason


@pytest.mark.parametrize("cuda, k8s", [("12", None), ("12.8", "one.35"), ("latest", "1.35")])
def test_unparseable_versions_raise(cuda, k8s):
    with pytest.raises(ValueError):
        node_fit("aws", "h100", "Hopper", cuda=cuda, k8s=k8s)
