"""providers.coverage and `manage.py kubernetes_coverage`: unknown shares counted per (provider, machine type), a type
in many regions counting once, and per offer; the fact files' types no offer has and the reverse; the sources page
shows both."""

from io import StringIO

import pytest
from django.core.management import call_command

from providers.coverage import kubernetes_coverage
from tests.api.conftest import capabilities, gpu, instance_facts, offer
from tests.factories import DataSourceFactory, ProviderFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def cloud():
    h100 = gpu("h100", "NVIDIA H100", "nvidia", "H100", "80", mig=["1g.10gb"])
    provider = ProviderFactory(slug="aws", name="AWS")
    capabilities(provider, offering="managed", mig="yes", efa="yes")
    source = DataSourceFactory(slug="aws-src", provider=provider)
    for region in ("r1", "r2", "r3"):  # one machine type in three regions
        offer("p5.48xlarge", provider, source, h100, count="8", price="90", region=region, form_factor="sxm")
    offer("g9.xlarge", provider, source, h100, count="1", price="2")
    instance_facts(provider, {"p5.48xlarge": {"managed_node": "yes", "fabric": "infiniband"},
                              "p9.retired": {"managed_node": "yes"}})
    return provider


def test_shares_count_a_machine_type_once_and_every_offer(cloud):
    [aws] = kubernetes_coverage(provider_slugs=["aws"])
    assert (aws.managed_node_types.known, aws.managed_node_types.total) == (1, 2)
    assert (aws.managed_node_offers.known, aws.managed_node_offers.total) == (3, 4)
    assert (aws.fabric_class_types.known, aws.fabric_class_types.total) == (1, 1)  # only p5 has 4+ GPUs
    assert (aws.form_factor_types.known, aws.form_factor_types.total) == (1, 2)
    assert aws.question_types["managed_node"].percent_unknown == 50.0
    assert aws.facts_without_offers == ["p9.retired"] and aws.offers_without_facts == ["g9.xlarge"]


def test_the_command_reports_the_targets(cloud):
    out = StringIO()
    call_command("kubernetes_coverage", stdout=out)
    text = out.getvalue()
    assert "aws | 1/2 (50.0%) / 3/4 (75.0%) | 1/1 (100.0%) / 3/3 (100.0%) | 1/2 (50.0%) / 3/4 (75.0%)" in text
    assert "1 fact types no offer has ['p9.retired']" in text


def test_the_sources_page_shows_unknown_shares_and_type_mismatches(client, cloud):
    text = client.get("/sources/").content.decode()
    assert 'id="unknown"' in text and "50.0%" in text
    assert "<code>p9.retired</code>" in text and "<code>g9.xlarge</code>" in text
