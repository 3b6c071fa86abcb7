"""Peak memory of the web pod's processes under load: what deploy/kubernetes/web-deployment.yaml's memory limit is
set from (docs/operations.md, "Memory").

Serves the site with the web Deployment's gunicorn arguments (2 workers x 4 threads, gthread) and production
settings against DATABASE_URL (load it first: `manage.py migrate && manage.py load_snapshot`, or bench/scale.py's
data for more offers), then CONCURRENCY clients request every page, the API (JSON and whole-table CSV), charts and
the advice API for SECONDS, while the resident memory (RSS) of the gunicorn master and its workers is summed every
0.2 s from /proc. Prints the peak and the limit it implies (1.3x, rounded up to 128 MiB).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/h_ops .venv/bin/python bench/memory.py [--seconds 60]
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import secrets
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench import _targets  # noqa: E402

WEB_LIMIT_MIB = 1536  # deploy/kubernetes/web-deployment.yaml, resources.limits.memory of the web container
GUNICORN_ARGS = ["--worker-class", "gthread", "--workers", "2", "--threads", "4", "--timeout", "60"]
PATHS = ["/", "/?gpu=h100", "/charts/", "/gpus/", "/providers/", "/compare/", "/sources/", "/advisor/",
         "/api/v1/offers/", "/api/v1/offers/?page_size=500", "/api/v1/offers/?format=csv", "/api/v1/gpus/",
         "/api/v1/providers/", "/api/schema/", "/digest/subscribe/"]
ADVICE = json.dumps({"kind": "inference", "model": "llama-3.1-70b", "replicas": 1}).encode()  # as tests/advisor sends


def rss_mib(pid: int) -> float:
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    total = 0
    for process in [pid, *map(int, children)]:
        try:
            for line in Path(f"/proc/{process}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except FileNotFoundError:
            continue
    return total / 1024


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=60)
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "comparator.settings.production",
           "DJANGO_SECRET_KEY": secrets.token_urlsafe(64), "DJANGO_SSL_REDIRECT": "0", "DJANGO_SECURE_COOKIES": "0",
           "HEALTH_CHECK_REDIS": "0", "API_ANON_RATE": "off", "API_ADVISE_RATE": "off",
           "SITE_URL": f"http://127.0.0.1:{port}"}
    subprocess.run([sys.executable, "manage.py", "collectstatic", "--noinput", "-v0"], cwd=ROOT, env=env, check=True)
    server = subprocess.Popen([str(Path(sys.executable).parent / "gunicorn"), "comparator.wsgi", "--bind",
                               f"127.0.0.1:{port}", *GUNICORN_ARGS], cwd=ROOT, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(f"{base}/healthz?probe=live", timeout=2).close()
                break
            except OSError:
                time.sleep(0.3)
        idle = rss_mib(server.pid)
        stop = time.monotonic() + args.seconds
        counts = {"ok": 0, "error": 0}
        kinds: dict[str, int] = {}  # what the errors were: HTTP status and path, or the exception
        peak = [idle]

        def client(offset: int) -> None:
            for path in itertools.islice(itertools.cycle(PATHS), offset, None):
                if time.monotonic() > stop:
                    return
                request = urllib.request.Request(base + path)
                if path == "/advisor/":
                    request = urllib.request.Request(f"{base}/api/v1/advise/", data=ADVICE,
                                                     headers={"Content-Type": "application/json"})
                try:
                    with urllib.request.urlopen(request, timeout=60) as response:
                        response.read()
                    counts["ok"] += 1
                except (urllib.error.URLError, OSError) as error:
                    counts["error"] += 1
                    kind = f"{error.code} {path}" if isinstance(error, urllib.error.HTTPError) else (
                        f"{type(error).__name__} {path}")
                    kinds[kind] = kinds.get(kind, 0) + 1

        threads = [threading.Thread(target=client, args=(index,)) for index in range(args.concurrency)]
        for thread in threads:
            thread.start()
        while any(thread.is_alive() for thread in threads):
            peak[0] = max(peak[0], rss_mib(server.pid))
            time.sleep(0.2)
        limit = math.ceil(peak[0] * 1.3 / 128) * 128
        print(f"idle {idle:.0f} MiB; peak {peak[0]:.0f} MiB under {args.concurrency} clients for {args.seconds} s "
              f"({counts['ok']} answers, {counts['error']} errors); limit at 1.3x: {limit} MiB")
        for kind, number in sorted(kinds.items(), key=lambda item: -item[1]):
            print(f"  error {kind}: {number}")
        print()
        # Issue #40: the web pod's memory limit >= 1.3x its measured peak under load.
        _targets.at_most(f"web peak RSS x 1.3 under {args.concurrency} clients (pod limit "
                         f"{WEB_LIMIT_MIB} MiB, deploy/kubernetes/web-deployment.yaml)", peak[0] * 1.3, WEB_LIMIT_MIB,
                         "MiB", digits=0)
        _targets.line("errors under load", str(counts["error"]), "0", counts["error"] == 0)
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
