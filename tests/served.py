"""The site served as `make run` serves it, for the tests that talk to it over HTTP: the static files collected first
(whitenoise's manifest storage names them; without them every page naming one is a 500), then gunicorn with the
Makefile's SERVE_ARGS on a free loopback port. Leaving the block stops gunicorn and fails on any traceback it logged."""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@contextmanager
def served_like_make_run(env: dict) -> Iterator[int]:
    """Yields the port. Collecting is incremental: only changed files are written again."""
    collected = subprocess.run([sys.executable, "manage.py", "collectstatic", "--noinput", "-v0"], cwd=ROOT, env=env,
                               capture_output=True, text=True, timeout=600)
    assert collected.returncode == 0, collected.stderr[-2000:]
    serve_args = re.search(r"^SERVE_ARGS := (.+)$", (ROOT / "Makefile").read_text(), re.M).group(1).split()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen([str(Path(sys.executable).parent / "gunicorn"), "comparator.wsgi",
                               "--bind", f"127.0.0.1:{port}", *serve_args], cwd=ROOT, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert server.poll() is None and time.monotonic() < deadline, "gunicorn did not start"
                time.sleep(0.2)
        yield port
    finally:
        server.terminate()
        _, errors = server.communicate(timeout=30)
    assert "Traceback" not in errors, errors[-2000:]
