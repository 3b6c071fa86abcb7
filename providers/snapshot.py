"""The bundled snapshot: what the embedded default shows, loaded through the services a live run uses."""

from __future__ import annotations

import logging

from django.db.models import Max

from scrapers import registry

from .exchange_rates import exchange_rates_sync
from .facts_sync import gpu_catalog_sync, instance_types_sync, providers_sync
from .models import Offer, ScrapeRun
from .runs import RunSkippedError, availability_poll, source_scrape

logger = logging.getLogger(__name__)


def snapshot_load() -> tuple[list[ScrapeRun], list[str]]:
    """Load everything the embedded default shows, through the same services a live run uses: the GPU catalog,
    the curated providers, the bundled ECB rates (first, so EUR and CNY prices get their USD value), then the
    recorded payload of every source in `registry.snapshot_sources()` replayed offline (every recorded edition,
    oldest first, of a source published in dated editions), then the dated stock recordings of those sources
    (`registry.SNAPSHOT_AVAILABILITY`), shown as recorded on their date.

    Returns the runs and the reasons of the sources not replayed. A source that has stored a live answer is never
    replayed (source_scrape refuses it), so running this on every start of a live site changes no offer: the
    replay only fills a database that no live run has written to (the curated files and the bundled rates are
    upserts that change nothing the second time; the rates are dated, and the bundled day is older than live ones).
    """
    gpu_catalog_sync()
    providers_sync()
    instance_types_sync()
    exchange_rates_sync(offline=True)
    sources = registry.snapshot_sources()
    runs, skipped = [], []
    for slug in sources:
        try:
            editions = registry.editions(slug)
            if not editions:
                runs.append(source_scrape(slug=slug, offline=True))
                continue
            # Dated editions in order, each dated by itself, so the history is the source's own. Editions older
            # than the newest one loaded are not replayed again (that would rewind the offers and append history).
            loaded = Offer.objects.filter(source__slug=slug).aggregate(newest=Max("price_as_of"))["newest"]
            for edition in editions:
                if loaded is None or edition >= loaded.date().isoformat():
                    # Each edition is the whole page as published that day, dated by itself: SKUs it no longer
                    # lists really left the page then, so the shrink guard (for broken answers) does not apply.
                    runs.append(source_scrape(slug=slug, offline=True, edition=edition, allow_shrink=True))
        except RunSkippedError as exc:
            logger.info("snapshot: %s", exc)
            skipped.append(str(exc))
    replayed = {run.source.slug for run in runs}
    for slug in registry.SNAPSHOT_AVAILABILITY:
        if slug in replayed:
            availability_poll(slug=slug, offline=True)
    return runs, skipped
