"""Operator endpoints (plumbing): `/healthz` for the orchestrator's probes and `/metrics` for Prometheus.

- `GET /healthz` is the readiness probe: "this pod can serve pages", which needs the database and nothing else
  (the cache is optional, comparator/cache.py; the broker only carries background work and confirmation emails).
  200 `{"status": "ok", "database": "ok", "broker": ..., "cache": ...}` while the database answers, 503 with
  `"database": "unreachable"` when it does not. The broker's and the cache's state are reported truthfully
  (`ok`, `unreachable`, or `not used`) but never fail the probe: taking healthy web pods out of the Service because
  Redis is down would turn a slower site into no site. Every check is bounded (database connect timeout,
  CHECK_TIMEOUT_SECONDS for Redis, run side by side), so the probe answers within a few seconds whatever hangs.
  `GET /healthz?probe=live` checks only that the process answers: a liveness probe must not restart every pod
  because a dependency is down (restarts would not bring it back).
- `GET /metrics` is the Prometheus text format (version 0.0.4), written here rather than with prometheus_client: the
  numbers are read from the database per scrape (every web process answers the same), so there is no in-process
  registry to keep; the exceptions are the dependency gauges (checked at the scrape) and the cache failures of the
  process that answers. Per source: last success (timestamp and age) and runs by outcome; active offers by provider;
  digest deliveries by outcome and sending problems. With settings.METRICS_TOKEN set, a
  `Authorization: Bearer <token>` header is required; without it only loopback clients may read it.

Both are exempt from the HTTPS redirect (production settings), since kubelet and Prometheus call the pod directly.
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
import time
from concurrent.futures import ThreadPoolExecutor

import redis
from django.conf import settings
from django.core.cache import caches
from django.db import connection
from django.db.models import Count, OuterRef, Subquery
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from comparator.cache import OptionalRedisCache, failures

logger = logging.getLogger(__name__)

CHECK_TIMEOUT_SECONDS = 2.0
NOT_USED = "not used"


def _database() -> str:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as exc:  # any failure means "not ready"; the reason goes to the log, not to the client
        logger.warning("healthz: database check failed: %s", exc)
        return "unreachable"
    return "ok"


def _broker() -> str:
    if not getattr(settings, "HEALTH_CHECK_REDIS", True):
        return NOT_USED
    client = redis.Redis.from_url(settings.CELERY_BROKER_URL, socket_timeout=CHECK_TIMEOUT_SECONDS,
                                  socket_connect_timeout=CHECK_TIMEOUT_SECONDS)
    try:
        client.ping()
    except redis.RedisError as exc:
        logger.warning("healthz: broker check failed: %s", exc)
        return "unreachable"
    finally:
        client.close()
    return "ok"


def _cache() -> str:
    shared = caches["default"]
    if not isinstance(shared, OptionalRedisCache):
        return NOT_USED  # this process's memory (the embedded default)
    return "ok" if shared.available() else "unreachable"


def dependencies() -> dict[str, str]:
    """The state of each dependency: database, broker, cache (Redis checks run beside the database's)."""
    with ThreadPoolExecutor(max_workers=2) as pool:
        broker, shared_cache = pool.submit(_broker), pool.submit(_cache)
        database = _database()
        return {"database": database, "broker": broker.result(), "cache": shared_cache.result()}


@never_cache
@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    if request.GET.get("probe") == "live":
        return JsonResponse({"status": "ok"})
    state = dependencies()
    ready = state["database"] == "ok"
    return JsonResponse({"status": "ok" if ready else "unavailable", **state}, status=200 if ready else 503)


# --- Prometheus ----------------------------------------------------------------------------------------------


def _label(value: object) -> str:
    return str(value).replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _labels(**labels: object) -> str:
    return "{" + ",".join(f'{name}="{_label(value)}"' for name, value in labels.items()) + "}" if labels else ""


class _Exposition:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def family(self, name: str, kind: str, help_text: str, samples: list[tuple[dict, float]]) -> None:
        self.lines += [f"# HELP {name} {help_text}", f"# TYPE {name} {kind}"]
        self.lines += [f"{name}{_labels(**labels)} {value:.17g}" for labels, value in samples]

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


def metrics_text(now: float | None = None) -> str:
    """Everything /metrics exposes, read from the database now (a few aggregate queries)."""
    from digest.models import Delivery, DeliveryStatus, SendProblem
    from providers.models import DataSource, Offer, RunStatus, ScrapeRun
    from providers.versions import tally

    now = time.time() if now is None else now
    out = _Exposition()
    sources = list(DataSource.objects.select_related("provider").order_by("slug"))
    last_success = [({"source": s.slug, "kind": s.kind, "provider": s.provider.slug}, s.last_success_at.timestamp())
                    for s in sources if s.last_success_at]
    out.family("comparator_source_last_success_timestamp_seconds", "gauge",
               "Unix time of the source's last successful live run (sources that never succeeded are absent).",
               last_success)
    out.family("comparator_source_last_success_age_seconds", "gauge",
               "Seconds since the source's last successful live run.",
               [(labels, max(0.0, now - stamp)) for labels, stamp in last_success])
    out.family("comparator_source_never_succeeded", "gauge",
               "1 for a source that has never had a successful live run.",
               [({"source": s.slug, "kind": s.kind, "provider": s.provider.slug}, 1) for s in sources
                if not s.last_success_at])
    runs = ScrapeRun.objects.filter(offline=False).values_list("source__slug", "status").annotate(n=Count("id"))
    out.family("comparator_source_runs_total", "counter", "Live runs of each source by outcome.",
               [({"source": slug, "status": status}, n) for slug, status, n in sorted(runs)])
    latest_status = (ScrapeRun.objects.filter(source=OuterRef("pk"), offline=False)
                     .exclude(status=RunStatus.RUNNING).order_by("-started_at").values("status")[:1])
    latest = dict(DataSource.objects.annotate(status=Subquery(latest_status)).filter(status__isnull=False)
                  .values_list("slug", "status"))
    out.family("comparator_source_last_run_succeeded", "gauge",
               "1 if the source's latest finished live run succeeded, else 0.",
               [({"source": slug}, 1 if status == RunStatus.SUCCEEDED else 0)
                for slug, status in sorted(latest.items())])
    offers = Offer.objects.filter(is_active=True).values_list("provider__slug").annotate(n=Count("id"))
    out.family("comparator_offers_active", "gauge", "Active offers by provider.",
               [({"provider": slug}, n) for slug, n in sorted(offers)])
    deliveries = Delivery.objects.values_list("status").annotate(n=Count("id"))
    out.family("comparator_digest_deliveries_total", "counter",
               "Weekly digest deliveries by outcome (sent, skipped: no change, failed, unknown).",
               [({"status": status}, n) for status, n in sorted(deliveries)])
    problems = dict(SendProblem.objects.values_list("kind").annotate(n=Count("id")))
    out.family("comparator_digest_send_problems_total", "counter",
               "Digest runs stopped by a relay or message failure, or by a message without a reply (alert on rise).",
               [({"kind": kind}, problems.get(kind, 0)) for kind in ("outcome_unknown", "relay_failure")])
    out.family("comparator_digest_outcome_unknown_awaiting_decision", "gauge",
               "Digests sent in full without a reply, not sent again until the operator decides (admin, Deliveries).",
               [({}, Delivery.objects.filter(status=DeliveryStatus.UNKNOWN).count())])
    state = dependencies()
    out.family("comparator_dependency_up", "gauge",
               "1 if the dependency answered this scrape, 0 if not (absent: not used by this deployment).",
               [({"dependency": name}, 1 if value == "ok" else 0) for name, value in state.items()
                if value != NOT_USED])
    out.family("comparator_cache_failures_total", "counter",
               "Cache operations that failed and were served without the cache, in the process that answered.",
               [({}, failures.count)])
    out.family("comparator_kept_lookups_total", "counter",
               "Reads of values kept until the data changes, in the process that answered: `remembered` lookups "
               "(catalog slugs, capability and profile ids, left-out counts); hit or miss.",
               [({"cache": cache, "result": result}, tally.counts[cache, result])
                for cache in tally.CACHES for result in ("hit", "miss")])
    out.family("comparator_metrics_generated_timestamp_seconds", "gauge", "When this exposition was read.",
               [({}, timezone.now().timestamp())])
    return out.text()


@never_cache
@require_GET
def metrics(request: HttpRequest) -> HttpResponse:
    """With METRICS_TOKEN set, only a request with `Authorization: Bearer <token>`; without it, only a client on this
    machine (loopback: `make run`, a sidecar), never the public (deploy/kubernetes sets a token)."""
    token = getattr(settings, "METRICS_TOKEN", "")
    if token:
        given = request.headers.get("Authorization", "").removeprefix("Bearer ").strip()
        if not hmac.compare_digest(given.encode(), token.encode()):
            return HttpResponse("unauthorised\n", status=401, content_type="text/plain; charset=utf-8")
    elif not ipaddress.ip_address(request.META.get("REMOTE_ADDR") or "0.0.0.0").is_loopback:
        return HttpResponse("set METRICS_TOKEN to read /metrics from another machine\n", status=403,
                            content_type="text/plain; charset=utf-8")
    return HttpResponse(metrics_text(), content_type="text/plain; version=0.0.4; charset=utf-8")
