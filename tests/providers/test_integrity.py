"""Data integrity of ingestion (issue 16, items 5 to 8): the snapshot never rewinds live data, a refused row or a
partial answer never deactivates good offers, one lock serialises every path that runs a source, and a broken body or
a malformed Retry-After is the source's fault (a failed run), not an internal error."""

import csv
import io
import threading

import httpx
import pytest
from django.core.management import call_command
from django.db import connection, transaction
from django.utils import timezone

from providers import facts_sync, ingest, runs
from providers.models import Offer, PriceObservation, RunStatus, ScrapeRun
from providers.snapshot import snapshot_load
from scrapers import skypilot, upstream
from scrapers.base import TransientScrapeError
from scrapers.http import build_client
from tests.factories import DataSourceFactory, result, scraped

SLUG = "skypilot-lambda"
CLIENT = skypilot.CLIENTS[SLUG]
COMMIT_URL = upstream.commit_api_url(skypilot.REPOSITORY_NAME, CLIENT.info.revision)


def recorded_csv() -> bytes:
    (path,) = CLIENT.recorded().values()
    return path.read_bytes()


def answering(body: bytes, status: int = 200, headers: dict | None = None) -> httpx.MockTransport:
    url = CLIENT.url()

    def handle(request):
        if str(request.url) == COMMIT_URL:  # GitHub's answer on the catalog's commit date: none, as in a replay
            raise httpx.ConnectError("no recorded payload", request=request)
        assert str(request.url) == url, request.url
        return httpx.Response(status, content=body, headers=headers or {})
    return httpx.MockTransport(handle)


def with_price(body: bytes, nth: int, price: str) -> bytes:
    """The recording with the on-demand price of its nth GPU row (from 1) replaced."""
    lines = body.decode().splitlines(keepends=True)
    header = next(csv.reader(io.StringIO(lines[0])))
    gpu_lines = [index for index, text in enumerate(lines[1:], start=1)
                 if next(csv.reader(io.StringIO(text)))[header.index("AcceleratorName")].strip()]
    line = gpu_lines[nth - 1]
    cells = next(csv.reader(io.StringIO(lines[line])))
    cells[header.index("Price")] = price
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerow(cells)
    lines[line] = out.getvalue()
    return "".join(lines).encode()


@pytest.fixture
def catalog():
    facts_sync.gpu_catalog_sync()
    facts_sync.providers_sync()


def live(body: bytes, **kwargs) -> ScrapeRun:
    return runs.source_scrape(slug=SLUG, transport=answering(body), **kwargs)



# --- 5: the snapshot never replays over live data ---------------------------------------------------------------


@pytest.mark.django_db
def test_snapshot_on_restart_never_rewinds_a_source_that_stored_a_live_answer(catalog):
    snapshot_load()
    changed = with_price(recorded_csv(), 1, "6.95")
    assert live(changed).status == RunStatus.SUCCEEDED
    offer = Offer.objects.get(source__slug=SLUG, price_hour="6.95")
    history, last_seen = PriceObservation.objects.count(), offer.last_seen

    replayed, skipped = snapshot_load()  # what the web container did on every start

    offer.refresh_from_db()
    assert str(offer.price_hour) == "6.95000" and offer.last_seen == last_seen
    assert PriceObservation.objects.count() == history
    assert SLUG not in {run.source.slug for run in replayed}
    assert any(reason.startswith(f"{SLUG}:") and "live answer" in reason for reason in skipped)


# --- 6: refused rows and partial answers never deactivate offers --------------------------------------------------


@pytest.mark.django_db
def test_a_row_refused_for_an_absurd_value_leaves_its_offer_untouched():
    facts_sync.gpu_catalog_sync()
    source = DataSourceFactory(slug="test-api", provider__slug="lambda")
    rows = [scraped(f"i{n}") for n in range(10)]
    run = ScrapeRun.objects.create(source=source, started_at=timezone.now())
    with transaction.atomic():
        ingest.offers_sync(source=source, run=run, result=result(*rows), now=run.started_at)
    before = Offer.objects.get(instance_type="i3")
    absurd = [*rows[:3], scraped("i3", price="99999999"), *rows[4:]]
    later = ScrapeRun.objects.create(source=source, started_at=timezone.now())
    with transaction.atomic():
        counts = ingest.offers_sync(source=source, run=later, result=result(*absurd), now=later.started_at)
    after = Offer.objects.get(instance_type="i3")
    assert counts.skipped == 1 and counts.deactivated == 0
    assert after.is_active and after.price_hour == before.price_hour and after.last_seen == before.last_seen


@pytest.mark.django_db
def test_an_instance_type_the_client_refuses_keeps_its_offers_in_every_region():
    facts_sync.gpu_catalog_sync()
    source = DataSourceFactory(slug="test-api", provider__slug="lambda")
    rows = [scraped("a", region="r1"), scraped("a", region="r2"), *[scraped(f"i{n}") for n in range(8)]]
    run = ScrapeRun.objects.create(source=source, started_at=timezone.now())
    with transaction.atomic():
        ingest.offers_sync(source=source, run=run, result=result(*rows), now=run.started_at)
    answer = result(*rows[2:])
    answer.rejected_instance_types.add("a")  # the client could not read type "a" this time
    later = ScrapeRun.objects.create(source=source, started_at=timezone.now())
    with transaction.atomic():
        counts = ingest.offers_sync(source=source, run=later, result=answer, now=later.started_at)
    assert counts.deactivated == 0
    assert Offer.objects.filter(instance_type="a", is_active=True).count() == 2


@pytest.mark.django_db
def test_a_row_the_catalog_client_refuses_leaves_its_offer_untouched(catalog):
    body = recorded_csv()
    assert live(body).status == RunStatus.SUCCEEDED
    active = Offer.objects.filter(source__slug=SLUG, is_active=True).count()
    run = live(with_price(body, 1, "-1"))
    assert run.status == RunStatus.SUCCEEDED and run.skipped == 1 and run.deactivated == 0
    assert Offer.objects.filter(source__slug=SLUG, is_active=True).count() == active


@pytest.mark.django_db
@pytest.mark.parametrize("share", [0.8, 0.95])
def test_a_catalog_cut_short_is_refused_and_keeps_every_offer(catalog, share):
    body = recorded_csv()
    assert live(body).status == RunStatus.SUCCEEDED
    active = Offer.objects.filter(source__slug=SLUG, is_active=True).count()
    run = live(body[: int(len(body) * share)])
    assert run.status == RunStatus.FAILED and "truncated" in run.error
    assert Offer.objects.filter(source__slug=SLUG, is_active=True).count() == active


@pytest.mark.django_db
def test_a_catalog_listing_55_percent_of_its_rows_is_refused_as_partial(catalog):
    body = recorded_csv()
    assert live(body).status == RunStatus.SUCCEEDED
    active = Offer.objects.filter(source__slug=SLUG, is_active=True).count()
    lines = body.decode().splitlines(keepends=True)
    partial = "".join(lines[: 1 + int((len(lines) - 1) * 0.55)]).encode()  # cut at a line end: well-formed CSV
    run = live(partial)
    assert run.status == RunStatus.FAILED and "partial" in run.error
    assert Offer.objects.filter(source__slug=SLUG, is_active=True).count() == active
    # An operator who checked that the provider really stopped selling them accepts the shrink.
    assert live(partial, allow_shrink=True).deactivated > 0


@pytest.mark.django_db
def test_shrink_guard_is_per_kind_of_source():
    facts_sync.gpu_catalog_sync()
    for kind, lost, refused in [("catalog", 2, True), ("catalog", 1, False), ("api", 2, False), ("api", 3, True)]:
        source = DataSourceFactory(slug=f"s-{kind}-{lost}", kind=kind, provider__slug="lambda")
        rows = [scraped(f"i{n}") for n in range(10)]
        run = ScrapeRun.objects.create(source=source, started_at=timezone.now())
        with transaction.atomic():
            ingest.offers_sync(source=source, run=run, result=result(*rows), now=run.started_at)
        second = ScrapeRun.objects.create(source=source, started_at=timezone.now())
        try:
            with transaction.atomic():
                ingest.offers_sync(source=source, run=second, result=result(*rows[lost:]), now=second.started_at)
        except ingest.ShrinkRefusedError:
            assert refused, (kind, lost)
        else:
            assert not refused, (kind, lost)


# --- 7: one lock for every path that runs a source ---------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_manage_py_scrape_skips_while_another_run_of_the_source_is_in_progress(catalog, capsys):
    body = recorded_csv()
    inside, release = threading.Event(), threading.Event()

    def slow(request):
        inside.set()
        assert release.wait(30)
        return httpx.Response(200, content=body)

    first: dict = {}

    def run_first():
        try:
            first["run"] = runs.source_scrape(slug=SLUG, transport=httpx.MockTransport(slow))
        finally:
            connection.close()

    thread = threading.Thread(target=run_first)
    thread.start()
    try:
        assert inside.wait(30)
        with pytest.raises(Exception):  # noqa: B017 - CommandError: the run is counted as not done
            call_command("scrape", SLUG, "--offline")
        snapshot_runs, skipped = snapshot_load()
    finally:
        release.set()
        thread.join(30)
    assert "another run" in capsys.readouterr().err
    assert any("another run" in reason for reason in skipped)
    assert first["run"].status == RunStatus.SUCCEEDED
    # Only the first run was recorded, and nothing marked it interrupted.
    assert list(ScrapeRun.objects.filter(source__slug=SLUG).values_list("status", flat=True)) == ["succeeded"]


@pytest.mark.django_db(transaction=True)
def test_the_source_lock_is_free_again_after_a_run():
    with runs.source_lock("x") as first:
        holder: dict = {}

        def other():
            with runs.source_lock("x") as got:
                holder["other"] = got
            connection.close()

        thread = threading.Thread(target=other)
        thread.start()
        thread.join(10)
    with runs.source_lock("x") as again:
        assert (first, holder["other"], again) == (True, False, True)


# --- 8: faults of the source are source errors ------------------------------------------------------------------


@pytest.mark.django_db
def test_a_body_that_is_not_csv_is_a_failed_run_not_an_internal_error(catalog):
    run = live(b"\"" + b"x" * 200_000 + b"\"\n")  # _csv.Error: field larger than field limit
    assert run.status == RunStatus.FAILED and "internal error" not in run.error
    assert "SchemaScrapeError" in run.error


@pytest.mark.parametrize("value", ["soon", "Mon, 99 Foo 2026", "nan", "inf", "1e999"])
def test_a_malformed_retry_after_falls_back_to_the_default_backoff(value):
    client = CLIENT(build_client(transport=answering(b"slow down", 429, {"Retry-After": value})))
    with pytest.raises(TransientScrapeError) as caught:
        list(client.fetch().offers)  # the catalog is read as it streams: the answer's status shows on reading
    assert caught.value.retry_after is None

