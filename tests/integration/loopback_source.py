"""Test-only: registers the source `loopback-lambda` in a Celery worker started by the integration tests.

The worker imports this module with `--include tests.integration.loopback_source`; it reads the loopback server's
address from LOOPBACK_BASE_URL. The client is the real SkyPilot catalog client with only its URL moved to the
loopback server, which replays the recorded Lambda catalog. Production never imports this module.
"""

import os

from scrapers import lambdalabs, registry, skypilot
from scrapers.base import SourceInfo

SLUG = "loopback-lambda"
PATH = "catalogs/v8/lambda/vms.csv"
RECORDED = skypilot.RECORDED / "skypilot" / PATH


class LoopbackLambdaClient(skypilot.SkyPilotCatalogClient):
    info = SourceInfo(slug=SLUG, provider="lambda", name="Loopback replay of the SkyPilot Lambda catalog",
                      kind="catalog", url="https://github.com/skypilot-org/skypilot-catalog")
    path = PATH

    @classmethod
    def url(cls) -> str:
        return f"{os.environ['LOOPBACK_BASE_URL']}/{PATH}"


if os.environ.get("LOOPBACK_BASE_URL"):
    registry.SOURCES[SLUG] = LoopbackLambdaClient


# The availability schedule's source: the real Lambda API client (prices and capacity in one answer) with its URL
# moved to the loopback server, which serves the recorded answer's shape with the stock the test sets between polls.
STOCK_SLUG = "loopback-lambda-api"


class LoopbackLambdaApiClient(lambdalabs.LambdaClient):
    info = SourceInfo(slug=STOCK_SLUG, provider="lambda", name="Loopback Lambda API (instance types and capacity)",
                      kind="api", url="https://docs.lambda.ai/api/cloud#listInstanceTypes")

    @classmethod
    def url(cls) -> str:
        return f"{os.environ['LOOPBACK_BASE_URL']}/api/v1/instance-types"


if os.environ.get("LOOPBACK_BASE_URL"):
    registry.SOURCES[STOCK_SLUG] = LoopbackLambdaApiClient
    registry.AVAILABILITY_SOURCES = (*registry.AVAILABILITY_SOURCES, STOCK_SLUG)
