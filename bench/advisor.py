"""What one advice costs, and what advice costs everyone else (issue #39's targets).

Serves the site as `make run` does (tests/served.py: gunicorn with the Makefile's SERVE_ARGS, 2 workers x 4
threads) against DATABASE_URL with the rate limits off (load it first: `manage.py migrate && manage.py
load_snapshot`), then:

1. **70B FP16 8k**: N advice requests for llama-3.1-70b at FP16 with an 8,192-token context, every request
   different (the concurrency asked for runs 1..N), one at a time: wall time per answer, and the CPU seconds the
   server's processes spent per advice (from /proc, user + system).
2. **Fuzzed**: a seeded set of advice requests drawn from the form's own choices (kind, model, precision, context,
   replicas, GPUs per node, nodes, sharing, spot, must-haves, continents), one at a time: the worst wall time, and
   how many were answered 200, refused 400 (a combination the advisor rules out, with its reason) or 503 (over the
   advisor's time budget, settings.ADVISOR_BUDGET_SECONDS).
3. **Everyone else**: the p50 of other pages (the offers page and the API with different filters each time, the
   GPU and provider pages) idle, then while 8 clients keep asking for advice.

    DATABASE_URL=sqlite:////tmp/snapshot.sqlite3 .venv/bin/python bench/advisor.py [--fuzzed 500] [--seed 39]

Ends with one line per target (bench/_targets.py)."""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench import _targets  # noqa: E402
from tests.served import served_like_make_run  # noqa: E402

PAGES = ["/?gpu={gpu}", "/?provider={provider}", "/api/v1/offers/?gpu={gpu}&page_size={size}",
         "/api/v1/offers/?provider={provider}&gpu_count_min={count}", "/gpus/{gpu}/", "/providers/{provider}/",
         "/api/v1/offers/?price_per_gpu_hour_max={price}"]


def server_cpu_seconds(port: int) -> float:
    """User + system CPU of every process serving `port` (gunicorn's master and workers, found by command line)."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if f"127.0.0.1:{port}" not in (entry / "cmdline").read_bytes().decode(errors="replace"):
                continue
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of stat)
    return total / ticks


def post_advice(base: str, body: dict) -> tuple[int, float, float]:
    """(status, seconds, Retry-After in seconds or 0)."""
    request = urllib.request.Request(f"{base}/api/v1/advise/", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    started = time.perf_counter()
    retry_after = 0.0
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            response.read()
            status = response.status
    except urllib.error.HTTPError as error:
        error.read()
        status = error.code
        retry_after = float(error.headers.get("Retry-After") or 0)
    return status, time.perf_counter() - started, retry_after


def get(base: str, path: str) -> float:
    started = time.perf_counter()
    with urllib.request.urlopen(base + path, timeout=120) as response:
        response.read()
    return time.perf_counter() - started


def choices() -> dict[str, list]:
    """The advice form's own choices (advisor.serializers.AdviseInputSerializer), so the fuzz follows the form, and
    the GPU models and providers that have offers in this database, for the other pages."""
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "comparator.settings.local")
    django.setup()
    from advisor.serializers import AdviseInputSerializer
    from providers.models import Offer

    fields = AdviseInputSerializer().fields
    form = {name: list(getattr(fields[name], "child", fields[name]).choices)
            for name in ("kind", "model", "precision", "sharing", "continents", "must_haves")}
    live = Offer.objects.filter(is_active=True, gpu__isnull=False)
    form["gpus"] = sorted(set(live.values_list("gpu__slug", flat=True)))
    form["providers"] = sorted(set(live.values_list("provider__slug", flat=True)))
    return form


def fuzzed(rng: random.Random, form: dict[str, list]) -> dict:
    """One advice request drawn from the form's choices."""
    body = {"kind": rng.choice(form["kind"]), "model": rng.choice(form["model"]),
            "precision": rng.choice(form["precision"]),
            "context_tokens": rng.choice([2048, 8192, 32768, 131072, 1_000_000]),
            "replicas": rng.choice([1, 1, 2, 4]), "spot_ok": rng.random() < 0.3,
            "sharing": rng.choice(form["sharing"]) if rng.random() < 0.3 else "whole"}
    if rng.random() < 0.3:
        body["gpus_per_node"] = rng.choice([1, 2, 4, 8])
    if rng.random() < 0.2:
        body["nodes"] = rng.choice([1, 2, 4])
    if rng.random() < 0.3:
        body["continents"] = [rng.choice(form["continents"])]
    if rng.random() < 0.3:
        body["must_haves"] = rng.sample(form["must_haves"], rng.randint(1, 2))
    return body


def page_paths(rng: random.Random, count: int, form: dict[str, list]) -> list[str]:
    """`count` page requests, each different (the filters drawn at random, the page number counting up)."""
    paths = []
    for index in range(count):
        paths.append(PAGES[index % len(PAGES)].format(
            gpu=rng.choice(form["gpus"]), provider=rng.choice(form["providers"]), size=rng.randint(10, 100),
            count=rng.choice([1, 2, 4, 8]), price=f"{rng.uniform(0.5, 9):.2f}"))
    return paths


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--single", type=int, default=10, help="70B FP16 8k advice requests")
    parser.add_argument("--fuzzed", type=int, default=500, help="fuzzed advice requests")
    parser.add_argument("--pages", type=int, default=70, help="page requests per phase (idle, under advice)")
    parser.add_argument("--seed", type=int, default=39)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    form = choices()
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": os.environ.get("DJANGO_SETTINGS_MODULE",
                                                                  "comparator.settings.local"),
           "API_ANON_RATE": "off", "API_ADVISE_RATE": "off", "HEALTH_CHECK_REDIS": "0"}
    with served_like_make_run(env) as port:
        base = f"http://127.0.0.1:{port}"
        for warm in ("/", "/api/v1/offers/", "/gpus/"):
            get(base, warm)
        post_advice(base, {"kind": "inference", "model": "llama-3.1-8b"})  # warm

        cpu_before = server_cpu_seconds(port)
        single = []
        for concurrency in range(1, args.single + 1):
            status, seconds, _ = post_advice(base, {"kind": "inference", "model": "llama-3.1-70b", "precision": "fp16",
                                                 "context_tokens": 8192, "concurrency": concurrency})
            assert status == 200, f"70B FP16 8k advice answered {status}"
            single.append(seconds)
        cpu_per_advice = (server_cpu_seconds(port) - cpu_before) / args.single
        print(f"70B FP16 8k, {args.single} different requests one at a time: p50 {statistics.median(single):.3f} s, "
              f"max {max(single):.3f} s; server CPU {cpu_per_advice:.3f} s per advice")

        statuses: dict[int, int] = {}
        worst = (0.0, {})
        for _ in range(args.fuzzed):
            body = fuzzed(rng, form)
            status, seconds, _ = post_advice(base, body)
            statuses[status] = statuses.get(status, 0) + 1
            worst = max(worst, (seconds, body), key=lambda pair: pair[0])
        print(f"fuzzed, {args.fuzzed} requests (seed {args.seed}): answers {dict(sorted(statuses.items()))}; worst "
              f"{worst[0]:.3f} s for {json.dumps(worst[1])}")

        idle = [get(base, path) for path in page_paths(rng, args.pages, form)]
        stop = threading.Event()
        advised = {"answered": 0, "busy": 0}

        def adviser(seed: int) -> None:
            """A client asking for advice again and again, waiting as Retry-After says when the server is busy."""
            own = random.Random(seed)
            while not stop.is_set():
                status, _, retry_after = post_advice(base, {"kind": "inference", "model": own.choice(form["model"]),
                                                            "context_tokens": 8192,
                                                            "concurrency": own.randint(1, 64)})
                advised["answered" if status == 200 else "busy"] += 1
                stop.wait(retry_after)

        threads = [threading.Thread(target=adviser, args=(args.seed + index,)) for index in range(8)]
        for thread in threads:
            thread.start()
        time.sleep(2)  # let every adviser have a request in flight
        try:
            loaded = [get(base, path) for path in page_paths(rng, args.pages, form)]
        finally:
            stop.set()
            for thread in threads:
                thread.join()
        ratio = statistics.median(loaded) / statistics.median(idle)
        print(f"other pages, {args.pages} different requests: p50 idle {statistics.median(idle) * 1000:.1f} ms, "
              f"under 8 advice clients {statistics.median(loaded) * 1000:.1f} ms ({ratio:.2f}x; meanwhile "
              f"{advised['answered']} advice answered, {advised['busy']} told to retry)")
        print()
        _targets.at_most("70B FP16 8k advice, slowest of the different requests", max(single), 1.0, "s", digits=3)
        _targets.at_most(f"worst of {args.fuzzed} fuzzed advice requests", worst[0], 2.0, "s", digits=3)
        _targets.at_most("other pages' p50 under 8 concurrent advice clients over idle", ratio, 3.0)


if __name__ == "__main__":
    main()
