"""Benchmark of the exports (issue 43): each tool's export of 10,000 offers, streamed through the API view in full.

It creates its own throw-away database (Django's test database machinery, named after DATABASE_URL's with a
`test_` prefix), loads the bundled snapshot (`manage.py load_snapshot`: real recorded offers), copies its active
offers into further regions (`<region>-bN`, same prices) until there are 10,000, times each export through Django's
test client (server time, the whole body read), best of three, prints the figures and drops the database.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench .venv/bin/python bench/exports.py [--offers 10000]

Target (issue 43): a 10,000-offer export streams in under 1 s. Reported, not asserted.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench import _targets  # noqa: E402

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "comparator.settings.test")

GOAL_SECONDS = 1.0
TOOLS = ("opencost", "kueue", "skypilot")


def populate(total: int) -> int:
    from django.core.management import call_command

    from providers.models import Offer

    call_command("load_snapshot", verbosity=0, stdout=open(os.devnull, "w"))
    real = list(Offer.objects.filter(is_active=True))
    copies, round_ = [], 0
    while len(real) + len(copies) < total:
        round_ += 1
        for offer in real:
            if len(real) + len(copies) >= total:
                break
            offer.pk, offer.id = None, None
            offer.region = f"{offer.region or 'r'}-b{round_}"[:120]
            copies.append(Offer(**{f.attname: getattr(offer, f.attname) for f in Offer._meta.concrete_fields}))
    Offer.objects.bulk_create(copies, batch_size=2000)
    return Offer.objects.filter(is_active=True).count()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--offers", type=int, default=10_000)
    args = parser.parse_args()
    import django

    django.setup()
    from django.conf import settings
    from django.db import connection
    from django.test import Client

    settings.API_ANON_RATE = None
    connection.creation.create_test_db(verbosity=0, autoclobber=True)
    results = {}
    try:
        start = time.perf_counter()
        count = populate(args.offers)
        print(f"loaded {count:,} active offers in {time.perf_counter() - start:.1f} s ({connection.vendor})")
        client = Client(HTTP_HOST="127.0.0.1")
        for tool in TOOLS:
            times, size = [], 0
            for _ in range(3):
                began = time.perf_counter()
                response = client.get(f"/api/v1/exports/{tool}/")
                body = b"".join(response.streaming_content) if response.streaming else response.content
                times.append(time.perf_counter() - began)
                size = len(body)
                assert response.status_code == 200, body[:300]
            results[tool] = min(times)
            print(f"  {tool:9s} {min(times):.3f} s best of 3 (worst {max(times):.3f} s), {size / 1024:.0f} KB")
    finally:
        connection.creation.destroy_test_db(connection.settings_dict["NAME"], verbosity=0)
    for tool, seconds in results.items():
        _targets.at_most(f"{tool} export of {args.offers:,} offers, best of 3", seconds, GOAL_SECONDS, "s", digits=3)
    return 0


if __name__ == "__main__":
    sys.exit(main())
