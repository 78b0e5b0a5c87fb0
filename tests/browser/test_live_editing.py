"""Writing together in the browser: co-authors in separate Chromium contexts type
into one note at once over the note's shared document (/live/notes/<id>/, served with the pages
by daphne in the test process: tests/browser/asgi_server.py). Every character typed reaches
every editor and the merged save; collaborators see each other; an editor that goes offline
keeps typing and merges when back; a removed co-author's editor falls back to the HTTP autosave.
"""

from __future__ import annotations

import time

import pytest
from playwright.sync_api import expect

from tests.browser.editing import (
    BODY,
    body_text,
    editor_note,
    place_cursor,
    signed_in,
    type_before_the_editor_loads,
)
from tests.browser.worker import in_worker

pytestmark = pytest.mark.browser

SYNCED = "form.editor-form[data-live=synced]"
STORED = ".editor-live-status[data-state=stored]"


def _co_author(note, username: str):
    """A user `username` (an Author) named on `note`, so that they may edit it."""
    from notes.models import NoteAuthor
    from tests.browser.test_editor import _author

    def create():
        user = _author(username)
        NoteAuthor.objects.create(note_id=note.pk, author=user.author, position=9)
        return user

    return in_worker(create)


def _open(browser, base_url, username, note, **options):
    """`username`'s editor of `note`, once its shared document has synced."""
    page = signed_in(browser, base_url, username, **options)
    page.goto(f"/write/{note.pk}/")
    page.locator(BODY).wait_for()
    page.locator(SYNCED).wait_for()
    return page


def _in_database(work):
    """`work()` in a worker thread, tried again while the server writes: on the in-memory
    SQLite database (a shared cache) a query meeting a write fails at once as "locked"
    instead of waiting, as it would on PostgreSQL or an SQLite file (a failed write rolls
    back whole, so trying it again is safe)."""
    from django.db import OperationalError

    for _ in range(50):
        try:
            return in_worker(work)
        except OperationalError as error:
            if "locked" not in str(error):
                raise
            time.sleep(0.1)
    return in_worker(work)


def _saved_state(note) -> dict:
    from notes.models import Note
    from notes.services import working_state

    return _in_database(lambda: working_state(Note.objects.get(pk=note.pk)))


def _wait_for(check, what: str, seconds: float = 20):
    """Poll `check()` until it is truthy; its last value in the failure otherwise."""
    deadline = time.monotonic() + seconds
    value = None
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"waited {seconds} s for {what}; last: {value!r}")


def _converged(pages) -> str:
    """The body once every editor shows the same text and has it stored."""

    def same():
        texts = {body_text(page) for page in pages}
        stored = all(page.locator(STORED).count() for page in pages)
        return texts.pop() if len(texts) == 1 and stored else None

    return _wait_for(same, "the editors to show one stored text", seconds=45)


def _type_in_turns(pages_and_words, chunk: int = 3) -> None:
    """Each page types its words a few characters at a time, taking turns, so that every
    editor types before the others' keystrokes reach it."""
    longest = max(len(words) for _, words in pages_and_words)
    for start in range(0, longest, chunk):
        for page, words in pages_and_words:
            if start < len(words):
                page.keyboard.type(words[start : start + chunk])


def _close(*pages):
    for page in pages:
        page.context.close()


def test_two_co_authors_typing_at_once_see_and_save_every_character(browser, live_site):
    """Ada types at the end while Bob types at the start, in turns of a few keystrokes: both
    editors end with the same text holding every character each typed, the merged save
    writes that text as the note's revision, and Ada's Save afterwards does not conflict
    (her form follows the merged saves' version)."""
    note = editor_note("Together", "The middle stays.\n")
    _co_author(note, "bob")
    ada = _open(browser, live_site, "ada", note)
    bob = _open(browser, live_site, "bob", note)
    try:
        place_cursor(ada, len("The middle stays.\n"))
        place_cursor(bob, 0)
        ada_words = "Ada writes at the end, 0123456789."
        bob_words = "Bob writes first; ABCDEFGHIJ. "
        _type_in_turns([(ada, ada_words), (bob, bob_words)])

        text = _converged([ada, bob])
        assert text == bob_words + "The middle stays.\n" + ada_words

        _wait_for(lambda: _saved_state(note)["body"] == text, "the merged save", seconds=30)
        from notes.models import Note, NoteRevision

        version = _in_database(lambda: Note.objects.get(pk=note.pk).version)
        expect(ada.locator("input[name=base_version]")).to_have_value(str(version), timeout=10_000)
        latest = _in_database(
            lambda: NoteRevision.objects.filter(note_id=note.pk).order_by("-number").first()
        )
        assert latest.body == text
        expect(ada.locator(".editor-autosave-status")).to_contain_text("revision")

        ada.locator("button[name=action][value=save]").click()
        ada.wait_for_load_state()
        assert ada.locator(".editor-conflict").count() == 0
        assert _saved_state(note)["body"] == text
        assert not ada.errors and not bob.errors, (ada.errors, bob.errors)
    finally:
        _close(ada, bob)


def test_five_co_authors_typing_at_once_lose_nothing(browser, live_site):
    """Five co-authors each type on their own line at once: all five editors end with the same
    text holding every line typed whole, and the merged save has it."""
    people = ["ada", "bob", "cleo", "dan", "eve"]
    body = "".join(f"{name}:\n" for name in people)
    note = editor_note("Five", body)
    for name in people[1:]:
        _co_author(note, name)
    pages = [_open(browser, live_site, name, note) for name in people]
    try:
        for index, page in enumerate(pages):
            # The end of the person's own line: the lines before are "<name>:\n".
            place_cursor(page, sum(len(f"{other}:\n") for other in people[: index + 1]) - 1)
        words = {
            name: f" {name} was here {index}{index}{index}" for index, name in enumerate(people)
        }
        _type_in_turns(
            [(page, words[name]) for name, page in zip(people, pages, strict=True)], chunk=2
        )

        text = _converged(pages)
        assert text == "".join(f"{name}:{words[name]}\n" for name in people)
        _wait_for(lambda: _saved_state(note)["body"] == text, "the merged save", seconds=30)
        for page in pages:
            assert not page.errors, page.errors
    finally:
        _close(*pages)


def test_collaborators_see_each_other_in_the_header_and_as_cursors(browser, live_site):
    """With Bob in the note, Ada's header lists him (initials and name, a title saying he is
    editing) and her editor shows his cursor labelled with his name; the title he types
    reaches her title field; when he leaves, the list empties again."""
    note = editor_note("Presence", "First line.\nSecond line.\n")
    _co_author(note, "bob")
    ada = _open(browser, live_site, "ada", note)
    bob = _open(browser, live_site, "bob", note)
    try:
        bob_name = _in_database(lambda: _name_of("bob"))
        ada_name = _in_database(lambda: _name_of("ada"))
        ada_people = ada.locator(".editor-presence .editor-presence-person")
        expect(ada_people).to_have_count(1)
        expect(ada_people).to_contain_text(bob_name)
        assert ada_people.get_attribute("title") == f"{bob_name} is editing"
        expect(bob.locator(".editor-presence .editor-presence-person")).to_contain_text(ada_name)
        expect(ada.locator(".editor-live-alone")).to_be_hidden()

        place_cursor(bob, len("First line.\nSec"))
        caret = ada.locator(".cm-ySelectionCaret")
        expect(caret).to_have_count(1)
        expect(ada.locator(".cm-ySelectionInfo")).to_have_text(bob_name)
        assert caret.evaluate("(e) => getComputedStyle(e).backgroundColor") == _rgb(
            bob.locator("form.editor-form").get_attribute("data-live-color")
        )

        bob.locator("input[name=title]").click()
        bob.keyboard.press("End")
        bob.keyboard.type(" at last")
        expect(ada.locator("input[name=title]")).to_have_value("Presence at last")

        bob.context.close()
        expect(ada_people).to_have_count(0, timeout=40_000)
        expect(ada.locator(".editor-live-alone")).to_be_visible()
        assert not ada.errors, ada.errors
    finally:
        _close(ada)


def _name_of(username: str) -> str:
    from django.contrib.auth.models import User

    return User.objects.get(username=username).author.name


def _rgb(hex_colour: str) -> str:
    red, green, blue = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgb({red}, {green}, {blue})"


def test_an_editor_offline_keeps_typing_and_merges_on_reconnect(browser, live_site):
    """Bob goes offline (his socket closes with the network), types, and his page says his
    edits are kept; Ada types meanwhile. Back online, both editors and the merged save hold
    both texts."""
    note = editor_note("Offline", "Shared.\n")
    _co_author(note, "bob")
    ada = _open(browser, live_site, "ada", note)
    bob = _open(browser, live_site, "bob", note)
    try:
        bob.context.set_offline(True)
        expect(bob.locator(".editor-live-status")).to_have_attribute("data-state", "offline")
        expect(bob.locator(".editor-live-status")).to_contain_text("kept in this browser")
        place_cursor(bob, 0)
        bob.keyboard.type("Typed offline. ")
        place_cursor(ada, len("Shared.\n"))
        ada.keyboard.type("Typed online.")
        expect(ada.locator(STORED)).to_have_count(1)
        assert "Typed offline" not in body_text(ada)

        bob.context.set_offline(False)
        text = _converged([ada, bob])
        assert text == "Typed offline. Shared.\nTyped online."
        _wait_for(lambda: _saved_state(note)["body"] == text, "the merged save", seconds=30)
        assert not ada.errors, ada.errors
    finally:
        _close(ada, bob)


def test_typing_before_the_editor_loads_reaches_the_shared_text(browser, live_site):
    """Keys typed in the plain textarea while the editor's script is still on its way are
    carried onto the shared text when the editor joins (compared with the text the page was
    sent with, not with what the editor started from): Ada's editor and the save get them."""
    note = editor_note("Early bird", "Shared.")
    _co_author(note, "bob")
    ada = _open(browser, live_site, "ada", note)
    bob = signed_in(browser, live_site, "bob")
    try:
        type_before_the_editor_loads(bob, f"/write/{note.pk}/", 0, "Early. ")
        bob.locator(SYNCED).wait_for()
        bob.keyboard.type("On. ")
        text = _converged([ada, bob])
        assert text == "Early. On. Shared."
        _wait_for(lambda: _saved_state(note)["body"] == text, "the save", seconds=30)
    finally:
        _close(ada, bob)


def _type_offline_and_close(page, at: int, text: str) -> None:
    """The page's browser goes offline; `text` is typed at `at` and the tab closed once the
    browser's storage has it. The context stays offline."""
    page.context.set_offline(True)
    expect(page.locator(".editor-live-status")).to_have_attribute("data-state", "offline")
    place_cursor(page, at)
    page.keyboard.type(text)
    page.wait_for_timeout(500)  # IndexedDB writes each update in a transaction of its own
    page.close()


def test_edits_made_offline_survive_closing_the_tab(browser, live_site):
    """Bob types offline and closes the tab; opening the note again online (same browser
    profile), his edits come back from the browser's storage and merge into the note."""
    note = editor_note("Kept", "Shared.\n")
    _co_author(note, "bob")
    ada = _open(browser, live_site, "ada", note)
    bob = _open(browser, live_site, "bob", note)
    try:
        context = bob.context
        _type_offline_and_close(bob, len("Shared.\n"), "Kept in IndexedDB.")
        context.set_offline(False)

        again = context.new_page()
        again.errors = []
        again.goto(f"/write/{note.pk}/")
        again.locator(SYNCED).wait_for()
        text = _converged([ada, again])
        assert text == "Shared.\nKept in IndexedDB."
        _wait_for(lambda: _saved_state(note)["body"] == text, "the merged save", seconds=30)
    finally:
        _close(ada, bob)


def test_a_removed_co_author_falls_back_with_a_banner(browser, live_site):
    """When Ada removes Bob from the note's authors, Bob's editor is disconnected, stops
    reconnecting, and says why in a banner; his page no longer counts as live."""
    from notes import services
    from notes.models import Note

    note = editor_note("Removed", "Text.\n")
    _co_author(note, "bob")
    bob = _open(browser, live_site, "bob", note)
    try:

        def remove_bob():
            from django.contrib.auth.models import User

            current = Note.objects.get(pk=note.pk)
            services.note_save(
                note_id=note.pk,
                user=User.objects.get(username="ada"),
                base_version=current.version,
                fields={"authors": [User.objects.get(username="ada").author.handle]},
            )

        _in_database(remove_bob)
        banner = bob.locator(".editor-live-banner")
        expect(banner).to_be_visible(timeout=70_000)
        expect(banner).to_contain_text("Writing together stopped")
        expect(bob.locator("form.editor-form")).to_have_attribute("data-live", "fallback")
        expect(bob.locator(".editor-live-status")).to_have_attribute("data-state", "fallback")
        bob.wait_for_timeout(1500)  # no reconnection comes back to life
        expect(bob.locator("form.editor-form")).to_have_attribute("data-live", "fallback")
    finally:
        _close(bob)


@pytest.mark.parametrize(
    "look",
    [
        ("light", {"width": 1400, "height": 900}),
        ("dark", {"width": 1400, "height": 900}),
        ("phone", {"width": 390, "height": 844, "is_mobile": True}),
    ],
    ids=["light", "dark", "phone"],
)
def test_screenshots_with_two_collaborators(browser, live_site, screenshots, look):
    """Ada's editor with Bob in it, in the light and dark themes and at a phone's 390 px
    (test-artifacts/screenshots/live-editing-*.png): his name in the header and over his
    selection, and nothing wider than the phone."""
    name, viewport = look
    note = editor_note(
        "Writing together",
        "# Results\n\nThe estimate $\\hat\\theta$ converges.\n\nA second paragraph.\n",
    )
    _co_author(note, "bob")
    options = {"viewport": {"width": viewport["width"], "height": viewport["height"]}}
    if viewport.get("is_mobile"):
        options["is_mobile"] = True
    ada = signed_in(browser, live_site, "ada", **options)
    bob = _open(browser, live_site, "bob", note)
    try:
        theme = "dark" if name == "dark" else "light"
        ada.evaluate("(theme) => localStorage.setItem('pref-theme', theme)", theme)
        ada.goto(f"/write/{note.pk}/")
        ada.locator(SYNCED).wait_for()
        bob.evaluate(
            "() => { const v = SciDraftBody.of(document.querySelector('textarea[name=body]')).view;"
            " v.dispatch({selection: {anchor: 13, head: 40}}); v.focus(); }"
        )
        expect(ada.locator(".editor-presence-person")).to_have_count(1)
        expect(ada.locator(".cm-ySelectionInfo")).to_have_count(1)
        expect(ada.locator(STORED)).to_have_count(1)
        assert ada.evaluate("() => document.documentElement.dataset.theme") == theme
        if name == "phone":
            assert ada.evaluate("() => document.documentElement.scrollWidth") <= 390
        ada.screenshot(path=str(screenshots / f"live-editing-{name}.png"))
        assert not ada.errors, ada.errors
    finally:
        _close(ada, bob)


def test_without_the_socket_server_the_editor_stops_trying_and_autosaves(open_editor, settings):
    """A site whose /live/ path has no ASGI server behind it (here pytest-django's WSGI live
    server answers 404): after a few failed attempts the page stops connecting, says writing
    together is unavailable, and the HTTP autosave saves the typing as before."""
    from tests.browser.editing import fill_body

    settings.LIVE_EDITING = True
    note = editor_note("No socket", "Before.\n")
    page = open_editor(note)
    form = page.locator("form.editor-form")
    expect(form).to_have_attribute("data-live", "fallback", timeout=20_000)
    expect(page.locator(".editor-live-status")).to_contain_text("unavailable")
    attempts = []
    page.on("websocket", lambda socket: attempts.append(socket.url))
    fill_body(page, "After, over HTTP.\n")
    expect(page.locator(".editor-autosave-status")).to_contain_text("Autosaved", timeout=15_000)
    assert _saved_state(note)["body"] == "After, over HTTP.\n"
    assert attempts == []


def test_a_change_too_large_to_sync_falls_back_to_the_http_autosave(browser, live_site, settings):
    """A paste larger than one message may carry (LIVE_MESSAGE_MAX_BYTES, lowered here) is
    refused by the server (4413): the editor says why in a banner, stops reconnecting, and
    the HTTP autosave, silent while the socket saved, saves the text."""
    settings.LIVE_MESSAGE_MAX_BYTES = 4096
    note = editor_note("Large", "Small.\n")
    ada = _open(browser, live_site, "ada", note)
    try:
        pasted = "A long pasted paragraph of results. " * 200  # 7 200 bytes
        ada.evaluate(
            "(text) => SciDraftBody.of(document.querySelector('textarea[name=body]'))"
            ".insert(text, {at: 0})",
            pasted,
        )
        banner = ada.locator(".editor-live-banner")
        expect(banner).to_be_visible()
        expect(banner).to_contain_text("Writing together stopped")
        expect(ada.locator("form.editor-form")).to_have_attribute("data-live", "fallback")
        expect(ada.locator(".editor-autosave-status")).to_contain_text("Autosaved", timeout=15_000)
        assert _saved_state(note)["body"] == pasted + "Small.\n"
    finally:
        _close(ada)


def test_a_form_whose_other_fields_were_saved_elsewhere_keeps_its_version(browser, live_site):
    """Someone saves the note's summary while Ada has the editor open; her typing is then
    saved merged, but the `saved` message says her form's other fields are older than that
    save: her form keeps its version, a banner asks her to reload, and her Save shows the
    conflict page instead of posting the old summary over the new one."""
    from django.contrib.auth.models import User

    from notes import services
    from notes.models import Note

    note = editor_note("Fields", "Text.\n")
    ada = _open(browser, live_site, "ada", note)
    try:
        loaded_version = ada.locator("input[name=base_version]").input_value()

        def save_summary_elsewhere():
            services.note_save(
                note_id=note.pk,
                user=User.objects.get(username="ada"),
                base_version=Note.objects.get(pk=note.pk).version,
                fields={"summary": "Changed in another tab."},
            )

        _in_database(save_summary_elsewhere)
        place_cursor(ada, len("Text."))
        ada.keyboard.type(" More.")
        expect(ada.locator(".editor-live-banner")).to_contain_text(
            "Reload the page", timeout=20_000
        )
        _wait_for(
            lambda: _saved_state(note)["body"] == "Text. More.\n", "the merged save", seconds=30
        )
        assert ada.locator("input[name=base_version]").input_value() == loaded_version

        ada.locator("button[name=action][value=save]").click()
        expect(ada.locator(".editor-conflict")).to_be_visible()
        assert _saved_state(note)["summary"] == "Changed in another tab."
    finally:
        _close(ada)


def test_undo_takes_back_only_ones_own_typing(browser, live_site):
    """Ada types, then Bob types after her; Ada's Ctrl+Z removes her words, and never his,
    in both editors."""
    note = editor_note("Undo", "Start.\n")
    _co_author(note, "bob")
    ada = _open(browser, live_site, "ada", note)
    bob = _open(browser, live_site, "bob", note)
    try:
        place_cursor(ada, len("Start."))
        ada.keyboard.type(" Ada's words.")
        expect(bob.locator(BODY)).to_contain_text("Ada's words.")
        place_cursor(bob, len("Start. Ada's words."))
        bob.keyboard.type(" Bob's words.")
        expect(ada.locator(BODY)).to_contain_text("Bob's words.")

        ada.locator(BODY).focus()
        # Typing is one undo step per pause of half a second: a slow machine may make more.
        for _ in range(len(" Ada's words.")):
            ada.keyboard.press("Control+z")
            if "Ada" not in body_text(ada):
                break
        text = _converged([ada, bob])
        assert text == "Start. Bob's words.\n"
    finally:
        _close(ada, bob)


def _hostile_coauthor(live_site: str, note, cookie: str, stop) -> None:
    """A co-author's own client (not the editor page) announcing a CSS payload as its colour
    and markup as its name, with a caret at the end of the body; connected until `stop`."""
    import asyncio
    import json

    from collaboration.protocol import Presence, awareness_message
    from reliability.live_editor import WebSocket

    end_of_body = {"type": None, "tname": "body", "item": None, "assoc": 0}
    state = {
        "user": {
            "name": '<img src=x onerror="document.title=1">Bob',
            "color": "red;position:fixed;inset:0;z-index:2147483647",
            "colorLight": "red;position:fixed;inset:0",
            "id": "bob",
        },
        "cursor": {"anchor": end_of_body, "head": end_of_body},
    }
    url = live_site.replace("http://", "ws://") + f"/live/notes/{note.pk}/"

    async def connected():
        socket = await WebSocket.open(url, {"Origin": live_site, "Cookie": cookie})
        clock = 0
        while not stop.is_set():  # renewed, as a browser's awareness is
            clock += 1
            socket.send(awareness_message([Presence(4242, clock, json.dumps(state))]))
            await asyncio.sleep(0.5)
        socket.close()

    asyncio.run(connected())


def test_a_coauthors_colour_and_name_cannot_style_or_mark_up_the_editor(browser, live_site):
    """A co-author whose presence names `red;position:fixed;inset:0` as its colour and an
    <img onerror> as its name: Ada's editor draws their caret in the colour the site assigned
    them, labelled with their account's name as text, and nothing covers her editor."""
    import threading

    from collaboration.presence import person
    from tests.collaboration.editors import session_cookie

    note = editor_note("Presence payload", "First line.\n")
    bob = _co_author(note, "bob")
    cookie = in_worker(lambda: session_cookie(bob))
    bob_name = _in_database(lambda: _name_of("bob"))
    bob_colour = in_worker(lambda: person(bob).color)
    ada = _open(browser, live_site, "ada", note)
    stop = threading.Event()
    hostile = threading.Thread(target=_hostile_coauthor, args=(live_site, note, cookie, stop))
    hostile.start()
    try:
        caret = ada.locator(".cm-ySelectionCaret")
        expect(caret).to_have_count(1)
        expect(ada.locator(".cm-ySelectionInfo")).to_have_text(bob_name)
        assert caret.evaluate("(e) => getComputedStyle(e).backgroundColor") == _rgb(bob_colour)
        assert caret.evaluate("(e) => getComputedStyle(e).position") != "fixed"
        styled = ada.locator("[style*='fixed'], img[src=x]")  # CodeMirror's own imgs have none
        expect(styled).to_have_count(0)
        expect(ada.locator(".editor-presence .editor-presence-person")).to_contain_text(bob_name)
        assert ada.title() != "1" and not ada.errors, ada.errors
    finally:
        stop.set()
        hostile.join(10)
        _close(ada)


def test_edits_kept_offline_before_a_reset_do_not_come_back_as_a_second_copy(browser, live_site):
    """Bob types offline and closes the tab; an Editor then resets the note's live document.
    Opening the note again, what the browser kept of the old document is not merged into the
    new one (it would add a second copy of the text): the editor shows the working copy and
    says why."""
    note = editor_note("Reset", "Shared.\n")
    _co_author(note, "bob")
    bob = _open(browser, live_site, "bob", note)
    context = bob.context
    try:
        _type_offline_and_close(bob, len("Shared.\n"), "Typed before the reset.")

        def reset():
            from django.contrib.auth.models import User

            from collaboration import recovery

            editor = User.objects.create_superuser("eve", "eve@example.org", "not-used")
            recovery.live_document_reset(note_id=note.pk, user=editor)

        _in_database(reset)
        context.set_offline(False)
        again = context.new_page()
        again.errors = []
        again.goto(f"/write/{note.pk}/")
        again.locator(SYNCED).wait_for()
        expect(again.locator(".editor-live-banner")).to_contain_text("reset")
        again.wait_for_timeout(1000)  # an old store's merge would have arrived by now
        assert body_text(again) == "Shared.\n"
        assert _saved_state(note)["body"] == "Shared.\n"
    finally:
        context.close()
