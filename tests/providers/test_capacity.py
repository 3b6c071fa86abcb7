"""How a buyer gets the machines (issue #37): providers/data/capacity.toml's sourced ways, on the provider page and in
the API's provider detail, in both languages; a provider without entries says "not researched yet", never "none"."""

from datetime import date

import pytest

from providers import capacity
from providers.curated import load_providers
from tests.ui import builders


def test_the_shipped_file_names_known_providers_and_each_way_is_sourced_dated_and_written_in_both_languages():
    ways = capacity.load()
    slugs = {record.slug for record in load_providers()}
    assert set(ways) <= slugs
    assert {way.kind for way in ways["aws"]} == {"quota", "reservation", "capacity_block"}
    assert {way.kind for way in ways["gcp"]} == {"reservation", "capacity_block", "queued"}
    assert {way.kind for way in ways["azure"]} >= {"quota"} and [way.kind for way in ways["coreweave"]] == ["quota"]
    for way in (way for provider in ways.values() for way in provider):
        assert way.source_url.startswith("https://") and way.verified_on <= date.today()
        assert way.detail and way.detail_zh and way.name_zh


@pytest.mark.parametrize(("text", "problem"), [
    ('[[ways]]\nprovider = "x"\nkind = "lottery"\nname = "n"\nname_zh = "n"\ndetail = "d"\ndetail_zh = "d"\n'
     'source_url = "https://e.example"\nverified_on = 2026-12-05\n', "kind 'lottery'"),
    ('[[ways]]\nprovider = "x"\nkind = "queued"\nname = "n"\nname_zh = "n"\ndetail = "d"\ndetail_zh = "d"\n'
     'source_url = "http://e.example"\nverified_on = 2026-12-05\n', "https source_url"),
    ('[[ways]]\nprovider = "x"\nkind = "queued"\nname = "n"\n', "missing"),
])
def test_an_unsourced_or_unknown_way_is_refused_naming_the_entry(tmp_path, text, problem):
    path = tmp_path / "capacity.toml"
    path.write_text(text)
    with pytest.raises(capacity.CapacityFileError, match=problem):
        capacity.load(path)


@pytest.mark.django_db
def test_the_provider_page_and_api_show_the_ways_with_sources_and_a_provider_without_says_not_researched(client):
    builders.provider("aws", "Amazon Web Services", kind="hyperscaler", caps={"offering": "managed"})
    builders.provider("acme", "Acme Cloud", caps={"offering": "managed"})
    html = client.get("/providers/aws/").content.decode()
    section = html[html.index('id="capacity-title"'):]
    section = section[:section.index("</section>")]
    assert "<strong>EC2 Capacity Blocks for ML</strong> <small>(GPU block booked for a date)</small>" in section
    assert 'href="https://docs.aws.amazon.com/eks/latest/userguide/capacity-blocks-mng.html"' in section
    zh = client.get("/zh-hans/providers/aws/", follow=True).content.decode()
    assert "EC2 机器学习容量块" in zh and "按日期预订的 GPU 容量块" in zh
    other = client.get("/providers/acme/").content.decode()
    assert "Not researched yet: whether Acme Cloud offers capacity reservations" in other
    api = client.get("/api/v1/providers/aws/").json()["capacity"]
    assert [(way["kind"], way["name"]) for way in api] == [  # in the order a buyer meets them: the quota first
        ("quota", "EC2 On-Demand instance quotas"), ("reservation", "EC2 On-Demand Capacity Reservations"),
        ("capacity_block", "EC2 Capacity Blocks for ML")]
    assert api[0]["kind_label"] == "Quota to raise before launching"
    assert api[1]["verified_on"] == "2026-12-05" and api[1]["source_url"].startswith("https://docs.aws.amazon.com/")
    assert client.get("/api/v1/providers/acme/").json()["capacity"] == []
