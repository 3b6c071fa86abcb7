"""The curated capability files: the loader's rules, and the real files in the repository obeying them."""

from datetime import date

import pytest

from providers.capabilities import CAPABILITIES, QUESTIONS, UNKNOWN
from providers.curated import CuratedDataError, load_providers, parse_provider

TODAY = date(2026, 11, 29)


def provider(**cells):
    return {
        "slug": "acme", "name": "Acme", "website": "https://acme.example/", "kind": "gpu_cloud",
        "headquarters": "US", "capabilities": cells,
    }


def cell(value="yes", **extra):
    return {"value": value, "source_url": "https://acme.example/docs", "verified_on": date(2026, 11, 1),
            "confidence": "documented", **extra}


def test_a_sourced_cell_is_accepted():
    record = parse_provider(provider(mig=cell()), "acme.toml", today=TODAY)
    assert record.capabilities["mig"].value == "yes"
    assert record.capabilities["mig"].source_url == "https://acme.example/docs"


@pytest.mark.parametrize("broken, message", [
    ({"source_url": ""}, "has no source_url"),
    ({"source_url": "docs.example/page"}, "has no source_url"),
    ({"verified_on": None}, "has no verified_on"),
    ({"verified_on": "2026-11-01"}, "has no verified_on"),
    ({"verified_on": date(2027, 1, 1)}, "in the future"),
    ({"confidence": "rumour"}, "confidence 'rumour'"),
    ({"value": "maybe"}, "value 'maybe' must be one of"),
    ({"colour": "blue"}, "unknown fields"),
])
def test_loader_rejects_a_cell_that_breaks_the_rules_naming_file_and_key(broken, message):
    data = cell(**{k: v for k, v in broken.items() if v is not None})
    for key, value in broken.items():
        if value is None:
            data.pop(key)
    with pytest.raises(CuratedDataError) as caught:
        parse_provider(provider(mig=data), "acme.toml", today=TODAY)
    assert "acme.toml" in str(caught.value) and "'mig'" in str(caught.value) and message in str(caught.value)


def test_unknown_needs_no_source():
    record = parse_provider(provider(mig={"value": UNKNOWN, "detail": "not documented"}), "acme.toml", today=TODAY)
    assert record.capabilities["mig"].value == UNKNOWN


def test_unknown_question_is_rejected():
    with pytest.raises(CuratedDataError, match="'gpu_teleport' is not a known question"):
        parse_provider(provider(gpu_teleport=cell()), "acme.toml", today=TODAY)


def test_paid_control_plane_needs_amount_and_currency():
    with pytest.raises(CuratedDataError, match="needs the amount"):
        parse_provider(provider(control_plane_fee=cell("paid")), "acme.toml", today=TODAY)
    with pytest.raises(CuratedDataError, match="ISO 4217"):
        parse_provider(provider(control_plane_fee=cell("paid", amount="0.10")), "acme.toml", today=TODAY)
    record = parse_provider(provider(control_plane_fee=cell("paid", amount="0.10", currency="USD")), "acme.toml",
                            today=TODAY)
    assert str(record.capabilities["control_plane_fee"].amount) == "0.10"


def test_paid_without_a_stated_amount_is_its_own_answer_and_carries_no_amount():
    record = parse_provider(provider(control_plane_fee=cell("paid_unstated")), "acme.toml", today=TODAY)
    assert (record.capabilities["control_plane_fee"].value, record.capabilities["control_plane_fee"].amount) == (
        "paid_unstated", None)
    with pytest.raises(CuratedDataError, match="must not carry an amount"):
        parse_provider(provider(control_plane_fee=cell("paid_unstated", amount="0.10", currency="USD")),
                       "acme.toml", today=TODAY)
    with pytest.raises(CuratedDataError, match="paid_unstated"):
        parse_provider(provider(control_plane_fee=cell("paid")), "acme.toml", today=TODAY)


@pytest.mark.parametrize("field, value, message", [
    ("slug", "Acme Cloud", "slug"),
    ("kind", "cloud", "kind"),
    ("headquarters", "USA", "headquarters"),
    ("website", "acme.example", "website"),
])
def test_provider_fields_are_validated(field, value, message):
    data = provider()
    data[field] = value
    with pytest.raises(CuratedDataError, match=message):
        parse_provider(data, "acme.toml", today=TODAY)


# --- the real curated files --------------------------------------------------------------------------------

RECORDS = load_providers()


def test_at_least_thirty_providers_including_the_chinese_clouds():
    slugs = {record.slug for record in RECORDS}
    assert len(slugs) >= 30
    assert {"alibaba", "tencent", "huawei", "baidu", "volcengine"} <= slugs
    assert {"aws", "gcp", "azure"} <= slugs


def test_every_provider_states_its_kubernetes_offering():
    for record in RECORDS:
        assert "offering" in record.capabilities, f"{record.slug} has no offering cell"


def test_every_published_cell_has_source_date_and_confidence():
    published = 0
    for record in RECORDS:
        for key, capability in record.capabilities.items():
            assert key in QUESTIONS
            if capability.value == UNKNOWN:
                continue
            published += 1
            assert capability.source_url.startswith(("https://", "http://")), (record.slug, key)
            assert capability.verified_on is not None, (record.slug, key)
            assert capability.confidence in {"documented", "third_party", "inferred"}, (record.slug, key)
    assert published >= 200


def test_no_inferred_yes_on_the_questions_that_cost_a_week():
    """A wrong "yes" on sharing, RDMA, scale-to-zero or spot sends a user down the wrong path: those need a source
    that says so, not an inference."""
    risky = {"mig", "mps", "time_slicing", "vendor_sharing", "infiniband", "roce", "efa", "gpudirect_tcpx",
             "scale_to_zero", "spot_nodes"}
    offenders = [
        (record.slug, key) for record in RECORDS for key, cap in record.capabilities.items()
        if key in risky and cap.value == "yes" and cap.confidence == "inferred"
    ]
    assert offenders == []


def test_cells_cite_no_local_reference_paths():
    for record in RECORDS:
        for key, capability in record.capabilities.items():
            assert "/work/" not in capability.source_url and "shared/data" not in capability.detail, (record.slug, key)


def test_questions_are_unique_and_grouped():
    keys = [question.key for question in CAPABILITIES]
    assert len(keys) == len(set(keys))


def test_a_cell_carries_its_chinese_label_and_detail():
    record = parse_provider(provider(mig=cell(label="Dynamic MIG", detail="Label the node.", label_zh="动态 MIG",
                                              detail_zh="为节点打标签。")), "acme.toml", today=TODAY)
    assert (record.capabilities["mig"].label_zh, record.capabilities["mig"].detail_zh) == ("动态 MIG", "为节点打标签。")


@pytest.mark.parametrize("broken, message", [
    ({"detail_zh": "为节点打标签。"}, "has detail_zh but no detail"),
    ({"label_zh": "动态 MIG"}, "has label_zh but no label"),
    ({"detail": "Label the node.", "detail_zh": 3}, "detail_zh must be text"),
])
def test_a_translation_needs_the_text_it_translates(broken, message):
    with pytest.raises(CuratedDataError, match=message):
        parse_provider(provider(mig=cell(**broken)), "acme.toml", today=TODAY)


def test_every_curated_label_and_detail_has_its_chinese_rendering():
    """The pages are bilingual: a new or edited cell in English only would show English on Chinese pages."""
    missing = [f"{record.slug}.{key}.{name}" for record in load_providers()
               for key, capability in record.capabilities.items()
               for name in ("label", "detail")
               if getattr(capability, name) and not getattr(capability, f"{name}_zh")]
    assert missing == []
