"""Browser tests: Playwright driving Debian's Chromium (/usr/bin/chromium, installed by `make test`'s `browser`
prerequisite; never a downloaded browser) against pytest-django's live server on loopback.

Without Chromium these tests are skipped, except in CI (REQUIRE_SERVICES=1), where a missing browser fails the run.
Every page a test opens is watched: a console error, an uncaught exception or a request to anything but the live
server fails the test, so a CDN reference or a broken script cannot slip in.
"""

import os
from pathlib import Path
from urllib.parse import urlsplit

import pytest

# Playwright's sync API runs an event loop in this thread; the ORM calls made by the tests themselves are safe.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM = Path("/usr/bin/chromium")
REQUIRE_SERVICES = os.environ.get("REQUIRE_SERVICES") == "1"
SCREENSHOTS = Path(__file__).resolve().parents[2] / "screenshots"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]


@pytest.fixture(scope="session")
def browser():
    if not CHROMIUM.exists():
        message = f"{CHROMIUM} is missing: `make test` installs it (apt-get install chromium)"
        if REQUIRE_SERVICES:
            pytest.fail(message)
        pytest.skip(message)
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield chromium
        chromium.close()


class PageWatch:
    """Console errors, page errors and off-site requests seen by one browser context."""

    def __init__(self, origin: str):
        self.origin = origin
        self.problems: list[str] = []

    def attach(self, page):
        page.on("console", lambda message: message.type == "error" and self.problems.append(
            f"console error on {page.url}: {message.text}"))
        page.on("pageerror", lambda error: self.problems.append(f"uncaught exception on {page.url}: {error}"))

    def route(self, route):
        url = route.request.url
        if urlsplit(url).netloc != urlsplit(self.origin).netloc and not url.startswith("data:"):
            self.problems.append(f"off-site request: {url}")
            return route.abort()
        return route.continue_()


@pytest.fixture
def site(live_server, browser):
    """A fresh browser context on the live server, plus the watch that must stay quiet."""
    watch = PageWatch(live_server.url)

    def new_page(*, language: str | None = None, width: int = 1400, height: int = 1000, javascript: bool = True,
                 zoom: float = 1):
        # Browser zoom is a smaller viewport in CSS pixels drawn at a higher device pixel ratio: 1366x768 at 200%
        # is a 683x384 CSS-pixel page.
        context = browser.new_context(viewport={"width": round(width / zoom), "height": round(height / zoom)},
                                      device_scale_factor=zoom, java_script_enabled=javascript, locale="en-US")
        if language:
            context.add_cookies([{"name": "django_language", "value": language, "url": live_server.url}])
        context.route("**/*", watch.route)
        context.on("page", watch.attach)
        page = context.new_page()
        watch.attach(page)
        contexts.append(context)
        return page

    contexts = []
    new_page.url = live_server.url
    new_page.watch = watch
    yield new_page
    for context in contexts:
        context.close()
    assert watch.problems == []


def screenshot(page, name: str) -> None:
    SCREENSHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=False)


@pytest.fixture
def full_snapshot(transactional_db):
    """The bundled snapshot (providers.snapshot.snapshot_load, as `make run` loads it) for one browser test. The live
    server makes every browser test transactional (flushed after it), so the snapshot is loaded per test, not per
    module like the root conftest's `snapshot`; the pages under test then show every real offer, not a few fixture
    rows."""
    from providers.snapshot import snapshot_load

    runs, skipped = snapshot_load()
    assert all(run.status == "succeeded" for run in runs) and not skipped
