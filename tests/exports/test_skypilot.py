"""SkyPilot's kubernetes.pricing block validated against SkyPilot's config schema (recorded from
sky/utils/schemas.py with its source in exports/schemas/), with SkyPilot's canonical accelerator names."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import yaml
from django.core.management import call_command
from rest_framework.test import APIClient

SCHEMA_DIR = Path(__file__).resolve().parents[2] / "exports" / "schemas"
SCHEMA = json.loads((SCHEMA_DIR / "skypilot-kubernetes-pricing.json").read_text())


def export(query: str = "") -> tuple[dict, str]:
    response = APIClient().get(f"/api/v1/exports/skypilot/?{query}")
    assert response.status_code == 200, response.content
    text = response.content.decode()
    return yaml.safe_load(text), text


def test_the_block_passes_skypilots_schema_with_canonical_names(machines):
    block, text = export()
    jsonschema.Draft202012Validator(SCHEMA).validate(block)
    rates = block["kubernetes"]["pricing"]["accelerators"]
    assert set(rates) == {"H100", "L4", "A100-80GB"}
    assert rates["H100"] == 2.99  # the cheapest per-GPU all-in rate among the selected offers (lambda)
    assert "GPU mi300x has no SkyPilot canonical name" in text


def test_every_name_we_write_is_one_of_skypilots_canonical_gpu_names():
    from exports.skypilot import SKYPILOT_NAMES

    recorded = json.loads((SCHEMA_DIR / "skypilot-canonical-gpu-names.json").read_text())
    canonical = set(recorded["names"])
    assert set(SKYPILOT_NAMES.values()) | {"H100-MEGA"} <= canonical
    # AWS's Graviton T4G (g5g) is SkyPilot's T4g, not left out as nameless
    assert SKYPILOT_NAMES["t4g"] == "T4g" and "T4g" in canonical


def test_per_context_block_passes_the_schema(machines):
    block, _ = export("context=my-eks&provider=aws")
    jsonschema.Draft202012Validator(SCHEMA).validate(block)
    assert block == {"kubernetes": {"context_configs": {"my-eks": {"pricing": {"accelerators": {"H100": 6.88}}}}}}


def test_a_block_breaking_the_schema_fails(machines):
    block, _ = export()
    block["kubernetes"]["pricing"]["accelerators"]["H100"] = -1
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(SCHEMA).validate(block)


def test_the_management_command_writes_the_same_export(machines, tmp_path):
    path = tmp_path / "pricing.yaml"
    call_command("export", "skypilot", "--filter", "provider=aws", "-o", str(path))
    assert yaml.safe_load(path.read_text()) == {"kubernetes": {"pricing": {"accelerators": {"H100": 6.88}}}}


def test_exports_are_throttled_like_the_api(machines, settings, monkeypatch):
    settings.API_ANON_RATE = "1/minute"
    monkeypatch.setattr("providers.limits._now", lambda: 1_800_000_030.0)  # both requests in one window
    client = APIClient()
    assert client.get("/api/v1/exports/skypilot/").status_code == 200
    assert client.get("/api/v1/exports/skypilot/").status_code == 429


def test_exports_share_the_sites_export_slots_and_release_them_unread(machines, settings):
    from providers.limits import export_slot

    settings.API_CSV_EXPORTS_MAX = 1
    client = APIClient()
    for tool in ("opencost", "kueue", "skypilot", "opencost"):  # bodies never read: each slot is already free
        assert client.get(f"/api/v1/exports/{tool}/").status_code == 200
    held = export_slot()
    busy = client.get("/api/v1/exports/kueue/")
    assert busy.status_code == 503 and "detail" in busy.json()
    held.release()


def test_gke_a3_mega_is_priced_under_skypilots_own_name(machines):
    from providers.models import Offer

    mega = Offer.objects.get(instance_type="a3-highgpu-8g", region="us-central1")
    mega.pk, mega.instance_type, mega.price_hour_usd = None, "a3-megagpu-8g", mega.price_hour_usd + 1
    mega.save()
    block, _ = export("provider=gcp")
    assert set(block["kubernetes"]["pricing"]["accelerators"]) == {"H100", "H100-MEGA", "L4"}
