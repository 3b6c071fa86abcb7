"""The weekly source-link check: does every capability cell's source URL still answer."""

from __future__ import annotations

import logging
from datetime import datetime

import httpx
from django.utils import timezone

from scrapers.links import links_probe

from .models import Capability, LinkCheck

logger = logging.getLogger(__name__)


def source_links_check(*, concurrency: int = 8, timeout: float = 15.0,
                       transport: httpx.BaseTransport | None = None, now: datetime | None = None) -> dict[str, int]:
    """Ask every distinct capability source URL whether it still answers (scrapers.links.links_probe: HEAD, then
    GET when HEAD is refused) and record the answer in LinkCheck, with `failing_since` set on the first failure of a
    streak. Returns {"checked": n, "broken": m}.
    """
    now = now or timezone.now()
    urls = sorted(set(Capability.objects.exclude(source_url="").values_list("source_url", flat=True)))
    outcomes = links_probe(urls, concurrency=concurrency, timeout=timeout, transport=transport)
    previous = {check.url: check for check in LinkCheck.objects.filter(url__in=urls)}
    rows = []
    for url, outcome in outcomes.items():
        before = previous.get(url)
        failing_since = None
        if not outcome.ok:
            failing_since = before.failing_since if before and not before.ok and before.failing_since else now
            logger.warning("source link %s is broken: %s", url, outcome.error or outcome.status_code)
        rows.append(LinkCheck(url=url, ok=outcome.ok, status_code=outcome.status_code, error=outcome.error[:300],
                              checked_at=now, failing_since=failing_since))
    LinkCheck.objects.bulk_create(
        rows, update_conflicts=True, unique_fields=["url"],
        update_fields=["ok", "status_code", "error", "checked_at", "failing_since"],
    )
    broken = sum(1 for outcome in outcomes.values() if not outcome.ok)
    logger.info("source links: %s checked, %s broken", len(urls), broken)
    return {"checked": len(urls), "broken": broken}
