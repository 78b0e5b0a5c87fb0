"""External images are not loaded on the editor's pages, in a real browser.

A "tracker" HTTPS server on another origin (a self-signed certificate made by openssl, which
the browser context accepts) counts the requests it gets: HTTPS, because readers' pages allow
https: images, as a real tracker would use. A note whose body loads an image from it is opened
in the editor and its live preview is updated: the tracker sees no request, and the preview
shows why the image is missing. An image put into the page without the server's rewriting is
stopped by the page's Content-Security-Policy.

Database work that renders runs in a worker thread: the main thread holds Playwright's event
loop, in which the math engine refuses to run.
"""

from __future__ import annotations

import shutil
import ssl
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from django.contrib.auth.models import User
from django.test import Client

from notes import services
from tests.browser.editing import body_text, place_cursor
from tests.browser.worker import in_worker

pytestmark = pytest.mark.browser

# The smallest valid GIF: what a tracking pixel is.
PIXEL = bytes.fromhex(
    "47494638396101000100800000000000ffffff21f90401000000002c00000000010001000002024401003b"
)


def self_signed(folder: Path) -> tuple[Path, Path]:
    """A certificate and key for 127.0.0.1, valid for a day."""
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("openssl is needed to make the tracker's certificate")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        [
            openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
            "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
            "-keyout", str(key), "-out", str(cert),
        ],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return cert, key


class Tracker:
    """An HTTPS image server on 127.0.0.1 (the live server is localhost: another origin)."""

    def __init__(self, cert: Path, key: Path):
        self.paths: list[str] = []
        tracker = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 (http.server's name)
                tracker.paths.append(self.path)
                self.send_response(200)
                self.send_header("Content-Type", "image/gif")
                self.send_header("Content-Length", str(len(PIXEL)))
                self.end_headers()
                self.wfile.write(PIXEL)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        tls.load_cert_chain(cert, key)
        self.server.socket = tls.wrap_socket(self.server.socket, server_side=True)
        self.host = f"127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path: str) -> str:
        return f"https://{self.host}{path}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def tracker(tmp_path):
    server = Tracker(*self_signed(tmp_path))
    yield server
    server.close()


@pytest.fixture
def editor(browser, transactional_db, live_server, tracker):
    """The editor of a note with an external image, opened by its author (an admin, so the
    admin's note page can be opened too), and a way to collect CSP reports from the console."""
    body = f"Before.\n\n![Tracking pixel]({tracker.url('/saved.gif')})\n\nAfter.\n"

    def setup():
        user = User.objects.create_superuser("ada", "ada@example.org", "correct horse battery")
        note = services.note_create(user=user, title="External images")
        note = services.note_save(
            note_id=note.pk, user=user, base_version=note.version, fields={"body": body}
        ).note
        return user, note

    user, note = in_worker(setup)
    client = Client()
    client.force_login(user)
    context = browser.new_context(base_url=live_server.url, ignore_https_errors=True)
    context.set_default_timeout(15_000)
    host = urlsplit(live_server.url).hostname
    cookie = client.cookies["sessionid"].value
    context.add_cookies([{"name": "sessionid", "value": cookie, "domain": host, "path": "/"}])
    page = context.new_page()
    console: list[str] = []
    page.on("console", lambda message: console.append(message.text))
    yield page, note, console
    context.close()


def settle(page, milliseconds: int = 500) -> None:
    """Let the browser start whatever image requests it would."""
    page.wait_for_timeout(milliseconds)


def test_the_editor_preview_loads_no_external_image_and_says_why(editor, tracker):
    """The stored preview and the live one show the note in place of the image; the tracker
    never hears from the browser."""
    page, note, console = editor
    page.goto(f"/write/{note.pk}/")
    notes = page.locator(".editor-preview .external-image-note")
    notes.first.wait_for()
    assert notes.first.text_content() == f"External image not loaded in the editor: {tracker.host}"
    assert page.locator(".editor-preview img.external-image").get_attribute("alt") == (
        "Tracking pixel"
    )

    place_cursor(page, len(body_text(page)))
    page.keyboard.type(f"\n\n![Live]({tracker.url('/live.gif')})\n")
    page.wait_for_function(
        "() => document.querySelectorAll('.editor-preview .external-image-note').length === 2"
    )
    assert page.locator(".editor-preview .external-image-note").nth(1).is_visible()
    settle(page)
    assert tracker.paths == []


def test_the_editor_pages_policy_blocks_an_external_image_put_there_directly(editor, tracker):
    """An <img> that did not go through the server's rewriting (here added by the test) is
    refused by the editor page's CSP, img-src 'self' data:; same-site images still load."""
    page, note, console = editor
    page.goto(f"/write/{note.pk}/")
    page.locator(".editor-preview").wait_for()
    loaded = page.evaluate(
        """([external, local]) => Promise.all([external, local].map((url) => new Promise((done) => {
             const picture = document.createElement("img");
             picture.onload = () => done("loaded");
             picture.onerror = () => done("blocked");
             picture.src = url;
             document.querySelector(".editor-preview").appendChild(picture);
           })))""",
        [tracker.url("/direct.gif"), "/static/favicon.svg"],
    )
    settle(page)
    assert tracker.paths == []
    assert loaded == ["blocked", "loaded"]
    assert any("Content Security Policy" in line and "img-src" in line for line in console)


def test_the_admin_note_page_loads_no_external_image(editor, tracker):
    """The admin's note form previews through the same endpoint, under the same policy."""
    page, note, console = editor
    page.goto(f"/admin/notes/note/{note.pk}/change/")
    page.locator(".admin-preview .external-image-note").first.wait_for()
    settle(page)
    assert tracker.paths == []


def test_readers_pages_keep_loading_external_images(editor, tracker):
    """The published page keeps the author's image and today's policy: the browser loads it
    from the tracker (which shows the tracker would have heard from the editor too)."""
    page, note, console = editor

    def publish():
        user = User.objects.get(username="ada")
        fresh = type(note).objects.get(pk=note.pk)
        services.note_publish(note_id=fresh.pk, user=user, base_version=fresh.version)

    in_worker(publish)
    response = Client().get(f"/notes/{note.slug}/")
    assert "img-src 'self' data: https:" in response["Content-Security-Policy"]
    page.goto(f"/notes/{note.slug}/")
    page.wait_for_function(
        "() => [...document.images].some((image) => image.complete && image.naturalWidth === 1)"
    )
    assert tracker.paths == ["/saved.gif"]
    assert not page.locator(".external-image-note").count()
