"""The HTTP contract of every route as the production server serves it: gunicorn with the Makefile's SERVE_ARGS
(gthread, keep-alive) over the bundled snapshot in the test database. HEAD answers carry GET's headers and no body,
so the next request on the same kept-alive connection is read as a request, not as the rest of a body."""

from __future__ import annotations

import http.client
import os
import re
from pathlib import Path

import pytest
from django.db import connection
from django.urls import URLPattern, URLResolver, get_resolver

from providers.models import GpuModel, KubernetesProfile, Offer, Provider
from providers.snapshot import snapshot_load
from tests.served import served_like_make_run

ROOT = Path(__file__).resolve().parents[2]


def route_patterns(resolver=None, prefix: str = ""):
    """Every URL pattern of the site except the admin's (Django's own, and behind a login)."""
    for pattern in (resolver or get_resolver()).url_patterns:
        if isinstance(pattern, URLResolver):
            if str(pattern.pattern) != "admin/":
                yield from route_patterns(pattern, prefix + str(pattern.pattern))
        elif isinstance(pattern, URLPattern):
            yield prefix + str(pattern.pattern)


def example_paths() -> list[str]:
    """One real path per route, its parameters taken from the loaded data."""
    offer = Offer.objects.filter(is_active=True).order_by("id").first()
    values = {
        "pk": offer.id, "offer_id": offer.id, "profile_id": KubernetesProfile.objects.order_by("id").first().id,
        "token": "not-a-token",
    }
    paths = []
    for route in route_patterns():
        slug = (GpuModel.objects.order_by("slug").first().slug if "gpus/" in route else
                Provider.objects.order_by("slug").first().slug if "providers/" in route else "kubernetes")
        path = re.sub(r"<(?:\w+:)?(\w+)>", lambda m, slug=slug: str(values.get(m.group(1), slug)), route)
        paths.append("/" + path + ("?providers=aws,gcp" if path.endswith("compare/") else ""))
    return paths


@pytest.mark.slow
@pytest.mark.services
def test_head_then_get_on_one_kept_alive_connection_works_on_every_route(transactional_db):
    snapshot_load()
    paths = example_paths()
    database = connection.settings_dict
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "comparator.settings.local",
           "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost", "API_ANON_RATE": "off",
           "DATABASE_URL": f"postgres://{database['USER']}@{database['HOST']}:{database['PORT']}/{database['NAME']}"}
    with served_like_make_run(env) as port:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        checked = []
        for path in paths:
            for headers in ({}, {"Accept-Encoding": "gzip"}):
                conn.request("HEAD", path, headers=headers)
                head = conn.getresponse()
                assert head.read() == b""
                conn.request("GET", path, headers=headers)
                get = conn.getresponse()
                body = get.read()
                assert head.status == get.status, (path, head.status, get.status)
                assert get.status < 500, (path, body[:300])
                assert int(get.getheader("Content-Length", len(body))) == len(body)
                if get.getheader("Content-Length") is not None and not headers and path.startswith("/api/") \
                        and get.status == 200:
                    # Compressed answers differ by a few bytes from one to the next (Django pads the gzip header
                    # against BREACH), and some pages by a relative time, so lengths are compared on the API's
                    # uncompressed answers.
                    assert head.getheader("Content-Length") == get.getheader("Content-Length"), path
                assert head.getheader("Content-Type") == get.getheader("Content-Type"), path
                checked.append(conn.sock)
        assert all(sock is checked[0] for sock in checked)  # one connection throughout: nothing closed it
        conn.close()
    assert len(paths) >= 30
