"""The availability schedule end to end through the real broker and a real worker: a Celery worker process (solo
pool, on the local Redis) runs the beat entry's task, providers.tasks.availability_poll, for a source whose API is a
loopback HTTP server answering in the recorded Lambda shape, with the stock changed between polls; one poll gets a
broken answer. The history (changes only), the day counters and the 7-day in-stock shares are checked in the test's
PostgreSQL database."""

import copy
import http.server
import json
import threading
import uuid

import pytest

from comparator.celery import BEAT_SCHEDULE
from providers import facts_sync
from providers.models import AvailabilityChange, AvailabilityDay, AvailabilityPoll, Offer, RunStatus, ScrapeRun
from providers.tasks import provider_scrape
from scrapers import lambdalabs
from tests.integration.loopback_source import STOCK_SLUG
from tests.integration.test_worker import Worker, wait_for

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

RECORDED = json.loads(lambdalabs.LambdaClient.recorded()[lambdalabs.URL].read_bytes())
REGIONS = ("us-west-1", "us-east-1")


class InstanceTypes(http.server.BaseHTTPRequestHandler):
    """The recorded instance-types answer with `regions` as the regions with capacity; `broken` truncates it."""

    regions: tuple = REGIONS
    broken = False
    requests = 0

    def do_GET(self):
        if self.path != "/api/v1/instance-types":
            self.send_error(404)
            return
        type(self).requests += 1
        payload = copy.deepcopy(RECORDED)
        payload["data"]["gpu_1x_a100"]["regions_with_capacity_available"] = [
            {"name": name, "description": name} for name in self.regions]
        body = json.dumps(payload).encode()
        if self.broken:
            body = body[: len(body) // 2]
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def stock_server():
    handler = type("StockHandler", (InstanceTypes,), {})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield handler, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def lambda_provider():
    facts_sync.gpu_catalog_sync()
    facts_sync.providers_sync()


def finished_polls() -> int:
    return AvailabilityPoll.objects.filter(source__slug=STOCK_SLUG).exclude(status=RunStatus.RUNNING).count()


def states() -> dict[str, list[str]]:
    return {region: list(AvailabilityChange.objects.filter(offer__source__slug=STOCK_SLUG, offer__region=region)
                         .order_by("changed_at", "id").values_list("availability", flat=True))
            for region in REGIONS}


def test_the_availability_schedule_records_changes_and_in_stock_shares(stock_server, lambda_provider, tmp_path):
    handler, base_url = stock_server
    entry = BEAT_SCHEDULE["poll-availability-lambdalabs"]  # what beat sends every 15 minutes, for our source
    queue = f"it-{uuid.uuid4().hex}"
    log = tmp_path / "worker.log"
    worker = Worker(queue, base_url, log)
    try:
        provider_scrape.apply_async(args=[STOCK_SLUG], queue=queue)  # the price run creates the offers (a check)
        wait_for(lambda: ScrapeRun.objects.filter(source__slug=STOCK_SLUG, status=RunStatus.SUCCEEDED).exists(),
                 timeout=90, what="the price run", workers=[worker], log=log)
        # Poll 1: us-east-1 sold out. Poll 2: a truncated answer (fails, changes nothing). Poll 3: sold out
        # everywhere. Poll 4: both back.
        for number, (regions, broken) in enumerate([(("us-west-1",), False), ((), True), ((), False),
                                                    (REGIONS, False)], start=1):
            handler.regions, handler.broken = regions, broken
            before = list(Offer.objects.filter(source__slug=STOCK_SLUG).order_by("id").values()) if broken else None
            app_task = worker_task(entry)
            app_task.apply_async(args=[STOCK_SLUG], queue=queue, expires=entry["options"]["expires"])
            wait_for(lambda n=number: finished_polls() == n, timeout=90, what=f"poll {number}", workers=[worker],
                     log=log)
            if broken:
                failed = AvailabilityPoll.objects.filter(source__slug=STOCK_SLUG).latest("started_at")
                assert failed.status == RunStatus.FAILED and "SchemaScrapeError" in failed.error
                assert list(Offer.objects.filter(source__slug=STOCK_SLUG).order_by("id").values()) == before
    finally:
        worker.kill()
    assert handler.requests == 5
    assert states() == {"us-west-1": ["available", "unavailable", "available"],
                        "us-east-1": ["available", "unavailable", "available"]}
    west, east = (Offer.objects.get(source__slug=STOCK_SLUG, region=region) for region in REGIONS)
    # Checks: the price run and three good polls (the broken one is not a check).
    assert [(day.checks, day.in_stock) for day in AvailabilityDay.objects.filter(offer=west)] == [(4, 3)]
    assert [(day.checks, day.in_stock) for day in AvailabilityDay.objects.filter(offer=east)] == [(4, 2)]
    assert (float(west.in_stock_share_7d), float(east.in_stock_share_7d)) == (0.75, 0.5)
    assert west.availability == east.availability == "available"
    # The price run's region-less sold-out row (from poll 3's answer shape) is not an offer: nothing else stored.
    assert Offer.objects.filter(source__slug=STOCK_SLUG).count() == 2


def worker_task(entry):
    from comparator.celery import app

    app.loader.import_default_modules()
    return app.tasks[entry["task"]]
