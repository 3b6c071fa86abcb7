"""The GPU catalog and the one table of GPU names: coverage of the bundled data, and its invariants."""

from collections import Counter

from scrapers import registry
from scrapers.normalize import default_gpu_resolver, gpu_catalog

# Spellings in the bundled recordings that the catalog deliberately leaves unknown, with why (reviewed 2026-12-05):
# RTX4090 with 48 GB per GPU (one Vast.ai host): not NVIDIA's RTX 4090 (24 GB), and no vendor page for it.
# (M4000, P4000 and tpu-v2 were here until 2026-12-05: Paperspace's and Google's own pages now give their memory; A800
# too: NVIDIA's MIG partitioner configures the A800 80GB as the A100 80GB.)
KNOWN_UNMAPPED = {"RTX4090"}


def test_catalog_has_the_accelerators_users_ask_for():
    specs = {spec.slug: spec for spec in gpu_catalog()}
    assert len(specs) >= 25
    families = {spec.family for spec in specs.values()}
    for family in ("T4", "L4", "A10", "L40S", "A100", "H100", "H200", "B200", "GB200", "V100", "RTX 4090",
                   "MI300X", "Gaudi 3"):
        assert any(f.replace(" ", "").lower() == family.replace(" ", "").lower() for f in families), family
    vendors = {spec.vendor for spec in specs.values()}
    assert {"nvidia", "amd", "intel"} <= vendors


def test_mig_profiles_match_nvidia_memory_sizes():
    specs = {spec.slug: spec for spec in gpu_catalog()}
    h100 = specs["h100-sxm"]
    assert "1g.10gb" in h100.mig_profiles and "7g.80gb" in h100.mig_profiles
    assert specs["a100"].mig_profiles[0] == "1g.5gb"
    assert specs["t4"].mig_profiles == ()
    for spec in specs.values():
        for profile in spec.mig_profiles:
            slices, memory = profile.split(".")
            assert slices.endswith("g") and 1 <= int(slices[:-1]) <= 7, (spec.slug, profile)
            assert float(memory.removesuffix("gb")) <= float(spec.memory_gb) + 1, (spec.slug, profile)


def test_every_gpu_name_in_the_bundled_data_resolves_or_is_reported_unknown():
    resolver = default_gpu_resolver()
    unresolved: Counter = Counter()
    resolved = 0
    for slug in registry.SOURCES:
        for offer in registry.make_client(slug, offline=True).fetch().offers:
            memory = offer.gpu_memory_gb
            if memory is not None and offer.gpu_fraction:
                memory = memory / offer.gpu_fraction  # a slice's memory; the model is named by a whole GPU's
            if resolver.resolve(offer.gpu_name, memory) is None:
                unresolved[offer.gpu_name] += 1
            else:
                resolved += 1
    assert set(unresolved) == KNOWN_UNMAPPED, f"new unmapped GPU names: {set(unresolved) - KNOWN_UNMAPPED}"
    assert resolved > 20 * sum(unresolved.values())
