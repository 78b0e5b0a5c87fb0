"""Driving the note editor (CodeMirror over the body's textarea) from browser tests."""

from __future__ import annotations

import re

from tests.browser.worker import in_worker
from tests.people import PASSWORD

# The bibliography the `editor_site` fixture gives ada; editor_note() makes it the note's.
EDITOR_BIB = (
    "@book{knuth, title={The Art of Computer Programming}, author={Knuth, Donald},"
    " year=1968}\n"
    "@article{lamport, title={Time, Clocks and the Ordering of Events},"
    " author={Lamport, Leslie}, year=1978}\n"
)

BODY = ".editor-source .cm-content"
_API = "SciDraftBody.of(document.querySelector('textarea[name=body]'))"


def fill_body(page, text: str) -> None:
    """Replace the body's text as typing would (one input, as Playwright's fill does)."""
    page.locator(BODY).fill(text)


def body_text(page) -> str:
    return page.evaluate(f"() => {_API}.text()")


def place_cursor(page, offset: int) -> None:
    """Put the cursor at `offset` in the body and focus it, and wait until the browser's own
    caret is there too: a key sent before then is inserted where the browser's caret was, and
    CodeMirror keeps its cursor in front of the inserted text."""
    page.evaluate(
        f"(at) => {{ const b = {_API};"
        " b.view.dispatch({selection: {anchor: at}}); b.focus(); }",
        offset,
    )
    page.wait_for_function(
        f"(at) => {{ const v = {_API}.view, s = document.getSelection();"
        " return v.hasFocus && s.rangeCount > 0 && v.contentDOM.contains(s.focusNode)"
        " && v.posAtDOM(s.focusNode, s.focusOffset) === at"
        " && v.state.selection.main.head === at; }",
        arg=offset,
    )


def set_body_text(page, text: str) -> None:
    """Replace the body's text in one step through the editor (what Restore does). A fill
    right after the page loads can land beside the text instead of over it under load."""
    page.evaluate(f"(text) => {_API}.setText(text)", text)


def wait_for_body_text(page, text: str) -> None:
    page.wait_for_function(f"(text) => {_API}.text() === text", arg=text)


def visible_line_end(page) -> int:
    """The offset of the end of the line in the middle of what the source shows: typing there
    scrolls nothing."""
    return page.evaluate(
        f"() => {{ const v = {_API}.view; const r = v.visibleRanges[0];"
        " return v.state.doc.lineAt(Math.floor((r.from + r.to) / 2)).to; }"
    )


def body_has_focus(page) -> bool:
    return page.evaluate(f"() => {_API}.hasFocus()")


def selected_text(page) -> str:
    return page.evaluate(
        f"() => {{ const v = {_API}.view; const s = v.state.selection.main;"
        " return v.state.sliceDoc(s.from, s.to); }"
    )


def count_changes(page) -> None:
    """window.changes counts the body's change events (what preview and autosave listen to)."""
    page.evaluate(f"() => {{ window.changes = 0; {_API}.onChange(() => window.changes++); }}")


def editor_note(title: str, body: str, *, publish: bool = False):
    """A note of ada's (the `editor_site` fixture's author) with `body` saved and EDITOR_BIB
    as its bibliography, published if asked; made in a worker thread (it renders)."""
    from django.contrib.auth.models import User

    from bibliography.models import BibFile
    from notes import services
    from notes.models import Note

    def create():
        user = User.objects.get(username="ada")
        note = services.note_create(user=user, title=title)
        note = services.note_save(
            note_id=note.pk, user=user, base_version=note.version, fields={"body": body}
        ).note
        services.note_bibliographies_set(
            note_id=note.pk, user=user, bibfile_ids=[BibFile.objects.get(name="bib/refs.bib").pk]
        )
        if publish:
            note = Note.objects.get(pk=note.pk)
            services.note_publish(note_id=note.pk, user=user, base_version=note.version)
        return Note.objects.get(pk=note.pk)

    return in_worker(create)


def signed_in(browser, base_url: str, username: str, **options):
    """A page in a fresh context, signed in as `username` (password PASSWORD), on the page
    the login leads to; `page.errors` collects script errors and CSP reports. Close the page's
    context when done."""
    context = browser.new_context(base_url=base_url, **options)
    context.set_default_timeout(15_000)
    page = context.new_page()
    page.errors = []
    page.on("pageerror", lambda error: page.errors.append(str(error)))
    page.on(
        "console",
        lambda message: (
            page.errors.append(message.text)
            if message.type == "error" or "Content Security Policy" in message.text
            else None
        ),
    )
    page.goto("/accounts/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(re.compile(r"/write/"))
    return page


def type_before_the_editor_loads(page, url: str, offset: int, text: str) -> None:
    """Open `url` with the editor's script held back, type `text` at `offset` of the plain
    textarea the page shows meanwhile, then let the script run."""
    held = []
    page.route("**/vendor/editor/editor.js", lambda route: held.append(route))
    page.goto(url, wait_until="commit")
    textarea = page.locator("textarea[name=body]")
    textarea.wait_for()
    textarea.evaluate("(t, at) => { t.focus(); t.setSelectionRange(at, at); }", offset)
    page.keyboard.type(text)
    while not held:  # the request reaches the handler while Playwright waits
        page.wait_for_timeout(50)
    held[0].continue_()
