"""Browser fixtures: Debian's headless Chromium, driven by Playwright, against the live server.

Without Chromium the browser tests skip, so `make test` passes on a machine that lacks it; when the
environment variable CI is set (`.ci/run` installs Chromium from Debian), a missing Chromium fails.
"""

from __future__ import annotations

import io
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from django.core.management import CommandError, call_command

from tests.browser.worker import in_worker
from tests.collaboration.servers import live_asgi_server  # noqa: F401 - the fixture
from tests.conftest import EXAMPLE_SITE

ROOT = Path(__file__).resolve().parents[2]
DEMO_NOTES = ROOT / "demo" / "content" / "notes"
SCREENSHOTS = ROOT / "test-artifacts" / "screenshots"
# SCIDRAFT_CHROMIUM names another Chromium binary; Playwright never downloads one here.
CHROMIUM = Path(
    os.environ.get("SCIDRAFT_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
)
# Without the background-networking switches Chromium keeps calling Google's services.
CHROMIUM_ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _on_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def _unavailable(reason: str):
    if _on_ci():
        pytest.fail(
            f"{reason}, and CI is set: .ci/run must install Debian's chromium", pytrace=False
        )
    pytest.skip(f"{reason}: browser tests need Debian's chromium (apt-get install chromium)")


@pytest.fixture(scope="package")
def browser():
    """One headless Chromium for the browser tests; each test opens its own context.

    Playwright's sync API leaves its event loop marked as running in the main thread between
    calls, which Django takes for an async context; the database work of these tests is plain
    synchronous code, so the guard is lifted while the browser is open, and only then. The
    package scope stops Playwright (and restores the guard) before the rest of the suite runs.
    """
    if not (CHROMIUM.is_file() and os.access(CHROMIUM, os.X_OK)):
        _unavailable(f"no Chromium at {CHROMIUM}")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("the playwright package is not installed")
    with pytest.MonkeyPatch.context() as patch, sync_playwright() as playwright:
        patch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield browser
        browser.close()


def _seed_demo() -> None:
    out = io.StringIO()
    try:
        call_command("seed_demo", stdout=out)
    except CommandError as error:
        raise AssertionError(f"seed_demo failed: {error}\n{out.getvalue()}") from error


@pytest.fixture
def demo_site(browser, transactional_db, live_server):
    """The live server's base URL, with the demo content loaded where its thread can see it.

    The demo is loaded from a worker thread: the main thread holds Playwright's event loop, in
    which the math engine (mini-racer) refuses to run.
    """
    in_worker(_seed_demo)
    return live_server.url


def _import_example_site() -> None:
    out = io.StringIO()
    try:
        call_command("import_hugo", str(EXAMPLE_SITE), stdout=out)
    except CommandError as error:
        raise AssertionError(f"import_hugo failed: {error}\n{out.getvalue()}") from error


@pytest.fixture
def example_site_live(browser, transactional_db, live_server):
    """The live server's base URL with the theme's real example site imported (70 notes, its
    pages and bibliographies), for comparing pages with the reference screenshots. Skips where
    ../shared is not beside the checkout."""
    if not EXAMPLE_SITE.is_dir():
        pytest.skip("../shared/reference/scidraft-exampleSite is not beside the checkout")
    in_worker(_import_example_site)
    return live_server.url


@dataclass
class Recorder:
    """What one page did on the network and in its console."""

    host: str
    requests: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    csp: list[str] = field(default_factory=list)

    def attach(self, page) -> None:
        page.on("request", lambda request: self.requests.append(request.url))
        page.on(
            "requestfailed",
            # net::ERR_ABORTED is the browser cancelling a request because the test navigated
            # on (a favicon still loading, say), not a request the server failed.
            lambda request: (
                None
                if request.failure == "net::ERR_ABORTED"
                else self.failed.append(f"{request.url}: {request.failure}")
            ),
        )
        page.on(
            "response",
            lambda response: (
                self.failed.append(f"{response.url}: HTTP {response.status}")
                if response.status >= 400
                else None
            ),
        )
        page.on("console", self._console)
        page.on("pageerror", lambda error: self.errors.append(f"uncaught: {error}"))

    def _console(self, message) -> None:
        if "Content Security Policy" in message.text:
            self.csp.append(message.text)
        if message.type == "error":
            where = message.location.get("url", "")
            self.errors.append(f"{message.text} ({where})" if where else message.text)

    def foreign(self) -> list[str]:
        """Requests to any host but the live server's (data: and blob: URLs stay in the page)."""
        return [
            url
            for url in self.requests
            if urlsplit(url).scheme not in ("data", "blob") and urlsplit(url).netloc != self.host
        ]


def _page_opener(browser, base_url):
    """`open_page(**context_options)` -> (page, recorder), each in a fresh context."""
    contexts = []

    def open_page(**options):
        context = browser.new_context(base_url=base_url, **options)
        context.set_default_timeout(10_000)
        contexts.append(context)
        page = context.new_page()
        recorder = Recorder(host=urlsplit(base_url).netloc)
        recorder.attach(page)
        return page, recorder

    return open_page, contexts


@pytest.fixture
def new_page(browser, demo_site):
    """Open a page of the demo site in a fresh context: `new_page(**context_options)` returns
    (page, recorder)."""
    open_page, contexts = _page_opener(browser, demo_site)
    yield open_page
    for context in contexts:
        context.close()


@pytest.fixture
def new_example_page(browser, example_site_live):
    """As new_page, on the imported example site."""
    open_page, contexts = _page_opener(browser, example_site_live)
    yield open_page
    for context in contexts:
        context.close()


@pytest.fixture
def editor_site(browser, transactional_db, live_server):
    """The live server with ada, an Author, and her bibliography bib/refs.bib (EDITOR_BIB)."""
    from bibliography.services import bibfile_import
    from tests.browser.editing import EDITOR_BIB
    from tests.browser.test_editor import _author

    def setup():
        bibfile_import(name="bib/refs.bib", raw=EDITOR_BIB, owner=_author("ada"))

    in_worker(setup)
    return live_server.url


@pytest.fixture
def open_editor(browser, editor_site):
    """`open_editor(note, **context)` → the editor page of `note`, signed in as ada; the page's
    `errors` collects script errors and CSP reports."""
    from tests.browser.editing import BODY, signed_in

    pages = []

    def opener(note, **options):
        page = signed_in(browser, editor_site, "ada", **options)
        pages.append(page)
        page.goto(f"/write/{note.pk}/")
        page.locator(BODY).wait_for()
        return page

    yield opener
    for page in pages:
        page.context.close()


@pytest.fixture(scope="session")
def screenshots() -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS


@pytest.fixture(autouse=True)
def _live_editing_over_asgi_only(request, settings):
    """Writing together needs the ASGI server: the pages of pytest-django's live server (WSGI,
    no sockets) are those of a site without it, as a deployment without the `live` service
    would set LIVE_EDITING; those of the in-process daphne (live_site, live_asgi_server)
    have it."""
    settings.LIVE_EDITING = bool({"live_site", "live_asgi_server"} & set(request.fixturenames))


@pytest.fixture
def live_site(editor_site, live_asgi_server):  # noqa: F811 - the imported fixture
    """The editor_site's database (ada, her bibliography) served over ASGI, pages and the
    /live/ sockets of writing together on one origin: the base URL."""
    from tests.browser.asgi_server import serve_pages, wait_until_idle

    yield serve_pages(live_asgi_server)
    wait_until_idle(live_asgi_server)
