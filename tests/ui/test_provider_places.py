"""A provider's page says where our sources list its offers, and names the continents where they list none, so a
filter by continent that finds none of its machines is not read as "it sells none there"."""

import pytest

from tests.ui import builders

pytestmark = pytest.mark.django_db


@pytest.fixture
def provider():
    gpu = builders.gpu()
    prov = builders.provider("azure", "Microsoft Azure", name_zh="微软 Azure")
    src = builders.source(prov)
    builders.offer(prov, src, gpu, "nd-h100", "6.98", region="eastus")
    builders.offer(prov, src, gpu, "nd-h100", "7.10", region="westus2")
    builders.offer(prov, src, gpu, "nd-h100", "8.20", region="westeurope", country="NL", continent="EU")
    builders.offer(prov, src, gpu, "nd-h100", "9.00", region="japaneast", country="JP", continent="AS",
                   is_active=False)  # no longer listed: not a place of its offers
    return prov


def test_the_page_lists_continents_with_offers_and_names_those_without(client, provider):
    html = " ".join(client.get("/providers/azure/").content.decode().split())
    assert "Where our sources list its offers: North America (2 regions) · Europe (1 region)." in html
    assert ("None in Africa, Asia, Oceania, South America: our sources list none there, which does not mean the "
            "provider sells none.") in html


def test_the_same_in_chinese(client, provider):
    html = " ".join(client.get("/zh-hans/providers/azure/").content.decode().split())
    assert "我们的来源列出其报价的地区： 北美洲 (2 个区域) · 欧洲 (1 个区域)。 非洲" in html
    assert "非洲、亚洲、大洋洲、南美洲：我们的来源未列出其报价" in html
