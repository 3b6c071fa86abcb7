from datetime import date
from decimal import Decimal

import pytest

from scrapers.normalize import (
    GpuResolver,
    GpuSpec,
    mib_to_gb,
    name_key,
    parse_gpu_catalog,
    per_gpu,
    positive,
    region_geography,
    to_decimal,
    to_usd,
)


def spec(slug, family, memory, form_factor="SXM", aliases=()):
    return GpuSpec(slug=slug, name=slug.upper(), vendor="nvidia", family=family, architecture="x",
                   memory_gb=Decimal(memory), memory_type="", form_factor=form_factor, aliases=tuple(aliases),
                   mig_profiles=(), mig_source_url="", source_url="https://example.org", verified_on=date(2026, 1, 1))


RESOLVER = GpuResolver([
    spec("a100-40gb", "A100", 40, "unspecified", aliases=["A100"]),
    spec("a100-80gb", "A100", 80, "unspecified", aliases=["A100-80GB"]),
    spec("a100-80gb-sxm", "A100", 80, "SXM", aliases=["A100-80GB-SXM"]),
    spec("h100", "H100", 80, "unspecified", aliases=["H100"]),
    spec("h100-nvl", "H100", 94, "NVL", aliases=["H100 NVL"]),
])


@pytest.mark.parametrize("name, memory, expected", [
    ("A100", None, "a100-40gb"),
    ("a100", Decimal("40"), "a100-40gb"),
    # SkyPilot's bare "A100" with 80 GB reported is the 80 GB card, and as unspecified as the spelling was.
    ("A100", Decimal("80"), "a100-80gb"),
    ("A100_80GB", None, "a100-80gb"),
    ("a100 80gb sxm", Decimal("80"), "a100-80gb-sxm"),
    ("H100", Decimal("80"), "h100"),
    ("H100", Decimal("93.9"), "h100-nvl"),
    # A memory no family member has is a variant the catalog does not know (an RTX 4090 with 48 GB is not an
    # RTX 4090): unknown, not the base model.
    ("H100", Decimal("200"), None),
    ("Z9000", None, None),
    ("", None, None),
])
def test_gpu_resolver_maps_spellings_and_memory(name, memory, expected):
    assert RESOLVER.resolve(name, memory) == expected


def test_name_key_ignores_case_and_separators():
    assert name_key("H100_SXM5") == name_key("h100 sxm5") == name_key("H100-SXM5") == "h100sxm5"


def test_parse_gpu_catalog_refuses_alias_owned_by_two_entries():
    data = {"gpu": [
        {"slug": "a", "name": "A", "vendor": "nvidia", "family": "A", "architecture": "x", "memory_gb": 1,
         "form_factor": "PCIe", "source_url": "https://x", "verified_on": date(2026, 1, 1), "aliases": ["dup"]},
        {"slug": "b", "name": "B", "vendor": "nvidia", "family": "B", "architecture": "x", "memory_gb": 1,
         "form_factor": "PCIe", "source_url": "https://x", "verified_on": date(2026, 1, 1), "aliases": ["DUP"]},
    ]}
    with pytest.raises(ValueError, match="alias 'DUP' already belongs to a"):
        parse_gpu_catalog(data)


def test_parse_gpu_catalog_requires_source_for_mig_profiles():
    data = {"gpu": [
        {"slug": "a", "name": "A", "vendor": "nvidia", "family": "A", "architecture": "x", "memory_gb": 1,
         "form_factor": "PCIe", "source_url": "https://x", "verified_on": date(2026, 1, 1),
         "mig_profiles": ["1g.5gb"]},
    ]}
    with pytest.raises(ValueError, match="mig_profiles need mig_source_url"):
        parse_gpu_catalog(data)


def test_to_decimal_keeps_decimal_text_exact_and_rejects_garbage():
    assert to_decimal("0.36979999999999996") == Decimal("0.36979999999999996")
    assert to_decimal(0.1) == Decimal("0.1")
    assert to_decimal("") is None and to_decimal("nan") is None
    with pytest.raises(ValueError):
        to_decimal("1,5")
    with pytest.raises(ValueError):
        to_decimal("inf")


@pytest.mark.parametrize("value", [None, "", "0", 0, "-1.5", "nan"])
def test_positive_refuses_a_missing_zero_or_negative_number_and_names_the_field(value):
    with pytest.raises(ValueError, match=r"^GPU count .* is not a positive number$"):
        positive(value, "GPU count")


def test_positive_keeps_the_number_and_passes_garbage_on_as_not_a_number():
    assert positive("2.499", "price") == Decimal("2.499")
    assert positive(8, "GPU count") == Decimal(8)
    with pytest.raises(ValueError, match="not a number"):
        positive("1,5", "price")


def test_mib_to_gb_rounds_marketed_sizes():
    assert mib_to_gb(81920) == Decimal("80.0")
    assert mib_to_gb("143771") == Decimal("140.4")


@pytest.mark.parametrize("provider, region, country, continent", [
    ("oci", "eu-frankfurt-1", "DE", "EU"),
    ("lambda", "us-east-1", "US", "NA"),
    ("lambda", "europe-central-1", "", "EU"),  # the id only names a continent
    ("vastai", "Texas, US, NA", "US", "NA"),
    ("vastai", ", CN, AS", "CN", "AS"),
    ("vastai", "US, NA", "US", "NA"),  # a host in no named state, as the SkyPilot catalog's region reads now
    ("vastai", "Ontario, CA", "", ""),  # no continent stated: not read as a country
    ("oci", "xx-nowhere-9", "", ""),
    ("runpod", "", "", "WW"),      # the source ties the price to no region: global, not unknown
    ("oci", "global", "", "WW"),   # Oracle's price list: one price for every region
])
def test_region_geography(provider, region, country, continent):
    geography = region_geography(provider, region)
    assert (geography.country, geography.continent) == (country, continent)


def test_to_usd_crosses_through_eur():
    rates = {"USD": Decimal("1.10"), "CNY": Decimal("7.70")}
    assert to_usd(Decimal("10"), "USD", rates) == Decimal("10")
    # Stored prices have 5 decimal places: a longer USD price must not differ from its stored self on every run.
    assert to_usd(Decimal("0.788424"), "USD", rates) == Decimal("0.78842")
    assert to_usd(Decimal("10"), "EUR", rates) == Decimal("11.00000")
    assert to_usd(Decimal("77"), "CNY", rates) == Decimal("11.00000")
    assert to_usd(Decimal("1"), "JPY", rates) is None


def test_per_gpu_divides_by_count_and_refuses_zero():
    assert per_gpu(Decimal("32"), Decimal("8")) == Decimal("4.00000")
    assert per_gpu(Decimal("1"), Decimal("0")) is None


@pytest.mark.parametrize("name, memory, form, expected", [
    ("H100", Decimal("80"), "sxm", None),  # no H100 SXM in this small catalog: stays the unspecified entry below
    ("A100", Decimal("80"), "sxm", "a100-80gb-sxm"),  # the form factor picks the variant
    ("A100-80GB-SXM", Decimal("80"), "pcie", "a100-80gb-sxm"),  # a spelling that states its own wins
])
def test_a_stated_form_factor_picks_the_family_member_of_that_form_factor(name, memory, form, expected):
    assert RESOLVER.resolve(name, memory, form) == (expected or RESOLVER.resolve(name, memory))


@pytest.mark.parametrize("names, expected", [
    (("gpu_8x_h100_sxm5", "H100"), "sxm"),
    (("1x-A100_PCIE-32-65536", "A100"), "pcie"),
    (("gpu_1x_h100_nvl", ""), "nvl"),
    (("H100-NVLINK",), ""),  # an NVLink bridge, not the NVL form factor
    (("a3-highgpu-8g", "H100"), ""),
    (("x_sxm", "PCIe"), ""),  # names that disagree say nothing
])
def test_form_factor_is_read_from_names_only_when_they_spell_it(names, expected):
    from scrapers.normalize import form_factor_in

    assert form_factor_in(*names) == expected
