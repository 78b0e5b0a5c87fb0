"""Images in the editor, in a real browser: the "Insert image" button, and images dropped on
the text, upload through the note's endpoint and insert the Markdown at the cursor; refusals
are shown and leave the text as it was.

Database work that renders runs in a worker thread: the main thread holds Playwright's event
loop, in which the math engine refuses to run.
"""

from __future__ import annotations

import base64
from urllib.parse import urlsplit

import pytest
from django.contrib.auth.models import User
from django.test import Client

from images.models import NoteImage
from images.services import NOT_AN_IMAGE, SVG_REFUSED
from notes import services
from tests.browser.editing import body_text, count_changes, fill_body, place_cursor
from tests.browser.worker import in_worker
from tests.images.samples import image_bytes

pytestmark = pytest.mark.browser

SVG = b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'
HTML = b"<html><script>alert(1)</script></html>"
# Drops a file on the editor's text the way a browser does, at the place of character `at`.
DROP = """([name, type, data, at]) => {
  const bytes = Uint8Array.from(atob(data), (c) => c.charCodeAt(0));
  const transfer = new DataTransfer();
  transfer.items.add(new File([bytes], name, { type }));
  const body = document.querySelector(".editor-source .cm-content");
  const view = SciDraftBody.of(document.querySelector("textarea[name=body]")).view;
  const place = view.coordsAtPos(at || 0);
  const options = {
    dataTransfer: transfer, bubbles: true, cancelable: true,
    clientX: place.left + 1, clientY: (place.top + place.bottom) / 2,
  };
  body.dispatchEvent(new DragEvent("drop", options));
}"""


@pytest.fixture
def editor_page(browser, transactional_db, live_server, settings, tmp_path):
    """The editor of a new note, opened by its author (logged in through a session cookie)."""
    settings.MEDIA_ROOT = tmp_path / "media"

    def setup():
        user = User.objects.create_superuser("ada", "ada@example.org", "correct horse battery")
        return user, services.note_create(user=user, title="Images")

    user, note = in_worker(setup)
    client = Client()
    client.force_login(user)
    context = browser.new_context(base_url=live_server.url)
    context.set_default_timeout(10_000)
    host = urlsplit(live_server.url).hostname
    cookie = client.cookies["sessionid"].value
    context.add_cookies([{"name": "sessionid", "value": cookie, "domain": host, "path": "/"}])
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(f"/write/{note.pk}/")
    yield page, note, errors
    context.close()


def body_value(page) -> str:
    return body_text(page)


def test_insert_image_uploads_and_inserts_the_markdown_at_the_cursor(editor_page):
    """Button → file chooser → the Markdown lands where the cursor was; the image is listed
    and loads on the editor page (its CSP allows img-src 'self')."""
    page, note, errors = editor_page
    fill_body(page, "Before after")
    place_cursor(page, 7)
    # The preview and autosave listen for the body's changes: the insertion must be one.
    count_changes(page)
    with page.expect_file_chooser() as chooser:
        page.get_by_role("button", name="Insert image").click()
    chooser.value.set_files(
        {"name": "Phase plot.png", "mimeType": "image/png", "buffer": image_bytes("PNG")}
    )
    page.wait_for_function(
        "() => SciDraftBody.of(document.querySelector('textarea[name=body]')).text()"
        ".includes('![Phase plot](')"
    )
    image = NoteImage.objects.get(note=note)
    assert body_value(page) == f"Before ![Phase plot]({image.url})after"
    assert page.locator(".image-upload-status").text_content() == "Image inserted."
    assert page.evaluate("window.changes") == 1
    assert page.locator(".image-upload-count").text_content() == "1"
    assert page.locator(".image-upload-list code").first.text_content() == image.markdown
    width = page.evaluate(
        """(url) => new Promise((done) => {
             const picture = new Image();
             picture.onload = () => done(picture.naturalWidth);
             picture.onerror = () => done(-1);
             picture.src = url;
           })""",
        image.url,
    )
    assert width == 3
    assert not errors


def test_a_refused_file_from_the_button_shows_why_and_changes_nothing(editor_page):
    page, note, errors = editor_page
    fill_body(page, "Text.")
    with page.expect_file_chooser() as chooser:
        page.get_by_role("button", name="Insert image").click()
    chooser.value.set_files({"name": "logo.svg", "mimeType": "image/svg+xml", "buffer": SVG})
    status = page.locator(".image-upload-status")
    status.filter(has_text="export as PNG").wait_for()
    assert status.text_content() == f"logo.svg: {SVG_REFUSED}"
    assert body_value(page) == "Text."
    assert not NoteImage.objects.exists()
    assert not errors


def test_a_dropped_image_uploads_through_the_same_endpoint(editor_page):
    """A file dropped on the text goes to the same endpoint (field `image`, reply
    `image_code`); its Markdown lands where it was dropped, the editor does not insert the
    file's bytes, and the panel lists it."""
    page, note, errors = editor_page
    fill_body(page, "Dropped: here")
    place_cursor(page, 0)  # the image goes where it is dropped, not to the cursor
    count_changes(page)
    data = base64.b64encode(image_bytes("WEBP", size=(4, 4))).decode()
    page.evaluate(DROP, ["dropped.webp", "image/webp", data, 9])
    page.wait_for_function(
        "() => SciDraftBody.of(document.querySelector('textarea[name=body]')).text()"
        ".includes('.webp)')"
    )
    image = NoteImage.objects.get(note=note)
    assert body_value(page) == f"Dropped: ![dropped]({image.url})here"
    assert image.content_type == "image/webp"
    assert page.evaluate("window.changes") == 1
    assert page.locator(".image-upload-count").text_content() == "1"
    assert not errors


def test_a_refused_drop_shows_the_message_and_leaves_the_text(editor_page):
    """A dropped file the server refuses shows the server's message and changes nothing."""
    page, note, errors = editor_page
    fill_body(page, "Keep this.")
    data = base64.b64encode(HTML).decode()
    page.evaluate(DROP, ["innocent.png", "image/png", data])
    page.locator(".image-upload-status").filter(has_text=NOT_AN_IMAGE[:20]).wait_for()
    assert page.locator(".image-upload-status").text_content() == f"innocent.png: {NOT_AN_IMAGE}"
    page.wait_for_timeout(200)
    assert body_value(page) == "Keep this."
    assert not NoteImage.objects.exists()
