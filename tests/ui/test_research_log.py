"""A curated answer's research rounds are a log, not its reason (#42 item 1): the matrix, compare and provider pages
show the reason; the sources page lists every round with its day, in both languages."""

import pytest

from providers.capabilities import research_split
from providers.models import Capability
from tests.ui import builders

pytestmark = pytest.mark.django_db

LOGGED = ("Hetzner's GPU pages name no fabric. Not established. (Round 4, 2026-12-02) "
          "Round 5 (2026-12-02): the GPU matrix page is still not in the index. "
          "Round 6 lead only (2026-12-03): a forum post mentions RoCE.")


def test_the_reason_is_the_text_before_the_rounds_and_each_round_is_an_entry():
    reason, entries = research_split(LOGGED)
    assert reason == "Hetzner's GPU pages name no fabric."
    assert [(e.round, e.lead_only, e.day) for e in entries] == [(5, False, "2026-12-02"), (6, True, "2026-12-03")]
    assert entries[1].text == "a forum post mentions RoCE."
    # All log and no reason: the newest round is the reason; "Not established: ..." reads "Unknown: ...".
    assert research_split("Round 2 (2026-12-02): read the CLI. Round 3: read the API.")[0] == "read the API."
    assert research_split("Not established: no page found.")[0] == "Unknown: no page found."
    assert research_split("Plain reason.") == ("Plain reason.", [])


def test_cells_show_the_reason_and_the_sources_page_the_rounds(client):
    data = builders.catalog()
    Capability.objects.filter(provider=data["acme"], key="mig").update(detail=LOGGED)
    for url in ("/providers/", "/providers/acme/", "/compare/?provider=acme&provider=dearco"):
        html = client.get(url).content.decode()
        assert "Hetzner&#x27;s GPU pages name no fabric." in html, url
        assert "Round 5" not in html and "Not established" not in html and "forum post" not in html, url
    sources = builders.shown(client.get("/sources/").content.decode())
    assert "Round 5, 2026-12-02: the GPU matrix page is still not in the index." in sources
    assert "Round 6, 2026-12-03 (a lead only): a forum post mentions RoCE." in sources
    client.cookies["django_language"] = "zh-hans"
    chinese = builders.shown(client.get("/sources/", follow=True).content.decode())
    assert "第 5 轮，2026年12月2日: the GPU matrix page is still not in the index." in chinese
