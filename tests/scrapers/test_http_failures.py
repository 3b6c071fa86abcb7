"""How every HTTP client fails when the provider's server does: one test per failure for all of them, since they
share scrapers.http (a client that caught these itself would show up here)."""

import functools

import httpx
import pytest

from scrapers import aws, ecb, registry
from scrapers.base import AuthScrapeError, TransientScrapeError
from scrapers.http import build_client


@pytest.fixture(autouse=True)
def verda_client_id(monkeypatch):
    monkeypatch.setenv("VERDA_CLIENT_ID", "test-client")  # Verda's OAuth needs an id beside the secret


# Every client that speaks HTTP: the registered sources, and those run outside the registry (the ECB's exchange
# rates; AWS's EKS price list, written but not registered yet).
CLIENTS = {
    **{slug: functools.partial(client, api_key="test-key") for slug, client in registry.SOURCES.items()
       if client.info.kind != "curated"},
    "ecb": ecb.EcbClient, "aws-eks": aws.AwsEksPriceListClient,
}
HTTP_SOURCES = sorted(CLIENTS)


def client_answering(slug, handler):
    return CLIENTS[slug](build_client(transport=httpx.MockTransport(handler)))


def read(client):
    """fetch(), with the offers read to the end: a client may hand them as a generator that reads the body as it
    goes (the SkyPilot catalogs), so a failure mid-body shows only then, as it does in offers_sync."""
    result = client.fetch()
    result.offers = list(result.offers)
    return result


def answer(status, body=b"", headers=None):
    return lambda request: httpx.Response(status, content=body, headers=headers or {})


@pytest.mark.parametrize("slug", HTTP_SOURCES)
@pytest.mark.parametrize("status", [500, 502, 503])
def test_server_errors_are_transient(slug, status):
    with pytest.raises(TransientScrapeError):
        read(client_answering(slug, answer(status, b"oops")))


@pytest.mark.parametrize("slug", HTTP_SOURCES)
def test_429_carries_retry_after(slug):
    with pytest.raises(TransientScrapeError) as caught:
        read(client_answering(slug, answer(429, b"slow down", {"Retry-After": "7"})))
    assert caught.value.retry_after == 7


@pytest.mark.parametrize("slug", HTTP_SOURCES)
@pytest.mark.parametrize("status", [401, 403])
def test_refused_credentials_fail_fast(slug, status):
    with pytest.raises(AuthScrapeError):
        read(client_answering(slug, answer(status, b"no")))


@pytest.mark.parametrize("slug", HTTP_SOURCES)
@pytest.mark.parametrize("error", [httpx.ReadTimeout, httpx.ConnectError])
def test_timeout_and_refused_connection_are_transient(slug, error):
    def fail(request):
        raise error("down", request=request)

    with pytest.raises(TransientScrapeError):
        read(client_answering(slug, fail))
