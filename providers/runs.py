"""Runs of a source: a price run (`source_scrape`) and a stock poll (`availability_poll`), each recorded
(ScrapeRun, AvailabilityPoll) whatever happens.

`source_scrape` is the one ingestion path: the Celery task, `manage.py scrape` and the bundled snapshot all call it,
and it hands whatever the client returned to providers.ingest.offers_sync (idempotent upsert on the natural key,
history only on change, never deletes, refuses a partial response: see MAX_DEACTIVATED_SHARE). Every run of a
source, whichever path starts it, holds that source's lock (`source_lock`) for its whole length.
"""

from __future__ import annotations

import fcntl
import logging
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import httpx
from celery.exceptions import SoftTimeLimitExceeded
from django.db import connection, transaction
from django.utils import timezone

from scrapers import registry
from scrapers.availability import STATES, ScrapedAvailability
from scrapers.base import NotConfiguredError, ScrapedOffer, ScrapeError, SourceInfo, TransientScrapeError

from . import pricing
from .availability_sync import availability_apply
from .facts_sync import capability_facts_sync
from .ingest import offers_sync
from .models import AvailabilityPoll, DataSource, Offer, Provider, RunStatus, ScrapeRun

logger = logging.getLogger(__name__)


def source_register(info: SourceInfo) -> DataSource:
    dating = pricing.dating_of(info.slug)
    source, _ = DataSource.objects.update_or_create(
        slug=info.slug,
        defaults={
            "name": info.name,
            "kind": info.kind,
            "provider": Provider.objects.get(slug=info.provider),
            "url": info.url,
            "license": info.license,
            "revision": info.revision,
            "as_of": info.as_of or None,
            # The evidence its undated prices were dated by, when some were (providers/pricing.py).
            "price_evidence": " ".join(record.evidence for record in dating),
            "price_evidence_zh": "".join(record.evidence_zh for record in dating),
            "price_evidence_url": dating[0].evidence_url if dating else "",
        },
    )
    return source


class RunSkippedError(Exception):
    """A run that did not start, and recorded nothing: another run of the source holds its lock, or a replay would
    rewind a source that has stored a live answer. Not a ScrapeError: nothing was read, nothing failed."""


@contextmanager
def source_lock(slug: str) -> Iterator[bool]:
    """Hold the lock of one source for the body, yielding whether we got it (never waits).

    The one lock every run of a source takes, whichever path starts it (Celery task, `manage.py scrape`, the
    snapshot). On PostgreSQL a session-level advisory lock: the database frees it when the holder's connection ends,
    so a killed worker never leaves it held. On SQLite (the embedded default, one machine) an flock on a file beside
    the database, which the kernel frees when the process dies.
    """
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_try_advisory_lock(hashtextextended(%s, 0))", [f"comparator:source:{slug}"])
            acquired = bool(cursor.fetchone()[0])
        try:
            yield acquired
        finally:
            if acquired:
                with connection.cursor() as cursor:
                    cursor.execute("SELECT pg_advisory_unlock(hashtextextended(%s, 0))", [f"comparator:source:{slug}"])
        return
    name = str(connection.settings_dict.get("NAME") or "")
    folder = Path(name).parent if name and ":memory:" not in name and "mode=memory" not in name else None
    database = Path(name).name if folder else "memory"
    path = (folder or Path(tempfile.gettempdir())) / f".{database}.source-{slug}.lock"
    with open(path, "a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def source_scrape(*, slug: str, offline: bool = False, transport: httpx.BaseTransport | None = None,
                  edition: str | None = None, allow_shrink: bool = False) -> ScrapeRun:
    """Fetch one source and store what it returned, recording a ScrapeRun whatever happens.

    Runs under the source's lock (`source_lock`); when another run holds it, raises RunSkippedError and records
    nothing. An `offline` replay of recorded payloads is refused the same way (RunSkippedError) for a source that
    has stored a live answer: old recordings must never overwrite live prices or make rewound offers look fresh.
    Offers, capability facts, Kubernetes facts, the run's counts and the source's `last_success_at` are written in
    one transaction (an offline replay stores offers only: it is not a live answer), so a run is either stored whole
    or not at all. A failure of any kind leaves every stored offer as it was and is recorded on the run with a
    readable reason. Transient errors are recorded and then re-raised (so the Celery task can retry with backoff);
    other scrape errors (bad key, broken or partial response) are recorded and the failed run returned; an internal
    error or a time limit is recorded and re-raised. `allow_shrink` lets an operator accept a response past the
    shrink guard (MAX_DEACTIVATED_SHARE).
    """
    with source_lock(slug) as acquired:
        if not acquired:
            raise RunSkippedError(f"{slug}: another run of this source is still in progress")
        return _source_scrape_locked(slug=slug, offline=offline, transport=transport, edition=edition,
                                     allow_shrink=allow_shrink)


def _source_scrape_locked(*, slug: str, offline: bool, transport: httpx.BaseTransport | None, edition: str | None,
                          allow_shrink: bool) -> ScrapeRun:
    client_class = registry.SOURCES[slug]
    source = source_register(client_class.info)
    if offline and source.last_success_at is not None:
        raise RunSkippedError(
            f"{slug}: not replayed, the source stored a live answer at {source.last_success_at:%Y-%m-%d %H:%M} UTC "
            "and a recording would rewind it"
        )
    run = _started(ScrapeRun, source, offline=offline, what="run")
    with _failures_recorded(run, slug=slug, failed="source %s failed: %s",
                            stopped="stopped: the run exceeded its time limit; stored offers were kept") as outcome:
        client = registry.make_client(slug, offline=offline, transport=transport, edition=edition)
        result = client.fetch()
        # A live price answer that states stock is a check too (Lambda's capacity, RunPod's stockStatus): noted as
        # offers_sync reads the offers, which it does once (they may come from a generator).
        stated: list[ScrapedAvailability] = []
        if not offline:
            # A copy (it shares the lists a generator may grow): the client's own result is left as it returned it.
            result = replace(result, offers=_stock_noted(result.offers, stated))
        with transaction.atomic():
            # A replayed recording's rows are as old as the recording (registry.RECORDED_ON), not undated.
            counts = offers_sync(source=source, run=run, result=result, now=run.started_at,
                                 allow_shrink=allow_shrink, recorded_on=registry.recorded_on(slug) if offline else None)
            dataset = getattr(client_class, "capability_dataset", False)
            if not offline or dataset:
                # A replayed recording is not news from the provider: its Kubernetes facts would pose as "provider
                # API, fetched now" (some recordings are years old), so only live runs may replace curated cells.
                # A dataset at a commit is the exception: its recorded copy is the dataset, dated by the commit.
                capability_facts_sync(source=source, result=result, fetched_at=run.started_at, counts=counts,
                                      dataset=dataset)
            for name in ("created", "updated", "unchanged", "deactivated", "skipped", "held", "corrected",
                         "capabilities_changed", "capabilities_rejected", "facts_stored", "rejections"):
                setattr(run, name, getattr(counts, name))
            if stated:
                availability_apply(source=source, states=stated, now=run.started_at)
            run.unknown_gpus = dict(counts.unknown_gpus)
            run.status, run.error, run.finished_at = RunStatus.SUCCEEDED, "", timezone.now()
            run.save()
            if not offline:
                # Freshness means a live answer from the source; the bundled snapshot stays flagged as not live.
                DataSource.objects.filter(pk=source.pk).update(last_success_at=run.started_at)
    if outcome.failed:
        return run
    logger.info(
        "source %s: %s created, %s updated, %s unchanged, %s deactivated, %s rejected, %s held, unknown GPUs %s; "
        "capabilities %s changed, %s rejected; %s Kubernetes facts",
        slug, counts.created, counts.updated, counts.unchanged, counts.deactivated, counts.skipped, counts.held,
        dict(counts.unknown_gpus) or "none", counts.capabilities_changed, counts.capabilities_rejected,
        counts.facts_stored,
    )
    return run


def _stock_noted(offers: Iterable[ScrapedOffer], stated: list[ScrapedAvailability]) -> Iterator[ScrapedOffer]:
    """`offers`, each passed on as it is read, with the stock of those that state one appended to `stated`."""
    for offer in offers:
        if offer.availability in STATES:
            stated.append(ScrapedAvailability(offer.instance_type, offer.region, offer.availability,
                                              offer.available_count))
        yield offer


class _Outcome:
    failed = False


@contextmanager
def _failures_recorded(record, *, slug: str, failed: str, stopped: str):
    """What a price run or a stock poll records when it fails, the same for both. Not configured, and a scrape error
    that is not transient, are recorded and end the run (`outcome.failed`: the caller returns the record); a
    transient error (retried by the task), the time limit and anything unexpected are recorded and raised. `failed`
    is the warning logged for a scrape error (slug, error); `stopped` the error recorded at the time limit."""
    outcome = _Outcome()
    try:
        yield outcome
    except NotConfiguredError as exc:
        _fail(record, RunStatus.NOT_CONFIGURED, str(exc))
        logger.info("source %s not configured: %s", slug, exc)
        outcome.failed = True
    except ScrapeError as exc:
        _fail(record, RunStatus.FAILED, f"{type(exc).__name__}: {exc}")
        logger.warning(failed, slug, exc)
        if isinstance(exc, TransientScrapeError):
            raise
        outcome.failed = True
    except SoftTimeLimitExceeded:
        _fail(record, RunStatus.FAILED, stopped)
        logger.error("source %s stopped at its time limit", slug)
        raise
    except Exception as exc:
        _fail(record, RunStatus.FAILED, f"internal error: {type(exc).__name__}: {exc}")
        raise


def _fail(run: ScrapeRun, status: str, error: str) -> None:
    # Only these columns: the counts of a sync that was rolled back must not be saved with the failed run.
    run.status, run.error, run.finished_at = status, error, timezone.now()
    run.save(update_fields=["status", "error", "finished_at"])


def availability_poll(*, slug: str, offline: bool = False,
                      transport: httpx.BaseTransport | None = None) -> AvailabilityPoll:
    """Ask one source for the stock of the offers we store and record what it said, as an AvailabilityPoll.

    - the client is handed the (instance_type, region) keys of the source's active offers (a source with none yet
      fails the poll: its price run comes first) and states what its stock endpoints say (scrapers/availability.py);
    - a successful answer goes to `availability_apply` in one transaction;
    - any failure (timeout, 429, 5xx, refused key, a truncated, renamed or empty answer) is recorded on the poll and
      changes nothing else: every offer keeps its last known state and the time it was checked, so pages show that
      state with its age; transient errors are re-raised for the task to retry, an internal error too;
    - `offline` replays the source's recorded stock answer (the bundled snapshot): its states are dated on the
      recording's date (scrapers.registry.SNAPSHOT_AVAILABILITY) and flagged `recorded`, never as a live check;
    - it runs under the source's lock (`source_lock`), shared with its price run, so the two never write the same
      offers at once: when the lock is held it raises RunSkippedError and records nothing.
    """
    with source_lock(slug) as acquired:
        if not acquired:
            raise RunSkippedError(f"{slug}: a run of this source is still in progress")
        return _availability_poll_locked(slug=slug, offline=offline, transport=transport)


def _availability_poll_locked(*, slug: str, offline: bool, transport: httpx.BaseTransport | None) -> AvailabilityPoll:
    source = source_register(registry.SOURCES[slug].info)
    poll = _started(AvailabilityPoll, source, offline=offline, what="poll")
    started = poll.started_at
    with _failures_recorded(poll, slug=slug, failed="availability of %s not updated, keeping the last known states: %s",
                            stopped="stopped: the poll exceeded its time limit; stored states were kept") as outcome:
        known = set(Offer.objects.filter(source=source, is_active=True).values_list("instance_type", "region"))
        if not known:
            raise ScrapeError("no stored offers to check yet: the source's price run comes first")
        client = registry.make_availability_client(slug, offline=offline, transport=transport)
        result = client.fetch_availability(known)
        checked_at = started
        if offline:
            recorded_on = registry.SNAPSHOT_AVAILABILITY.get(slug)
            if recorded_on is None:
                raise ScrapeError(f"{slug} has no dated availability recording to replay")
            checked_at = datetime.fromisoformat(recorded_on).replace(tzinfo=UTC)
        with transaction.atomic():
            counts = availability_apply(source=source, states=result.states, now=checked_at, recorded=offline)
            poll.checked, poll.changed, poll.unmatched = counts.checked, counts.changed, counts.unmatched
            poll.status, poll.error, poll.finished_at = RunStatus.SUCCEEDED, "", timezone.now()
            poll.save()
    if outcome.failed:
        return poll
    logger.info("availability of %s: %s offers checked, %s changed, %s states for offers we do not store",
                slug, counts.checked, counts.changed, counts.unmatched)
    return poll


def _started(model, source, *, offline: bool, what: str):
    """A new running record (a ScrapeRun or an AvailabilityPoll) of `source`. One still marked running was cut off
    (worker killed, machine lost): the caller holds the source's lock, so none is really running now; say what
    happened to it instead of leaving it "running" forever."""
    started = timezone.now()
    model.objects.filter(source=source, status=RunStatus.RUNNING).update(
        status=RunStatus.FAILED, finished_at=started,
        error=f"interrupted: the worker stopped before the {what} finished; nothing it read was stored",
    )
    return model.objects.create(source=source, started_at=started, offline=offline)
