"""Benchmark of the offers page with 100,000 offers: server time of the default and a filtered view against the
equivalent API request measured in the same run, the HTML size, and the JavaScript and CSS a first visit downloads.

It creates its own throw-away database (Django's test database machinery, named after DATABASE_URL's with a
`test_` prefix), loads the curated providers and GPU catalog plus synthetic offers, measures through Django's test
client (server time only: no network, no browser), prints figures and ratios, and drops the database.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench .venv/bin/python bench/pages.py [--offers 100000]

Targets (issue 5): HTML under 200 KB; at most 100 KB of compressed JavaScript on pages without charts; the
filtered page within 2x of the API request for the same filters. They are reported, not asserted.
"""

from __future__ import annotations

import argparse
import gzip
import logging
import os
import random
import re
import statistics
import sys
import time
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "comparator.settings.test")

logger = logging.getLogger("bench.pages")

# The figures are the script's output: logged as plain lines on stdout.
report = logger.info
FILTERED = "gpu_family=H100&mig=yes&rdma=any&offering=managed&price_per_gpu_hour_max=3"
REPEAT = 21
REGIONS = 40


def populate(count: int) -> None:
    """Curated providers and GPU catalog, one API source per provider, and `count` offers spread over them."""
    from django.utils import timezone

    from providers import services
    from providers.models import DataSource, GpuModel, Offer, Provider

    services.gpu_catalog_sync()
    services.providers_sync()
    providers = list(Provider.objects.all())
    gpus = list(GpuModel.objects.all())
    now = timezone.now()
    sources = {p.id: DataSource.objects.create(slug=f"bench-{p.slug}", name=f"{p.name} (bench)", kind="api",
                                               provider=p, url=p.website, last_success_at=now) for p in providers}
    rng = random.Random(5)
    batch = []
    # Offers come as instance types listed in many regions (40 here, as a big catalog lists them), so the derived
    # Kubernetes answers are one profile per type, as in real data: each type has one provider, GPU and GPU count.
    types = []
    for index in range((count + REGIONS - 1) // REGIONS):
        gpu_count = rng.choice((1, 1, 2, 4, 8))
        types.append((providers[index % len(providers)], rng.choice(gpus), gpu_count, f"bench-{index}-{gpu_count}x"))
    for index in range(count):
        provider, gpu, gpu_count, instance_type = types[index // REGIONS]
        per_gpu = Decimal(rng.randint(20, 1200)) / 100
        spot = per_gpu * Decimal("0.4") if rng.random() < 0.3 else None
        batch.append(Offer(
            provider=provider, source=sources[provider.id], instance_type=instance_type,
            region=f"r{index % REGIONS}",
            country="US", continent="NA", gpu=gpu, gpu_name=gpu.name, gpu_count=gpu_count,
            gpu_memory_gb=gpu.memory_gb, currency="USD", price_hour=per_gpu * gpu_count,
            price_hour_usd=per_gpu * gpu_count, price_per_gpu_hour_usd=per_gpu,
            spot_price_hour=spot * gpu_count if spot else None, spot_price_hour_usd=spot * gpu_count if spot else None,
            spot_price_per_gpu_hour_usd=spot, availability=rng.choice(("available", "unknown", "limited")),
            first_seen=now - timedelta(days=30), last_seen=now - timedelta(hours=rng.randint(0, 48)),
        ))
        if len(batch) == 5000:
            Offer.objects.bulk_create(batch)
            batch = []
    Offer.objects.bulk_create(batch)
    # Synthetic instance-type facts, so the filtered view has matches: every bench type of a managed provider can be
    # a node, the 8-GPU ones have InfiniBand. Then the answers are derived as an ingest would.
    from providers.curated import InstanceFactRecord

    day = now.date()
    for provider in providers:
        services.instance_facts_sync(provider_slug=provider.slug, origin="curated", facts=[
            InstanceFactRecord("bench-*", "managed_node", "yes", source_url="https://example.org/bench",
                               verified_on=day, confidence="documented"),
            InstanceFactRecord("bench-*-8x", "fabric", "infiniband", source_url="https://example.org/bench",
                               verified_on=day, confidence="documented"),
        ])


def timed(client, *requests: tuple[str, dict]) -> list[tuple[float, bytes, int]]:
    """For each (url, headers): the median server time in ms over REPEAT requests after one warm-up, the last body
    and its status. The requests take turns (one of each per round), so a change in the machine's load during the
    run weighs on all of them alike instead of on whichever was measured at the time."""
    samples: list[list[float]] = [[] for _ in requests]
    last = []
    for url, headers in requests:
        client.get(url, **headers)
    for _ in range(REPEAT):
        last = []
        for index, (url, headers) in enumerate(requests):
            start = time.perf_counter()
            response = client.get(url, **headers)
            body = response.getvalue() if response.streaming else response.content
            samples[index].append((time.perf_counter() - start) * 1000)
            last.append((body, response.status_code))
    return [(statistics.median(times), body, status) for times, (body, status) in zip(samples, last, strict=True)]


def first_visit_assets(html: str) -> dict[str, tuple[int, int]]:
    """Raw and gzip size of every script and stylesheet the page references (all served from /static/)."""
    from django.contrib.staticfiles import finders

    sizes = {}
    for url in re.findall(r'<script[^>]+src="([^"]+)"|<link[^>]+rel="stylesheet"[^>]+href="([^"]+)"', html):
        url = url[0] or url[1]
        path = finders.find(url.removeprefix("/static/"))
        if path is None:
            raise SystemExit(f"asset not found: {url}")
        data = Path(path).read_bytes()
        sizes[url] = (len(data), len(gzip.compress(data, 9)))
    return sizes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--offers", type=int, default=100_000)
    args = parser.parse_args()

    import django

    django.setup()
    # The figures go to stdout as plain lines, whatever format the project's LOGGING gives other loggers.
    plain = logging.StreamHandler(sys.stdout)
    plain.setFormatter(logging.Formatter("%(message)s"))
    logger.handlers[:] = [plain]
    logger.propagate = False
    logger.setLevel(logging.INFO)
    from django.db import connection
    from django.test import Client
    from django.urls import Resolver404, resolve

    old_name = connection.settings_dict["NAME"]
    connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        start = time.perf_counter()
        populate(args.offers)
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("VACUUM ANALYZE")  # the steady state autovacuum keeps a live database in
        report("loaded %s offers in %.1f s (%s)", f"{args.offers:,}", time.perf_counter() - start,
                    connection.vendor)
        # Not setup_test_environment(): it wraps every template render to record it for tests, which production
        # does not do and which would slow the pages (many templates) more than the API (none). The client names a
        # host the settings allow instead.
        client = Client(HTTP_HOST="localhost")
        pages = [("/", {}), (f"/?{FILTERED}", {}),
                 (f"/?{FILTERED}", {"HTTP_HX_REQUEST": "true", "HTTP_HX_TRIGGER": "filters"})]
        try:
            resolve("/api/v1/offers/")
            pages.append((f"/api/v1/offers/?{FILTERED}", {}))
        except Resolver404:
            pass
        measured = timed(client, *pages)
        (default_ms, default_html, status), (filtered_ms, filtered_html, status2), (htmx_ms, fragment, _) = measured[:3]
        assert status == status2 == 200, (status, status2)
        api_ms, api_body, api_status = measured[3] if len(measured) > 3 else (None, b"", None)

        html = default_html.decode()
        assets = first_visit_assets(html)
        js_gz = sum(gz for url, (_raw, gz) in assets.items() if url.endswith(".js"))
        css_gz = sum(gz for url, (_raw, gz) in assets.items() if url.endswith(".css"))
        [(chart_ms, chart_html, _)] = timed(client, (f"/charts/?{FILTERED}", {}))
        chart_assets = first_visit_assets(chart_html.decode())

        report(f"\nOffers page with {args.offers:,} offers ({connection.vendor}), median of {REPEAT} requests")
        report(f"{'view':<34}{'server ms':>10}{'HTML KB':>10}{'gzip KB':>10}")
        for name, ms, body in (("default (/)", default_ms, default_html),
                               (f"filtered (/?{FILTERED[:18]}...)", filtered_ms, filtered_html),
                               ("filtered, htmx fragment", htmx_ms, fragment),
                               ("charts page, same filters", chart_ms, chart_html)):
            report(f"{name:<34}{ms:>10.1f}{len(body) / 1024:>10.1f}{len(gzip.compress(body)) / 1024:>10.1f}")
        if api_ms is not None:
            report(f"{'API /api/v1/offers/, same filters':<34}{api_ms:>10.1f}{len(api_body) / 1024:>10.1f}"
                  f"{'':>10}  (status {api_status})")
        report("\nFirst visit to the offers page downloads:")
        for url, (raw, gz) in assets.items():
            report(f"  {url:<44}{raw / 1024:>8.1f} KB raw {gz / 1024:>8.1f} KB gzip")
        report(f"  JavaScript {js_gz / 1024:.1f} KB gzip, CSS {css_gz / 1024:.1f} KB gzip")
        report(f"The charts page adds plotly: {sum(gz for _r, gz in chart_assets.values()) / 1024:.1f} KB gzip in all")
        report("\nRatios and targets:")
        report(f"  filtered / default server time      {filtered_ms / default_ms:.2f}x")
        if api_ms is not None:
            ratio = filtered_ms / api_ms
            verdict = "met" if ratio <= 2 else "MISSED"
            report(f"  filtered page / API, same filters   {ratio:.2f}x   (target <= 2x: {verdict})")
        else:
            report("  API /api/v1/offers/ is not routed in this tree: no page/API ratio")
        size = len(default_html) / 1024
        verdict = "met" if size < 200 else "MISSED"
        report(f"  offers HTML                         {size:.1f} KB (target < 200 KB: {verdict})")
        report(f"  compressed JS without charts        {js_gz / 1024:.1f} KB "
              f"(target <= 100 KB: {'met' if js_gz <= 100 * 1024 else 'MISSED'})")
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)


if __name__ == "__main__":
    main()
