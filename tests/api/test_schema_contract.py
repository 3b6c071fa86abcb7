"""The served OpenAPI schema, proved by the tools users run against it, over the bundled snapshot:

- openapi-core (a strict OpenAPI 3.1 validator) checks the real answers of every operation, for every status the
  API gives (200, 304, 400, 404, 405, 406, 415, 429), against /api/schema/: no answer may break it;
- a client generated from the same schema by openapi-python-client (generated into tmp_path, imported) lists offers
  with filters, pages through them, reads one, compares, asks for advice (a 429 too) and downloads CSV, parsing
  every answer into its typed models.

Both talk to the real application through Django's test client (no network)."""

from __future__ import annotations

import csv
import importlib
import io
import json
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
import yaml
from django.core.cache import cache
from django.test import Client
from openapi_core import Config, OpenAPI
from openapi_core.contrib.django import DjangoOpenAPIResponse
from openapi_core.testing import MockRequest

from providers.models import GpuModel, Offer, Provider
from providers.snapshot import snapshot_load

pytestmark = pytest.mark.django_db

SCHEMA_MEDIA_TYPE = "application/vnd.oai.openapi+json"


@pytest.fixture
def snapshot(db, settings):
    settings.API_ANON_RATE = settings.API_ADVISE_RATE = "off"
    snapshot_load()
    return Offer.objects.filter(is_active=True).order_by("id")


def served_schema(client: Client) -> dict:
    response = client.get("/api/schema/", HTTP_ACCEPT=SCHEMA_MEDIA_TYPE)
    assert response.status_code == 200
    return json.loads(response.content)


def operations(schema: dict) -> set[tuple[str, str]]:
    return {(method, path) for path, item in schema["paths"].items() for method in item}


def test_the_schema_is_valid_openapi_31_with_no_security_requirement_and_no_frozen_catalog(api, world):
    from openapi_spec_validator import validate

    schema = served_schema(Client())
    validate(schema)
    assert schema["openapi"].startswith("3.1")
    text = json.dumps(schema)
    assert '"security"' not in text and '"nullable"' not in text
    for slug in [*GpuModel.objects.values_list("slug", flat=True), *Provider.objects.values_list("slug", flat=True)]:
        assert f'"{slug}"' not in text, slug  # catalog values are looked up, not enumerated
    offer = schema["components"]["schemas"]["Offer"]
    assert set(offer["required"]) == set(offer["properties"])  # every field is always sent
    assert offer["properties"]["gpu"]["oneOf"][1] == {"type": "null"}
    for path, item in schema["paths"].items():
        for method, operation in item.items():
            assert {"405", "406"} <= set(operation["responses"]), (method, path)
            assert "Retry-After" in operation["responses"]["429"]["headers"], (method, path)
            assert all(parameter["name"] != "format" for parameter in operation.get("parameters", []))
    for path in ("/api/v1/offers/", "/api/v1/offers.csv"):  # the CSV's only place to say what it left out
        assert {"Left-Out-For-Unknown", "Left-Out-Questions"} <= set(schema["paths"][path]["get"]["responses"]["200"][
            "headers"]), path


ADVICE = [
    {"kind": "inference", "models": [{"count": 2, "memory_gb": 30}], "sharing": "mig"},
    {"kind": "batch", "gpu": "h100", "gpus_per_node": 8, "nodes": 2, "purchase_price_usd": 250000,
     "power_usd_month": 900, "operations_usd_month": 400},
    {"kind": "training", "model": "llama-3.1-8b", "method": "lora", "multi_node": True, "kueue_queue": "team-a"},
    {"kind": "inference", "model": "llama-3.1-70b", "precision": "fp8", "continents": ["EU"], "spot_ok": True},
]


def test_every_answer_of_every_operation_keeps_the_served_schema(snapshot, settings, tmp_path):
    client = Client()
    schema = served_schema(client)
    openapi = OpenAPI.from_dict(schema, config=Config(
        extra_media_type_deserializers={"text/csv": lambda data, **_: data.decode("utf-8"),
                                        "application/yaml": lambda data, **_: yaml.safe_load(data)}))
    offer = snapshot.first()
    calls: list[tuple[str, str, object]] = []  # (method, schema path, response)
    bodies: dict[int, bytes] = {}  # id of a POST's response -> the body it answered

    def get(template: str, path: str, **headers):
        calls.append(("get", template, client.get(path, **headers)))
        return calls[-1][2]

    def post(body, content_type="application/json"):
        data = body if isinstance(body, str) else json.dumps(body)
        calls.append(("post", "/api/v1/advise/", client.post("/api/v1/advise/", data, content_type=content_type)))
        bodies[id(calls[-1][2])] = data.encode()
        return calls[-1][2]

    lists = {  # schema path -> (a real path, queries)
        "/api/v1/offers/": ("/api/v1/offers/", [
            "", "?gpu=h100,a100&ordering=-gpu_memory&ordering=provider", "?kubernetes_reasons=true",
            "?include_inactive=true&one_per_machine=true&page=2", "?mig=yes&rdma=any&spot=true"]),
        "/api/v1/providers/": ("/api/v1/providers/", [""]), "/api/v1/gpus/": ("/api/v1/gpus/", [""]),
        "/api/v1/sources/": ("/api/v1/sources/", [""]),
        "/api/v1/offers/{offer_id}/history/": (f"/api/v1/offers/{offer.id}/history/", [""]),
    }
    for template, (path, queries) in lists.items():
        for query in queries:
            first = get(template, f"{path}{query}")
            get(template, f"{path}{query}", HTTP_IF_NONE_MATCH=first["ETag"])  # 304
        csv_path = path.rstrip("/") + ".csv"
        get(template.rstrip("/") + ".csv", f"{csv_path}{queries[-1]}")
        get(template.rstrip("/") + ".csv", f"{csv_path}?page=1&page_size=5")
        get(template.rstrip("/") + ".csv", f"{csv_path}?page=9999")  # 404
        get(template.rstrip("/") + ".csv", f"{csv_path}?page=x")  # 400
        get(template.rstrip("/") + ".csv", csv_path, HTTP_ACCEPT="application/json")  # 406
        get(template, f"{path}?page=1&page=2")  # 400
        get(template, f"{path}?page=9999")  # 404
        get(template, path, HTTP_ACCEPT="application/xml")  # 406
    # Every page of every offer, with and without the reasons: the strings, nulls and numbers of all of them.
    for reasons in ("false", "true"):
        page = 1
        while page:
            body = get("/api/v1/offers/", f"/api/v1/offers/?include_inactive=true&page_size=500&page={page}"
                                          f"&kubernetes_reasons={reasons}").json()
            page = page + 1 if body["next"] else 0
    # One offer in seven, and every offer whose GPU is not in the catalog (null), is read on its own too.
    for each in snapshot.filter(id__in=[*snapshot.values_list("id", flat=True)[::7],
                                        *snapshot.filter(gpu=None).values_list("id", flat=True)]):
        get("/api/v1/offers/{offer_id}/", f"/api/v1/offers/{each.id}/")
    for slug in Provider.objects.values_list("slug", flat=True):
        get("/api/v1/providers/{slug}/", f"/api/v1/providers/{slug}/")
    for slug in GpuModel.objects.values_list("slug", flat=True):
        get("/api/v1/gpus/{slug}/", f"/api/v1/gpus/{slug}/")
    slugs = sorted(Provider.objects.values_list("slug", flat=True))
    for start in range(0, len(slugs), 10):
        get("/api/v1/compare/", f"/api/v1/compare/?providers={','.join(slugs[start:start + 10])}")
    for template, missing in [("/api/v1/offers/{offer_id}/", "/api/v1/offers/0/"),
                              ("/api/v1/providers/{slug}/", "/api/v1/providers/nope/"),
                              ("/api/v1/gpus/{slug}/", "/api/v1/gpus/nope/"),
                              ("/api/v1/offers/{offer_id}/history/", "/api/v1/offers/0/history/"),
                              ("/api/v1/offers/{offer_id}/history.csv", "/api/v1/offers/0/history.csv")]:
        get(template, missing)
        get(template, missing.replace("nope", slugs[0]).replace("/0/", f"/{offer.id}/"),
            HTTP_ACCEPT="application/xml")
    for query in ["?providers=", "?providers=nope", "?providers=aws&x=1"]:
        get("/api/v1/compare/", f"/api/v1/compare/{query}")
    # The exports (their own formats, the offers' filters) and the open dataset's index and files.
    for tool in ("opencost", "kueue", "skypilot"):
        get(f"/api/v1/exports/{tool}/", f"/api/v1/exports/{tool}/?gpu_count_min=8&gpu_family=H100")
        get(f"/api/v1/exports/{tool}/", f"/api/v1/exports/{tool}/?gpu_count_min=x")  # 400
    settings.DATASET_DIR = str(tmp_path)
    from exports.dataset import dataset_write

    _json, csv_file, _count = dataset_write(directory=tmp_path)
    get("/api/v1/dataset/", "/api/v1/dataset/")
    for name in ("schema.json", csv_file.name, "offers-1999-01-01.json"):  # the last a 404
        get("/api/v1/dataset/{name}", f"/api/v1/dataset/{name}")
    for template, path in [("/api/v1/offers/", "/api/v1/offers/"), ("/api/v1/compare/", "/api/v1/compare/")]:
        calls.append(("get", template, client.post(path, "{}", content_type="application/json")))  # 405
    calls.append(("post", "/api/v1/advise/", client.get("/api/v1/advise/")))  # 405
    for body in ADVICE:
        post(body)
    post({"kind": "batch"})  # 400: a field
    post({"kind": "batch", "gpu": "h100", "must_haves": ["rdma", {}]})  # 400: an item of a list, by index
    post({"kind": "inference", "models": [{"count": 1, "memory_gb": 9}, {"count": 0}]})  # 400: per item
    post({"kind": "inference", "models": [None]})  # 400: an item's own messages
    post("{not json")  # 400: the same shape
    post("kind=batch", content_type="application/x-www-form-urlencoded")  # 415
    settings.API_ANON_RATE, settings.API_ADVISE_RATE = "1/minute", "1/minute"
    cache.clear()
    get("/api/v1/gpus/", "/api/v1/gpus/")
    get("/api/v1/gpus/", "/api/v1/gpus/")  # 429
    post(ADVICE[0])
    post(ADVICE[0])  # 429

    errors = []
    for method, template, response in calls:
        request = response.wsgi_request
        body = bodies.get(id(response))
        mock = MockRequest("http://testserver", method, request.path, path_pattern=template, args=request.GET,
                           data=body)
        try:
            openapi.validate_response(mock, DjangoOpenAPIResponse(response))
        except Exception as error:  # noqa: BLE001 - every failure is collected and reported
            cause = error.__cause__
            detail = [str(e.message) for e in getattr(cause, "schema_errors", [])] or [str(cause or error)]
            errors.append((method, request.get_full_path(), response.status_code, detail[:3]))
    assert errors == [], errors[:10]
    statuses = {status for _, _, response in calls for status in [response.status_code]}
    assert statuses >= {200, 304, 400, 404, 405, 406, 415, 429}
    assert {(method, template) for method, template, _ in calls} == operations(schema)
    assert len(calls) > 500


class DjangoTransport(httpx.BaseTransport):
    """httpx to the application through Django's test client: no socket, the test database, the real middleware."""

    def __init__(self):
        self.client = Client()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        headers = {name: value for name, value in request.headers.items()
                   if name.lower() not in {"host", "content-length", "content-type"}}
        response = self.client.generic(request.method, request.url.raw_path.decode(), data=request.content,
                                       content_type=request.headers.get("content-type", ""), headers=headers)
        content = b"".join(response.streaming_content) if response.streaming else response.content
        return httpx.Response(response.status_code, headers=list(response.items()), content=content)


def generated_client(tmp_path: Path, schema: dict):
    (tmp_path / "schema.json").write_text(json.dumps(schema))
    # The Kueue and SkyPilot exports answer application/yaml, which the generator reads as text once told so
    # (docs/api.md gives users the same line).
    (tmp_path / "config.yaml").write_text("post_hooks: []\nproject_name_override: gpu_api_client\n"
                                          "package_name_override: gpu_api_client\n"
                                          "content_type_overrides:\n  application/yaml: text/plain\n")
    generator = Path(sys.executable).with_name("openapi-python-client")
    run = subprocess.run([str(generator), "generate", "--path", str(tmp_path / "schema.json"), "--meta", "none",
                          "--config", str(tmp_path / "config.yaml"), "--output-path",
                          str(tmp_path / "gpu_api_client")], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "warning" not in (run.stdout + run.stderr).lower(), run.stdout + run.stderr
    sys.path.insert(0, str(tmp_path))
    try:
        return importlib.import_module("gpu_api_client")
    finally:
        sys.path.remove(str(tmp_path))


def test_a_client_generated_from_the_schema_does_what_users_do(snapshot, tmp_path, settings):
    schema = served_schema(Client())
    package = generated_client(tmp_path, schema)
    try:
        api = importlib.import_module("gpu_api_client.api")
        offers = importlib.import_module("gpu_api_client.api.offers.offers_list")
        offers_csv = importlib.import_module("gpu_api_client.api.offers.offers_list_csv")
        offer_get = importlib.import_module("gpu_api_client.api.offers.offers_retrieve")
        compare = importlib.import_module("gpu_api_client.api.compare.compare")
        advise = importlib.import_module("gpu_api_client.api.advise.advise_create")
        models = importlib.import_module("gpu_api_client.models")
        client = package.Client(base_url="http://testserver", raise_on_unexpected_status=True,
                                httpx_args={"transport": DjangoTransport()})
        assert api is not None

        ordering = [models.OffersListOrderingItem("-gpu_memory"), models.OffersListOrderingItem("provider")]
        first = offers.sync(client=client, gpu=["h100"], ordering=ordering, page_size=5)
        assert isinstance(first, models.PaginatedOfferListList) and first.count > 5
        assert len(first.results) == 5 and all(row.gpu.slug == "h100" for row in first.results)
        second = offers.sync(client=client, gpu=["h100"], ordering=ordering, page_size=5, page=2)
        assert {row.id for row in first.results}.isdisjoint(row.id for row in second.results)
        memory = [row.gpu_memory_gb for row in first.results + second.results if row.gpu_memory_gb is not None]
        assert memory == sorted(memory, reverse=True)  # both ordering keys read, the first one first
        reasons = offers.sync(client=client, kubernetes_reasons=True, page_size=3)
        assert all(isinstance(row.kubernetes, models.OfferKubernetes) and row.kubernetes.mig.reason
                   for row in reasons.results)
        every = 0
        page = 1
        while page:  # every offer parses into the typed model, nulls (no catalog GPU) included
            parsed = offers.sync(client=client, include_inactive=True, page_size=500, page=page)
            every += len(parsed.results)
            page = page + 1 if parsed.next_ else 0
        assert every == Offer.objects.count()

        one = offer_get.sync(client=client, offer_id=first.results[0].id)
        assert isinstance(one, models.OfferDetail)  # the offer with its node software
        assert one.price_per_gpu_hour_usd == first.results[0].price_per_gpu_hour_usd

        compared = compare.sync(client=client, providers=["aws", "gcp"])
        assert [provider.slug for provider in compared.providers] == ["aws", "gcp"]
        assert all(answer.provider.slug in {"aws", "gcp"} for question in compared.capabilities
                   for answer in question.answers)

        advice = advise.sync(client=client, body=models.AdviseInput.from_dict(ADVICE[1]))
        assert isinstance(advice, models.AdviceOutput) and advice.options
        assert isinstance(advice.options[0].cost.total_usd, float)
        chosen = advice.options[0].offer  # the same provider and gpu objects as the offers give
        assert isinstance(chosen.provider, models.ProviderRef) and isinstance(chosen.gpu, models.GpuRef)
        assert chosen.gpu.slug == "h100" and isinstance(chosen.price_hour_usd, float)
        refused = advise.sync(client=client, body=models.AdviseInput.from_dict({"kind": "batch"}))
        assert isinstance(refused, models.AdviseCreateResponse400) and "gpu" in refused.additional_properties
        settings.API_ADVISE_RATE = "1/minute"
        cache.clear()
        advise.sync(client=client, body=models.AdviseInput.from_dict(ADVICE[0]))
        limited = advise.sync_detailed(client=client, body=models.AdviseInput.from_dict(ADVICE[0]))
        assert limited.status_code == 429 and isinstance(limited.parsed, models.Error)
        assert int(limited.headers["Retry-After"]) > 0

        text = offers_csv.sync(client=client, gpu=["h100"])
        rows = list(csv.DictReader(io.StringIO(text)))
        assert len(rows) == first.count and {row["gpu.slug"] for row in rows} == {"h100"}
    finally:
        for name in [name for name in sys.modules if name.split(".")[0] == "gpu_api_client"]:
            del sys.modules[name]
