from django.test import Client


def test_the_offers_page_links_each_export_with_its_filters(machines):
    page = Client().get("/?provider=gcp").content.decode()
    for tool in ("opencost", "kueue", "skypilot"):
        assert f'href="/api/v1/exports/{tool}/?provider=gcp"' in page
