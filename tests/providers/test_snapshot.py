"""The bundled snapshot: what `make run` loads. Idempotent, real, and loadable into the embedded SQLite default."""

import os
import sqlite3
import subprocess
import sys
from datetime import date, timedelta
from decimal import Decimal
from pathlib import Path

import pytest
from django.utils import timezone

from providers import facts_sync
from providers.models import Capability, CapabilityChange, DataSource, GpuModel, Offer, PriceObservation, Provider
from providers.snapshot import snapshot_load
from tests.served import served_like_make_run

ROOT = Path(__file__).resolve().parents[2]


def offer_state():
    return sorted(
        tuple(row.values())
        for row in Offer.objects.values(
            "source__slug", "instance_type", "region", "gpu_id", "gpu_count", "price_hour", "spot_price_hour",
            "price_per_gpu_hour_usd", "is_active", "first_seen",
        )
    )


@pytest.mark.django_db
def test_snapshot_loads_real_offers_and_capabilities_and_loading_twice_changes_nothing():
    runs, _ = snapshot_load()
    assert all(run.status == "succeeded" for run in runs), [(r.source.slug, r.error) for r in runs]
    providers_with_offers = Provider.objects.filter(offers__is_active=True).distinct().count()
    assert providers_with_offers >= 12
    assert Provider.objects.filter(capabilities__isnull=False).distinct().count() >= 30
    assert GpuModel.objects.count() >= 25
    # A replay is not a live answer: no API fact replaces a curated cell, and every source stays "not live".
    from providers.models import KubernetesFact

    assert not Capability.objects.filter(origin="provider_api").exists() and not KubernetesFact.objects.exists()
    assert not DataSource.objects.filter(last_success_at__isnull=False).exists()
    # Catalog-derived offers and dataset cells say where they come from and as of which commit.
    for source in DataSource.objects.filter(kind="catalog"):
        assert len(source.revision) == 40 and source.url.startswith("https://github.com/")

    # Recorded stock is shown as recorded, on its recording's date, and is not a check.
    from providers.models import AvailabilityChange, AvailabilityDay, Offer

    recorded = Offer.objects.filter(availability_recorded=True)
    assert recorded.exists() and set(recorded.values_list("source__slug", flat=True)) == {"digitalocean"}
    assert not AvailabilityDay.objects.exists()
    # The CNCF AI conformance dataset is a dataset at a commit: its replay carries its answers, dated by the commit.
    conformant = Capability.objects.filter(key="cncf_ai_conformance", value="yes", origin="dataset")
    assert set(conformant.values_list("provider__slug", flat=True)) == {
        "aws", "gcp", "azure", "oci", "huawei", "coreweave", "alibaba", "baidu", "ovhcloud", "linode"}
    assert set(conformant.values_list("verified_on", flat=True)) == {date(2026, 8, 19)}
    # Alibaba ACK's v1.36 self-assessment (an open pull request) shows, cited at the commit that filed it.
    ack = conformant.get(provider__slug="alibaba")
    assert ack.label == "Kubernetes v1.34, v1.36" and "499c14ae42e5e9e87ba8b43c5a65aef35795fc92" in ack.source_url

    before = (offer_state(), PriceObservation.objects.count(), CapabilityChange.objects.count(),
              sorted(Capability.objects.values_list("provider__slug", "key", "value", "source_url")),
              AvailabilityChange.objects.count())
    second, _ = snapshot_load()
    assert all(run.created == run.updated == run.deactivated == 0 for run in second)
    after = (offer_state(), PriceObservation.objects.count(), CapabilityChange.objects.count(),
             sorted(Capability.objects.values_list("provider__slug", "key", "value", "source_url")),
             AvailabilityChange.objects.count())
    assert before == after


@pytest.mark.django_db
def test_editing_a_curated_cell_records_the_change(tmp_path):
    from dataclasses import replace

    from providers.curated import load_providers

    records = load_providers()
    facts_sync.providers_sync(records=records)
    aws = next(record for record in records if record.slug == "aws")
    cells = dict(aws.capabilities)
    cells["mig"] = replace(cells["mig"], value="no" if cells["mig"].value != "no" else "yes")
    facts_sync.providers_sync(records=[replace(aws, capabilities=cells)])
    change = CapabilityChange.objects.filter(provider__slug="aws", key="mig").latest("changed_at")
    assert change.new_value == cells["mig"].value and change.old_value != change.new_value


@pytest.mark.slow
def test_make_run_path_loads_the_snapshot_into_sqlite(tmp_path):
    """What `make run` does before serving: migrate and load_snapshot into a fresh SQLite file, no Redis."""
    database = tmp_path / "embedded.sqlite3"
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{database}", "DJANGO_SETTINGS_MODULE": "comparator.settings.local",
           "CELERY_BROKER_URL": "redis://127.0.0.1:1/0"}  # a broker that does not exist: nothing may need it
    history = []
    for command in (["migrate", "--noinput"], ["load_snapshot"], ["load_snapshot"]):
        completed = subprocess.run([sys.executable, "manage.py", *command], cwd=ROOT, env=env, capture_output=True,
                                   text=True, timeout=300)
        assert completed.returncode == 0, completed.stderr[-2000:]
        if command == ["load_snapshot"]:
            with sqlite3.connect(database) as db:
                history.append(db.execute("select count(*) from providers_priceobservation").fetchone()[0])
    with sqlite3.connect(database) as db:
        (providers_with_offers,) = db.execute(
            "select count(distinct provider_id) from providers_offer where is_active").fetchone()
        (providers_with_caps,) = db.execute("select count(distinct provider_id) from providers_capability").fetchone()
        (offers,) = db.execute("select count(*) from providers_offer").fetchone()
    assert providers_with_offers >= 12 and providers_with_caps >= 30
    # Every offer has its first observation; CoreWeave's dated editions add the days its prices changed on.
    assert history[0] > offers
    assert history[1] == history[0]  # the second load appended no history: nothing changed
    answers_page_after_page(env)


def answers_page_after_page(env):
    """Then `make run` serves it: gunicorn with the Makefile's SERVE_ARGS, answering page after page over one
    kept-alive connection (runserver would not keep it)."""
    import http.client

    with served_like_make_run(env) as port:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        sockets = []
        for path, status in (("/", 200), ("/api/v1/offers/?gpu=h100", 200), ("/providers/", 200), ("/healthz", 200),
                             ("/no-such-page/", 404)):
            connection.request("GET", path)
            response = connection.getresponse()
            body = response.read()
            assert response.status == status, (path, body[:300])
            assert b"URLconf" not in body and b"DEBUG = True" not in body  # the site's own pages, DEBUG off
            assert response.getheader("Server", "").startswith("gunicorn")
            assert response.getheader("Connection", "").lower() != "close"
            sockets.append(connection.sock)
        assert all(sock is sockets[0] for sock in sockets)  # one connection, kept alive throughout
        connection.close()


@pytest.mark.django_db
def test_the_snapshot_prices_26_providers_and_no_gpu_count_contradicts_its_skus_facts():
    from scrapers import aws_catalog, azure, gcp_catalog
    from scrapers.upstream import RECORDED

    snapshot_load()
    priced = Provider.objects.filter(offers__is_active=True, offers__price_hour_usd__isnull=False).distinct()
    assert priced.count() >= 26, sorted(priced.values_list("slug", flat=True))
    active = Offer.objects.filter(is_active=True)
    for instance_type, count, fraction in active.filter(provider__slug="azure").values_list(
            "instance_type", "gpu_count", "gpu_fraction"):
        size = azure.SIZES.get(instance_type)
        if size is not None:
            assert (count, fraction) == (Decimal(size.gpu_count), size.gpu_fraction), instance_type
    assert active.get(instance_type="Standard_ND96isr_H100_v5", region="eastus").gpu_count == 8
    facts = aws_catalog.parse_instance_types((RECORDED / "aws-catalog" / "instance-types.md").read_text())
    for instance_type, count, fraction in active.filter(provider__slug="aws").values_list(
            "instance_type", "gpu_count", "gpu_fraction"):
        assert count == (facts[instance_type].gpu_count or fraction), instance_type
    for instance_type, count in active.filter(provider__slug="gcp").values_list("instance_type", "gpu_count"):
        gpus = gcp_catalog.machine_gpus(instance_type)
        assert gpus is None or count == gpus[2], instance_type
    # CoreWeave's 34 daily editions make a real history: dated by the scrapes, starting with the first one.
    from scrapers import coreweave

    history = PriceObservation.objects.filter(offer__source__slug="coreweave-tracker")
    days = {moment.date().isoformat() for moment in history.values_list("observed_at", flat=True)}
    assert "2026-03-13" in days and days <= set(coreweave.EDITIONS) and len(days) > 1
    # Every offer of the upstream files carries its data's own date, never the load time.
    loaded = timezone.now() - timedelta(hours=1)
    for slug in ("aws-catalog", "gcp-catalog", "coreweave-tracker", "curated-crusoe"):
        dates = active.filter(source__slug=slug).values_list("price_as_of", flat=True)
        assert dates and all(day is not None and day < loaded for day in dates), slug
